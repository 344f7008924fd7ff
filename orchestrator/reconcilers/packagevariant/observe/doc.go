// Package observe is the PackageVariant reconciler's observation of what a
// variant has published: its drift (rules published-drift, content-drift)
// and its health (rule health-gated-rollouts), written into the variant's
// status (status.downstreamTargets[].drift and .health, the condition
// PublishedDrift) and nothing else: it writes nothing to Porch (a drift
// policy's draft is the reconciler's, which asks DriftOf what drifted).
//
// The drift check lists the downstream package once (Porch: the informer
// cache's index) and reads content only when the branch moved since the
// last comparison, which the reconciler's memory keeps (Memory): a steady
// resync reads and writes nothing. The health check reads one object per
// Published target, from the management cluster (watched) or from the
// cluster the check names (Clusters, polled), with the controller's
// rights, so its kind must be a readable kind.
package observe
