// Package packagevariantset is the PackageVariantSet reconciler. It computes
// a set's children with pvs-expand's library (the function's own code) from
// the Repositories and selected objects in the set's namespace and the
// upstream package's revisions, then creates, updates in place and deletes
// PackageVariants to match.
//
// Where it differs from Porch v1.5.3 (docs/behavior.md):
//   - partial success: a target entry that cannot be computed is reported in
//     status.targetFailures (Ready=False PartiallyReconciled) and blocks no
//     other child;
//   - no-removal-on-partial: a selector whose kind cannot be listed is a failure, never "zero
//     targets": no child is deleted unless every target was computed;
//   - stall-or-retry: transient errors are retried; an invalid set or a missing upstream
//     stalls and waits for a change (kit's error model; every reason is in
//     orchestrator/api/v1alpha1/reasons.go);
//   - every child written is an Event on the set (ChildCreated, ChildUpdated,
//     ChildRemoved), and each new stall a Warning;
//   - children are updated only when their spec differs, so a steady set
//     writes nothing.
//
// A set writes everything its children obey into their specs: the pins
// and approval of its staged rollout, the rollout's health check, and its
// policies (spec.policy, from its annotations: rule policy-flows-down); a
// child reads nothing of its set but its suspension. A staged rollout is
// one implementation over units (units.go): a plain set's unit is a
// child, a grouped set's a target with its members' children; the plan,
// the pins, a wave's approval, the hold of a unit's members, the count of
// an undo and the order a deleted set's children go in are each said
// once, over units.
package packagevariantset

// The permissions the reconciler needs (config/rbac, make generate).
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=packagevariantsets,verbs=get;list;watch;update;patch
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=packagevariantsets/status,verbs=get;update;patch
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=packagevariants,verbs=get;list;watch;create;update;patch;delete
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=repositories,verbs=get;list;watch
//+kubebuilder:rbac:groups=porch.kpt.dev,resources=packagerevisions,verbs=get;list;watch
//+kubebuilder:rbac:groups="",resources=events,verbs=create;patch
