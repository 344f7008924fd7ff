// Package kit is the plumbing the PackageVariant and PackageVariantSet
// reconcilers share, so that both behave alike:
//
//   - the error model (errors.go): steps return a Stalling error (only the
//     user can fix it: reported, logged, not retried), a Transient one
//     (retried with backoff), a Partial outcome, or Waiting (nothing decided
//     yet: the cache is behind; conditions untouched, back after a delay);
//     steps set no conditions;
//   - Summarize (summarize.go): one place that turns a step's outcome into
//     Ready, Stalled and Reconciling and into what Reconcile returns; each
//     reconciler has one deferred finish step around it (summarize, Event,
//     observedGeneration only when Result.Observed: success, stall or a
//     partial outcome not retried, then patch and metrics); Readiness reads
//     the conditions back for status, events and metrics;
//   - Changed (predicate.go): the watch predicate that keeps a reconciler's
//     own status patches from bringing another reconcile;
//   - PatchStatus (status.go): patch the status subresource only when it
//     changed, so a steady resync writes nothing, and lose nothing: a patch
//     that conflicts is rebased on the object as it is (Rebase,
//     reapply.go), a bounded number of times;
//   - ListNodes (list.go): list a kind as YAML nodes, a kind the cluster does
//     not serve reported as ErrNotServed the same way for both;
//   - the clock and condition setter (conditions.go), the on-demand watch
//     helper (watch.go), and a nil-safe event recorder (events.go).
//
// The reasons themselves, with what a user should do about each, are
// documented once, in orchestrator/api/v1alpha1 (reasons.go).
package kit
