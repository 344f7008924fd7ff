// Package krm holds the KRM plumbing every pvkit mutation shares: the
// ResourceList codec, small helpers to read and edit kyaml nodes without
// losing comments or field order, kpt-style results, and the conversion
// between a package's files and ResourceList items.
//
// Everything here is pure: bytes and maps in, bytes, maps and nodes out. The
// function binaries (functions/) and the orchestrator (orchestrator/) both go
// through it, so a package is read and written the same way everywhere.
//
// Decisions:
//   - kyaml's RNode (sigs.k8s.io/kustomize/kyaml/yaml) is the node API of
//     pvkit: new code reads and edits packages through it. This package
//     adds only what kyaml lacks: setters that keep comments and field
//     order on raw nodes, YAML 1.1-safe scalars (StringNode quotes "yes",
//     "on"), the alias bounds (aliases.go), and the files <-> items
//     conversion with its path checks. The kpt SDK's KubeObject is used
//     only where the SDK's Result type is (results.go); the raw-node
//     helpers still carry more than that.
//   - Items are kyaml *yaml.RNode values edited in place. A ResourceList is
//     decoded once and encoded once; nothing is copied in between, so the
//     cost of a run is the cost of kyaml's own parse and serialise plus the
//     mutation (see docs/performance.md).
//   - Item order is kept as received (kpt restores files from the path and
//     index annotations, which are kept untouched).
//   - Results use the kpt function SDK's Result type, so they serialise in
//     the format kpt and Porch print.
package krm
