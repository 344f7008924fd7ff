// Package kit is the plumbing the PackageVariant and PackageVariantSet
// reconcilers share, so that both behave alike:
//
//   - the error model (errors.go): steps return a Stalling error (only the
//     user can fix it: reported, logged, not retried), a Transient one
//     (retried with backoff), or a Partial outcome; steps set no conditions;
//   - Summarize (summarize.go): one place that turns a step's outcome into
//     Ready, Stalled and Reconciling and into what Reconcile returns;
//   - PatchStatus (status.go): patch the status subresource only when it
//     changed, so a steady resync writes nothing;
//   - ListNodes (list.go): list a kind as YAML nodes, a kind the cluster does
//     not serve reported as ErrNotServed the same way for both;
//   - the clock and condition setter (conditions.go), the on-demand watch
//     helper (watch.go), and a nil-safe event recorder (events.go).
//
// The reasons themselves, with what a user should do about each, are
// documented once, in orchestrator/api/v1alpha1 (reasons.go).
package kit
