// Package packagevariant is the PackageVariant reconciler: it keeps a
// downstream package a specialised, up-to-date variant of an upstream package
// revision, through a store.Store (Porch, or the in-memory store).
//
// The package is the loop the design describes and no more: validate,
// pick the upstream and the downstream, clone or upgrade, run the chain,
// write, record (variant.go calls down into upstream.go, downstream.go,
// create.go, upgrade.go and mutate.go). What is not that loop is a package
// of its own that the reconciler calls and that never calls back: observe
// (drift, health, cadence), approve (approval by policy), memory (the one
// record per variant), stamp (provenance), and orchestrator/store/settled
// (Porch's failure modes). test/docs TestVariantReconcilerIsThin keeps it
// so: at most 3,000 lines, and one reconcile followed call by call returns
// to a file it already left at most 40 times.
//
// Reconcile is the Flux skeleton: get the variant (gone: done); the deletion
// branch; the finalizer; then small ordered steps that return errors in kit's
// model and set no condition themselves; one kit.Summarize turns the outcome
// into Ready, Stalled and Reconciling; the status is patched only when it
// changed. Every reason is documented in orchestrator/api/v1alpha1/reasons.go.
//
//  1. validate: the spec, and the function configs built from it (the
//     functions' own checks). Invalid: stalls (ValidationError; Ready is
//     Porch's `Error` "invalid packagevariant object").
//  2. upstream (rule: upstream-selection), by pkg/upstream's rule (the one pvs-expand uses):
//     workspaceName names a revision of any lifecycle; revision a published
//     one; with both, both must match; with neither, the latest published
//     revision, followed as newer ones are published. Not found: stalls
//     (UpstreamNotFound); the upstream-revision watch reconciles again.
//  3. downstream: prune owned revisions of another downstream, adopt
//     (adoptExisting), then clone (no revision), upgrade (the published
//     downstream's lock is not the upstream), edit (the mutations differ from
//     the published downstream) or mutate the owned drafts in place. A draft
//     cloned from another upstream is upgraded in place (upgrade.go; rule:
//     draft-upgrade): a person's edits kept, a conflict stalled
//     (UpgradeConflict), or StaleDraft when spec.policy.draftUpgrade asks
//     for Porch's stall; a draft made towards an upstream the variant no
//     longer asks for is deleted when only pvkit wrote it (abandon.go;
//     rule undone-drafts). A package that cannot be mutated stalls
//     (MutationFailed); a published downstream whose upstream is gone stalls
//     (LockedUpstreamNotFound). A render Porch refuses is retried
//     (RenderFailed) with its render status in the targets. What Porch
//     loses (answers, owners, drafts) is settled by the store the reconciler
//     writes through, orchestrator/store/settled (rule porch-failure-modes):
//     creation is idempotent (rule: idempotent-drafts), never an ownerless
//     draft (DraftReclaimed, rule never-ownerless), a write that landed
//     despite an error is known; the reconciler turns what it says into
//     waits and Events (tracker.go). An ownerless draft in a pvkit
//     workspace the variant did not ask for is reported (Warning
//     OwnerlessDraft) when a draft is created next to it.
//
// A draft is never approvable before its mutation ran: every draft (clone,
// upgrade, edit) is created with the readiness gate variant.MutationGate,
// its condition False (reason Pending), which the chain sets True in the
// write that finishes the draft; porchctl, Nephio's approval controller and
// pvctl approve all refuse a draft with a gate not True. On a real Porch
// the gate is the next request after the create (Porch v1.5.3 ignores a new
// PackageRevision's gates), so the window is one request long; the local
// stores write it in the draft's first commit. A draft pvkit did not
// create (taken over from Porch's controllers) gets no gate, so a converged
// fleet still costs no write. The annotations that ask for approval
// (approval.nephio.org/...) are held back at creation and written once the
// draft is finished, so an approver never sees a half-made draft asking to
// be approved. Cost: an upgrade whose merge already kept every mutation now
// takes two writes (create, then the gate), as a clone always did.
//
// Workers: the controller reconciles --workers variants at once; two
// variants writing the same downstream package take turns (a lock per
// package), so neither picks the workspace the other is creating.
//  4. approval by policy (package approve), once the downstream step succeeded;
//  5. the observations of what is published, health and drift (package
//     observe), every reconcile whatever the steps before them said, and
//     again every --observe-interval for a variant with a Published target
//     (observe.Cadence; rule: observe-cadence);
//  6. status: Ready=True NoErrors and the downstream targets; Porch errors
//     are Ready=False Error and retried (rule: stall-or-retry). A status
//     write loses nothing (ARCHITECTURE.md): the targets of the writes that
//     happened are recorded even when a later step fails (upsertTargets),
//     and a patch that conflicts (another write landed since) is rebased on
//     the variant as it is, this reconcile's own changes field by field and
//     target by target (kit.PatchStatus). A reconcile never starts from a
//     status older than its own last write: the cache is read past when it
//     serves another version (read).
//
// What the reconciler remembers of a variant between reconciles is one
// record (package memory): the memo, the last drift comparison, the version it
// left; forgotten when the variant goes (deleting, NotFound), with what the
// settled store remembers of its drafts. None of it is a fact the status
// should hold.
//
// Every write to Porch is logged and recorded as an Event on the variant; a
// stall is a Warning Event when it first appears or changes.
//
// The mutations are pkg/variant's: the functions' own code, run
// in-process, with semantic change detection (rule: zero-write-steady-state), so an unchanged variant
// writes nothing, not even its status.
//
// Deletion (rule: finalizer-waits): every owned revision is deleted (Drafts), proposed for
// deletion (Published) or orphaned (deletionPolicy orphan); the finalizer is
// removed only when all of them were handled, else the errors are returned
// and retried.
package packagevariant

// The permissions the reconciler needs (config/rbac, make generate).
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=packagevariants,verbs=get;list;watch;update;patch
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=packagevariants/status,verbs=get;update;patch
//+kubebuilder:rbac:groups=config.porch.kpt.dev,resources=packagevariants/finalizers,verbs=update
//+kubebuilder:rbac:groups=porch.kpt.dev,resources=packagerevisions,verbs=get;list;watch;create;update;patch;delete
//+kubebuilder:rbac:groups=porch.kpt.dev,resources=packagerevisionresources,verbs=get;update;patch
//
// Injection reads only the kinds of --readable-kinds (kit.ReadableKinds),
// so the role names exactly the default ones; an operator who allows more
// kinds adds list and watch on them (config/rbac/readable-kinds.yaml shows
// how). No wildcard: a Secret is readable only if the operator grants it.
//+kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
