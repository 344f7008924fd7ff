// Package scale measures the controller at thousands of variants (make
// bench-scale, docs/scale.md) against a Porch stand-in.
//
// What is real: the two reconcilers, as reconcilers.New builds them for the
// controller, with --approve-by-policy and --workers W; a work queue as
// controller-runtime's (client-go's rate-limited queue: one worker per key,
// its backoff, RequeueAfter honoured); the watches the manager sets up, as
// writes to the cluster (a variant written by its set is queued, a
// variant's every write queues its set); the embedded cluster pvctl uses,
// with its API server's checks.
//
// What stands in: Porch. The in-memory store, its upgrades made as Porch
// makes them, answering every call after the real stack's measured median
// (Latencies, jittered by a quarter), renders (a create, a resources update,
// an approval) 20 at a time as Porch runs them, listings served at once and
// not counted as requests (the Porch store serves them from the controller's
// watch cache of PackageRevisions, indexed by package and by owner). What it
// does not model: the informer's own list and watch of PackageRevisions (one
// paged list per namespace at start; docs/scale.md gives the real stack's
// listing latency), the API server's CPU, Events.
//
// The CPU and memory figures are the whole test process's: the controller,
// the embedded cluster (which holds what the controller's informer cache
// would) and the stand-in (its files). They bound the controller's from
// above.
package scale
