// Package kptfile reads and edits a package's root Kptfile in place: the
// pipeline lists, info.readinessGates and status.conditions. Edits touch only
// the fields they are about; every other field keeps its position, value and
// comments, so a Kptfile written back differs from the input only where a
// mutation meant it to.
package kptfile
