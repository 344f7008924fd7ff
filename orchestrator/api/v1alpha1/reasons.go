package v1alpha1

// Every condition reason the two controllers set, for PackageVariants and
// PackageVariantSets alike, with what it means and what to do. Ready and
// Stalled are Porch's condition types; Reconciling is added (True while a
// transient failure is retried). A stalling reason sets Stalled=True and is
// not retried: the watches bring the next reconcile when the spec, the
// package or the cluster changes. A transient one sets Ready=False and
// Reconciling=True and is retried with backoff. orchestrator/README.md has
// the same list as a table.
const (
	// ReasonNoErrors: Ready=True of a PackageVariant (Porch's): the downstream
	// is up to date.
	ReasonNoErrors = "NoErrors"
	// ReasonReconciled: Ready=True of a PackageVariantSet: every target has its
	// PackageVariant.
	ReasonReconciled = "Reconciled"
	// ReasonValid: Stalled=False (Porch's): nothing waits for the user.
	ReasonValid = "Valid"

	// ReasonValidationError (stalling): the spec is invalid; the message lists
	// every problem with its field. Fix the spec. A PackageVariant's Ready is
	// then False `Error` "invalid packagevariant object", as in Porch.
	ReasonValidationError = "ValidationError"
	// ReasonUpstreamNotFound (stalling): no revision of the upstream package
	// matches spec.upstream. Publish it, or fix repo, package, revision or
	// workspaceName; a new upstream revision reconciles again by itself.
	ReasonUpstreamNotFound = "UpstreamNotFound"
	// ReasonStaleDraft (stalling): an owned draft was cloned from another
	// upstream revision than the one wanted, and the variant or its set asks
	// for Porch's behaviour (pvkit.dev/draft-upgrade: stall; rule:
	// draft-upgrade) instead of the in-place upgrade. Approve the draft (then
	// pvkit upgrades the published revision) or delete it (pvkit clones
	// afresh).
	ReasonStaleDraft = "StaleDraft"
	// ReasonMutationFailed (stalling): the package cannot be mutated as the
	// variant asks (a file that does not parse, an invalid injection point, a
	// bad package-context.yaml); the message names file and field. Fix the
	// upstream package or the variant.
	ReasonMutationFailed = "MutationFailed"
	// ReasonLockedUpstreamNotFound (stalling): the published downstream was
	// made from an upstream revision that no longer exists, so there is
	// nothing to upgrade from. Restore that revision, or delete the
	// downstream so pvkit clones afresh.
	ReasonLockedUpstreamNotFound = "LockedUpstreamNotFound"
	// ReasonUpgradeConflict (stalling): an owned draft whose upstream moved
	// cannot be upgraded in place: a field was changed in the draft (a
	// person's edit) and in the upstream, to different values; the message
	// names file, object and field, and nothing was written. Make the draft
	// agree with the new upstream (or undo the edit), or approve or delete
	// the draft.
	ReasonUpgradeConflict = "UpgradeConflict"

	// ReasonKindNotAllowed (stalling): the variant's package has an injection
	// point, or an injector or objectSelector names a kind, that is not among
	// the kinds the operator lets pvkit read (--readable-kinds; default
	// ConfigMap). pvkit reads objects with its own
	// rights, so the list keeps a user from copying, say, a Secret into git.
	// Use an allowed kind, or ask the operator to allow this one.
	ReasonKindNotAllowed = "KindNotAllowed"

	// ReasonMassDeletion (stalling): a PackageVariantSet's reconcile would
	// remove more than one and more than half of its PackageVariants (a
	// selector typo, a deleted label); it removed none and applied the rest.
	// Fix the set, or, if the removal is intended, annotate the set
	// pvkit.dev/allow-mass-deletion=true (pvctl run: --prune=all).
	ReasonMassDeletion = "MassDeletion"

	// ReasonTooManyChildren (stalling): a PackageVariantSet's targets ask
	// for more PackageVariants than one set may have (the operator's
	// --max-children-per-set, default 5000); none was computed, created or
	// removed. Split the set, or ask the operator to raise the bound.
	ReasonTooManyChildren = "TooManyChildren"

	// ReasonRemovalHeld (neither stalling nor retried): a removal the host
	// holds back (pvctl run without --prune: a child a set no longer wants,
	// an owned draft of a previous downstream). Everything else was done;
	// the removal waits for the host's permission (pvctl run --prune). The
	// controller removes at once and never reports it.
	ReasonRemovalHeld = "RemovalHeld"

	// ReasonRepositoryNotFound (transient): the variant's downstream
	// repository does not exist (no Repository of that name in its
	// namespace). Retried with backoff, so registering the repository heals
	// it; fix `spec.downstream.repo` if it is a typo.
	ReasonRepositoryNotFound = "RepositoryNotFound"

	// ReasonRenderConflict (stalling): Porch's render of the package's own
	// Kptfile pipeline undid the variant's mutation (the package's functions
	// set what the variant sets otherwise), so every write would be undone
	// again. pvkit writes once, then waits for a change of the variant, its
	// upstream, its injected objects or the package. Make them agree.
	ReasonRenderConflict = "RenderConflict"

	// ReasonError (transient): Porch or the apiserver failed (Porch's reason);
	// the message is their error. Retried; check Porch if it persists.
	ReasonError = "Error"
	// ReasonUnexpectedError (transient): the PackageVariantSet counterpart of
	// ReasonError.
	ReasonUnexpectedError = "UnexpectedError"
	// ReasonRenderFailed (transient): Porch refused a draft update because the
	// package's Kptfile pipeline failed to render; status.downstreamTargets
	// has Porch's render status. Retried (the function runner may have been
	// down); fix the pipeline if the render itself fails.
	ReasonRenderFailed = "RenderFailed"
	// ReasonInterrupted (transient): the reconcile was stopped before it
	// finished (pvctl run's Ctrl-C, the controller shutting down): what it
	// did is kept, the next reconcile goes on. Not a failure of the variant.
	ReasonInterrupted = "Interrupted"
	// ReasonDeleting (transient): the PackageVariant is being deleted and some
	// owned revisions could not be deleted, proposed for deletion or orphaned
	// yet; the finalizer stays until they are (rule: finalizer-waits). Retried.
	ReasonDeleting = "Deleting"

	// ReasonPartiallyReconciled: Ready=False of a PackageVariantSet some of
	// whose target entries could not be computed (status.targetFailures says
	// which and why); every other child is reconciled and no child was
	// removed (rule: no-removal-on-partial). Retried only when a failure may heal by itself (a kind
	// that could not be listed); otherwise fix the entries named.
	ReasonPartiallyReconciled = "PartiallyReconciled"

	// ReasonProgressingWithRetry: Reconciling=True after a transient
	// failure; the reconcile is retried with backoff.
	ReasonProgressingWithRetry = "ProgressingWithRetry"
)

