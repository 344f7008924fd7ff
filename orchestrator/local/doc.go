// Package local is pvctl's local runtime: `pvctl run` (Run) reconciles
// PackageVariants and PackageVariantSets with the controller's own
// reconcilers against local git repositories, once, and returns a Report;
// `plan` is the same on a scratch copy; PlanCluster is `plan --kubeconfig`,
// the same reconcile on a cluster's namespace read into the embedded
// cluster and an in-memory Porch, writing nothing (clusterplan.go). It holds the embedded cluster (an
// in-memory API server), the reading of the input files, the journal of
// repository changes, the pruning rules and the Event recorder; the state
// file is local/state, the commands are orchestrator/cli.
//
// Decisions:
//   - The repositories are bare git repositories in one directory (--repos),
//     laid out as Porch lays out a repository (store/gitstore): drafts/
//     branches, <package>/v<N> tags on main, kpt: commit annotations. Any git
//     client can read them; `git clone --bare` of a Porch repository is one.
//   - The cluster is embedded: controller-runtime's in-memory client, plus
//     what an API server adds (UIDs, generations). It is kept between runs in
//     REPOS/pvctl-state.yaml (local/state), so that a variant removed from the
//     files is deleted as in a cluster, its deletionPolicy applied, and a
//     set's children are the set's to remove.
//   - UIDs are derived from kind, namespace and name: a variant owns the
//     same revisions on every run, even with the state file deleted.
//   - The files are the desired state, like `kubectl apply --prune`:
//     PackageVariants, PackageVariantSets, Repositories (labels for
//     selectors; a deployment repository whose bare repository is missing is
//     created empty and listed as created; any other missing one is an input
//     error naming the path looked for), and any other object
//     is an injection or selection candidate. A repository no Repository
//     object describes is served with no labels. An unknown kind in Porch's
//     groups (a typo of PackageVariant) is an input error: it may not turn
//     into "the variants are gone".
//   - Removing is explicit. Without --prune a run removes nothing: a variant
//     or set gone from the files, a child its set no longer selects, an owned
//     draft of a previous downstream, a published revision to propose for
//     deletion are all held back, listed under "Not removed", and the run
//     exits 3; everything else is applied. --prune removes them, except that
//     a set that would lose more than one and more than half of its children
//     stalls with MassDeletion (as in the controller); --prune=all lifts that
//     guard too (rules: explicit-deletion, mass-deletion-guard).
//   - A run repeats reconcile passes (sets, then variants) until a pass
//     changes nothing, so one run settles a set's children too.
//   - Input is checked before anything is written, strictly: an unknown
//     field is an error (kubectl's strict validation), and every message
//     names file, object and field.
//   - One pvctl writes to a repositories directory at a time; a ref moved by
//     another writer since the run read it is a conflict, not overwritten.
package local
