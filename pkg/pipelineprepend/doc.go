// Package pipelineprepend is the pipeline-prepend mutation: it puts an
// owner's functions at the front of the Kptfile pipeline and keeps them there,
// exactly once, as the owner's list changes.
//
// For `pipeline.mutators` and `pipeline.validators` independently:
//   - entries this owner added before are dropped, recognised by their name
//     `PackageVariant.<owner>.<function name>.<index>`;
//   - the owner's functions are prepended under those names (index counts
//     within its own list; an unnamed function gives `PackageVariant.<owner>..<index>`);
//   - other owners' entries and the user's own entries follow, unchanged and
//     with their comments;
//   - an empty list is removed, and so is a pipeline left empty.
//
// Rule dotted-owners: the reference recognises its entries by splitting the name on "."
// into exactly four parts, so an owner or function name with a dot is never
// recognised and every run adds another copy. pvkit recognises an entry by the
// exact prefix `PackageVariant.<owner>.` and a final `.<index>`, so dots
// anywhere are fine. What names alone cannot tell apart are two owners whose
// names extend each other with a dot (`a` and `a.b`) prepending into the same
// package: the design doc's rule applies ("avoid conflicts in resource names").
//
// Decisions where the reference is silent:
//   - each config function must name exactly one of `image` or `exec`, and at
//     most one of `configMap` and `configPath` (kpt would reject the Kptfile
//     later otherwise);
//   - when the owner's entries are already in place, the Kptfile is not
//     touched at all, so a second run changes nothing, not even formatting;
//   - a package without a Kptfile is an error only when there is something to
//     prepend.
package pipelineprepend
