// Package cli is pvctl's command line: the cobra verbs (run, plan, get,
// diff, pull, push, publish, status, events, porchctl's lifecycle verbs,
// suspend, resume, reconcile, wait, completion), their flags, exit codes and output (one contract, output.go:
// -o table|wide|name|json|yaml, -l, -w; colour; the live progress line). The work is elsewhere: orchestrator/local
// runs the reconcile on local git repositories, local/state is the state
// file `status` and `events` read, and --kubeconfig reads a cluster.
//
// Decisions:
//   - Exit codes: 0 every set and variant Ready (or the command done); 1
//     some are not yet, or a command failed; 2 usage or input errors,
//     nothing written; 3 plan would change something, or run held a
//     removal back; 4 something is stalled (wins over 1 and 3).
//   - `run` without -f is a usage error, and --prune is explicit (local's
//     rules); `plan` is `run --dry-run`.
//   - `status` and `events` read; they reconcile nothing. Locally they read
//     the state file (the reconcilers record the same Events in pvctl run as
//     in the controller; the state keeps them across runs, repeats
//     aggregated, the newest 1,000, an object's events going with it). With
//     --kubeconfig or --context they read a namespace of a cluster instead
//     (variants, sets, PackageRevisions, core/v1 Events).
//   - Verbs given several names act on each and report each, as porchctl
//     and kubectl do; repeating what is already done is a no-op with a
//     message.
//   - One output contract on every verb that lists or reports: json and
//     yaml are a List (apiVersion v1), empty rather than absent; -o name
//     prints kind/name; a table cuts MESSAGE at 100 runes and -o wide
//     prints it whole; -l matches metadata.labels as -o yaml shows them.
//     -w polls (the state file, or the cluster) once a second and prints
//     an object again only when it changed (its JSON differs): polling
//     needs no watch permission and behaves the same on both backends.
//   - One stream per change: a run's progress goes to stderr only on a
//     terminal, where it is a live line; off a terminal the Changes list
//     on stdout is the only record, so a log holds each change once.
//   - The operator's controls (control.go) act on the same annotations in
//     a cluster and locally, read by the same reconcilers:
//     pvkit.dev/suspend ("true": the object writes nothing to Porch or to
//     a child; a set's holds its children; deletion is not suspended) and
//     pvkit.dev/reconcile-requested-at (a reconcile now; the controller
//     records the value in status.lastHandledReconcileAt, which resume and
//     reconcile wait for, as flux does). Locally, suspend and resume record
//     the object in the state file (its `suspended` list) and every run
//     gives it the annotation, unless its file sets pvkit.dev/suspend (the
//     file wins; pvctl resume says so); a local reconcile is a run, since
//     every run reconciles everything. wait polls like -w and needs the
//     condition of the object's current generation, as kstatus does.
//   - plan --kubeconfig (local.PlanCluster) reads the namespace into the
//     embedded cluster and an in-memory Porch (revision files read lazily)
//     and applies the files as kubectl apply would: the cluster's other
//     sets and variants stay. It runs the controller's reconcilers with
//     the controller's defaults (approval by policy only with
//     --approve-by-policy) and writes nothing; --diff, --prune, --sync and
//     --state are the local plan's and refused with a cluster.
//   - Colour only where it helps a glance (the READY column, Warning
//     events), on a terminal, unless NO_COLOR or --color=never; a painted
//     column has its header painted too, so tabwriter keeps it aligned.
package cli