// The conditions pvkit adds beside Porch's Ready and Stalled, each with its
// reasons. Like the reasons above, every one is defined here once.
const (
	// ConditionSuspended is True while the set or variant is suspended
	// (pvkit.dev/suspend); absent otherwise. The other conditions stay as
	// the last reconcile left them.
	ConditionSuspended = "Suspended"
	// ReasonSuspended is Suspended=True's reason.
	ReasonSuspended = "Suspended"

	// ConditionApprovalWaiting is True while approval by policy waits on a
	// finished draft (its delay runs, or a rule refuses it), with one of
	// the three reasons below; absent otherwise.
	ConditionApprovalWaiting = "ApprovalWaiting"
	// ReasonApprovalRefused: a rule refuses the draft (a person edited it,
	// a readiness gate is not True); it waits for a person.
	ReasonApprovalRefused = "ApprovalRefused"
	// ReasonApprovalPending: the draft's approval.nephio.org/delay runs.
	ReasonApprovalPending = "ApprovalPending"
	// ReasonApprovalWaiting: the draft waits for what the policy names
	// (another revision published first, say).
	ReasonApprovalWaiting = "ApprovalWaiting"

	// Reasons of a downstream target's Blocked (DownstreamTarget.Blocked),
	// what keeps a revision from being published:
	//
	// ReasonGateClosed: a readiness gate of the draft's Kptfile other
	// than the mutation's is not True (a required injection point left
	// empty, a person's review): it cannot be approved without a change.
	ReasonGateClosed = "GateClosed"
	// ReasonRejected: a person rejected the draft (Proposed, then Draft
	// again; rule: rejected-drafts).
	ReasonRejected = "Rejected"
	// ReasonAwaitingApproval: the draft is finished and waits to be
	// approved, by a person or by its approval policy (the message says
	// which, and what the policy waits for).
	ReasonAwaitingApproval = "AwaitingApproval"

	// Reasons of a published target's health (DownstreamTarget.Health;
	// rule: health-gated-rollouts), what the health check read:
	//
	// ReasonHealthy: the object's condition holds (status True).
	ReasonHealthy = "Healthy"
	// ReasonHealthFailed: the object was read and the check's failed
	// expression holds (status False): the cluster reports the revision
	// failed, and a staged rollout fails the child at once.
	ReasonHealthFailed = "HealthFailed"
	// ReasonNotHealthy: the object was read and its condition is false
	// (status False): the cluster has not applied the revision, or reports
	// it unhealthy.
	ReasonNotHealthy = "NotHealthy"
	// ReasonObjectNotFound: no such object in the variant's namespace, or
	// its kind is not served (status Unknown).
	ReasonObjectNotFound = "ObjectNotFound"
	// ReasonCheckFailed: the name or the condition could not be evaluated
	// (a field the object lacks, a cost limit; status Unknown); the message
	// has CEL's words. KindNotAllowed (above) when the kind is not readable.
	ReasonCheckFailed = "CheckFailed"
	// ReasonKubeconfigUnavailable: the check names another cluster
	// (clusterExpr) and its kubeconfig cannot be had: no Secret
	// `<cluster>-kubeconfig` in the variant's namespace, one the
	// controller may not read, or one whose `value` is not a kubeconfig
	// (status Unknown; the message names the Secret).
	ReasonKubeconfigUnavailable = "KubeconfigUnavailable"
	// ReasonClusterUnreachable: the other cluster's API server did not
	// answer, or refused the controller (a connection refused, a timeout,
	// an expired credential; status Unknown; the message has the
	// connection's words).
	ReasonClusterUnreachable = "ClusterUnreachable"

	// ReasonNewerRevision (DownstreamTarget.Drift; rule published-drift): a
	// published revision of the downstream package newer than the
	// variant's, which the variant did not make (a person's copy and
	// approval, as Nephio scales a workload). The variant's next upgrade
	// would start from its own revision, not that one: adopt the change
	// into the variant (its spec or the blueprint), or delete the revision.
	ReasonNewerRevision = "NewerRevision"
	// ReasonContentChanged (DownstreamTarget.Drift; rule content-drift):
	// the package on the downstream repository's branch differs from the
	// variant's newest published revision, which is the package's newest:
	// a commit pushed to the branch behind Porch's back. The message names
	// the files.
	ReasonContentChanged = "ContentChanged"
	// ReasonBranchUnreadable (DownstreamTarget.Drift; rule content-drift):
	// the package on the downstream repository's branch cannot be read (a
	// commit broke its Kptfile, a file over the bounds): what the branch
	// holds is not what was approved, and nothing says what it is. The
	// message has the store's words.
	ReasonBranchUnreadable = "BranchUnreadable"
	// ConditionPublishedDrift is True while a target of the variant has
	// drifted (the message names it); absent otherwise.
	ConditionPublishedDrift = "PublishedDrift"

	// The condition types of a PackageVariantSet with spec.rollout: its
	// rollout's phase (status.rollout.phase) as conditions, one True at a
	// time, for kubectl wait, pvctl wait and alerts (rule: rollout-conditions).
	//
	// ConditionRolloutProgressing: a wave is open and moving (reason
	// WaveOpen).
	ConditionRolloutProgressing = "RolloutProgressing"
	// ConditionRolloutPaused: nothing moves until someone acts; the reason
	// says why (ErrorBudgetExceeded, PausedByOperator, EmptyWave) and the
	// message what to do. pvctl run exits 4 (stalled) while it holds.
	ConditionRolloutPaused = "RolloutPaused"
	// ConditionRolloutComplete: every child is at the target (reason
	// AtTarget), or every one but the held and skipped ones, which the
	// message names (reason NotAllAtTarget: some clusters still run the
	// rollout's from revision).
	ConditionRolloutComplete = "RolloutComplete"
	// ReasonWaveOpen is RolloutProgressing=True's reason.
	ReasonWaveOpen = "WaveOpen"
	// ReasonErrorBudgetExceeded, ReasonPausedByOperator, ReasonEmptyWave:
	// RolloutPaused=True's reasons (pkg/rollout's PauseCause).
	ReasonErrorBudgetExceeded = "ErrorBudgetExceeded"
	ReasonPausedByOperator    = "PausedByOperator"
	ReasonEmptyWave           = "EmptyWave"
	// ReasonRolledBack: RolloutPaused=True after an undo
	// (pvkit.dev/rollout-undo): every child is back at the from revision.
	ReasonRolledBack = "RolledBack"
	// ReasonAtTarget is RolloutComplete=True's reason when every child is
	// at the target; ReasonNotAllAtTarget when some are held or skipped.
	ReasonAtTarget       = "AtTarget"
	ReasonNotAllAtTarget = "NotAllAtTarget"
	// ReasonRolloutPhase is the reason of each of the three that is False:
	// the message is the phase the rollout is in.
	ReasonRolloutPhase = "RolloutPhase"

	// ConditionBlueprintOverrides is True while the blueprint's own
	// pipeline sets again what the variant set (a function runs again over
	// the variant's values), though the variant is Ready; removed when no
	// reconcile warns.
	ConditionBlueprintOverrides = "BlueprintOverrides"
	// ReasonFunctionRunsAgain is BlueprintOverrides=True's reason.
	ReasonFunctionRunsAgain = "FunctionRunsAgain"
)
