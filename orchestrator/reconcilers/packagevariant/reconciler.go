package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/approve"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/memory"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"regexp"
	"strings"
	"sync"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/metrics"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/upstream"
	"github.com/pvkit/pvkit/pkg/variant"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Event reasons (Normal unless said): one per write to Porch, so that
// `kubectl describe packagevariant` tells what pvkit did. A stalling error is
// a Warning event with its condition reason. A steady resync records none.
const (
	EventDraftCreated        = "DraftCreated"        // a clone of the upstream
	EventDraftUpgraded       = "DraftUpgraded"       // an upgrade draft of the published downstream
	EventDraftEdited         = "DraftEdited"         // an edit draft of the published downstream
	EventDraftUpdated        = "DraftUpdated"        // an owned draft's files rewritten in place
	EventRevisionAdopted     = "RevisionAdopted"     // adoptExisting took an unowned revision
	EventProposedForDeletion = "ProposedForDeletion" // a Published revision proposed for deletion
	EventRevisionDeleted     = "RevisionDeleted"     // a Draft or Proposed revision deleted
	EventRevisionOrphaned    = "RevisionOrphaned"    // deletionPolicy orphan released a revision
	EventDeletionWithdrawn   = "DeletionWithdrawn"   // a DeletionProposed revision wanted again
	EventDraftReclaimed      = "DraftReclaimed"      // the draft asked for, recorded by Porch without owner, taken back
	EventEmptyDraftDeleted   = "EmptyDraftDeleted"   // Warning: the draft pvkit asked for holds no file (a create Porch failed half-way): deleted, made again
	EventOwnerlessDraft      = "OwnerlessDraft"      // Warning: an ownerless draft in a pvkit workspace next to a new one
)

// Reconciler reconciles PackageVariants.
type Reconciler struct {
	// Client reads and patches PackageVariants and lists injected objects.
	Client client.Client
	// Reader reads past the cache (the manager's API reader): a status
	// patch that conflicts is rebased on the variant as it is (nil: Client).
	Reader client.Reader
	// Store is Porch.
	Store store.Store
	// Clock stamps condition transitions (default: the real clock).
	Clock kit.Clock
	// Recorder records Events on the variants (nil: none).
	Recorder record.EventRecorder
	// Metrics records each reconcile's duration and result (nil: none).
	Metrics *metrics.Metrics
	// ApproveByPolicy approves the finished drafts of Ready variants that
	// ask for it (approval.nephio.org/policy), as Nephio's approval
	// controller does (approve.go). Off by default: Nephio runs its own.
	ApproveByPolicy bool
	// Kinds are the kinds the reconciler may read for injection (the zero
	// value: kit.DefaultReadableKinds).
	Kinds kit.ReadableKinds
	// Workers is the number of variants reconciled at once (default 1). A
	// variant is never reconciled twice at once (the work queue), and two
	// variants writing the same downstream package take turns (pkgs).
	Workers int
	// Provenance is how drafts' provenance records are made and checked
	// (provenance.go; the zero value: unsigned, builder "controller").
	Provenance stamp.Provenance
	// ObserveInterval is how often a variant with a Published target is
	// reconciled though nothing wakes it (rule observe-cadence), so that
	// what pvkit watches outside Kubernetes, the branch's content, the
	// cluster's health, is looked at on a cadence; ObserveIntervalAnnotation
	// overrides it per variant. 0: only when something wakes it (pvctl,
	// whose every run observes).
	ObserveInterval time.Duration
	// ReconcileTimeout bounds one reconcile (0:
	// kit.DefaultReconcileTimeout; negative: none): past it the steps
	// stop, Ready=False DeadlineExceeded says so, and it is retried.
	ReconcileTimeout time.Duration
	// Jitter is added to each interval (nil: up to a tenth of it, at
	// random), so that a fleet's observations spread out.
	Jitter func(time.Duration) time.Duration
	// Clusters reads the objects of health checks that name another
	// cluster (nil: such a check reads KubeconfigUnavailable, saying this
	// process reads no other cluster); ClusterPoll is how often a variant
	// whose health from another cluster is not True is read again (0:
	// DefaultClusterPoll; other clusters are polled, not watched).
	Clusters    Clusters
	ClusterPoll time.Duration
	// Shard is the shard this process reconciles (nil: no sharding). The
	// cache holds only its variants; before creating a draft the variant
	// is read fresh, and one handed over to another shard meanwhile is
	// left to it (no duplicate draft from two shards at once).
	Shard *kit.Shard

	watch     *kit.Watcher // set by SetupWithManager
	pkgs      kit.KeyLock
	mem       memory.Memory // what it remembers of each variant, one record each
	storeMu   sync.Mutex
	settled   *settled.Store   // Store, settled (porch)
	upstreams memory.Upstreams // published upstreams' files, for the prechecks of clones
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// cacheRetry is how soon a reconcile runs again when the cache does not
// show the draft it just created.
const cacheRetry = 500 * time.Millisecond

// Reconcile implements reconcile.Reconciler: get the variant, run the steps
// (deletion, finalizer, then reconcileVariant), summarize their outcome into
// the conditions (kit.Summarize), record a stall as an Event, and patch the
// status when it changed.
func (r *Reconciler) Reconcile(parent context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	start := time.Now()
	// Every reconcile is bounded (ReconcileTimeout): the steps run under
	// its deadline, the finish step past it, so the deadline is said in
	// the conditions and the worker is free.
	deadline := kit.NewDeadline(parent, r.ReconcileTimeout)
	ctx, cancel := deadline.Work()
	defer cancel()
	v, err := r.read(ctx, req.NamespacedName)
	if err != nil {
		if apierrors.IsNotFound(err) { // gone: nothing of it is kept
			if uid, ok := r.mem.ForgetName(req.NamespacedName); ok {
				r.porch().Forget(string(uid))
			}
		}
		r.Metrics.ObserveReconcile("PackageVariant", metrics.ResultSuccess, start)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := v.DeepCopy()
	deleting := !v.DeletionTimestamp.IsZero()
	if !deleting { // deleting is never suspended: the deletionPolicy applies
		if why := r.suspendedBy(ctx, v); why != "" {
			result, retErr = kit.Suspended(ctx, v, &v.Status.Conditions, v.Generation, r.Clock, r.events(), why,
				func() error { return r.patchStatus(ctx, orig, v) })
			r.Metrics.ObserveReconcile("PackageVariant", metrics.ResultSuspended, start)
			return result, retErr
		}
		kit.Resumed(ctx, v, &v.Status.Conditions, r.events())
	}
	var outcome error
	var again time.Duration
	defer func() {
		fctx, fcancel := deadline.Finish()
		defer fcancel()
		result, retErr = r.finish(fctx, orig, v, deleting, deadline.Overrun(ctx, outcome), again, start)
	}()
	if deleting {
		r.forget(v.UID)
		outcome = r.reconcileDelete(ctx, v)
		return
	}
	if outcome = r.ensureFinalizer(ctx, v); outcome != nil {
		return
	}
	outcome, again = r.steps(ctx, v)
	return
}

// steps are the reconcile's steps, in order, every one run every
// reconcile (rule observe-cadence): the downstream made what the variant
// asks for; approval by policy, once that succeeded; then the observations
// of what is published (its health, its drift), whatever the steps before
// them said (a Waiting approval used to skip them), over the targets the
// status records. The outcome is the first that is not a wait (in step
// order), else the shortest wait; again is the shortest requeue asked
// for, the observation interval included.
func (r *Reconciler) steps(ctx context.Context, v *pvapi.PackageVariant) (outcome error, again time.Duration) {
	outcomes := []error{r.reconcileVariant(ctx, v)}
	if outcomes[0] == nil && r.ApproveByPolicy {
		owned, err := r.listOwned(ctx, v)
		if err == nil {
			again, err = approve.Approver{Store: r.porch(), Clock: r.Clock, Events: r.events(), Verify: r.Provenance.Verify}.Run(ctx, v, owned)
		}
		outcomes = append(outcomes, err)
	}
	obs := r.observer()
	head, driftErr := obs.ObserveDrift(ctx, v, downstreamKey(v), r.driftPolicyProblem(v))
	outcomes = append(outcomes, obs.ObserveHealth(ctx, v, head), driftErr)
	return kit.FirstOutcome(outcomes...), kit.Soonest(again, r.observeAgain(ctx, v))
}

// finish is Reconcile's one finish step, deferred: summarize the outcome
// into the conditions (a Waiting outcome changes nothing and comes back
// later), record a new stall as an Event, set observedGeneration only when
// the outcome settles the generation (kit.Result.Observed), patch the
// status when it changed, and record the reconcile's metrics.
func (r *Reconciler) finish(ctx context.Context, orig, v *pvapi.PackageVariant, deleting bool, outcome error, again time.Duration, start time.Time) (ctrl.Result, error) {
	var res kit.Result
	if !deleting || outcome != nil {
		res = r.summary(v).Summarize(outcome)
	}
	if res.Waiting == nil { // a finished reconcile handled the request it saw
		v.Status.LastHandledReconcileAt = v.Annotations[kit.ReconcileRequestAnnotation]
	}
	return kit.Finish{Result: res, Outcome: outcome, Object: v, Events: r.events(), Again: again,
		SetObserved: func() {
			if !deleting {
				v.Status.ObservedGeneration = v.Generation
			}
		},
		Patch: func() error {
			err := r.patchStatus(ctx, orig, v)
			if !deleting {
				r.mem.SetPatched(v.UID, v.ResourceVersion) // the version this reconcile leaves
			}
			return err
		},
		Observe: func(waiting, stalled bool, err error) {
			r.Metrics.ObserveReconcile("PackageVariant", metrics.ResultOf(waiting, stalled, err), start)
		},
	}.Do(ctx)
}

// read reads the variant from the cache, or past it (Reader) when the
// cache serves another version than the one this reconciler's last
// reconcile of it left (memory.patched): a reconcile never derives facts
// from a status older than its own last write (a lagging informer after
// a status patch). A steady resync, whose cache holds that version,
// reads nothing more.
func (r *Reconciler) read(ctx context.Context, key types.NamespacedName) (*pvapi.PackageVariant, error) {
	v := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, key, v); err != nil {
		return nil, err
	}
	if old := r.mem.Seen(key, v.UID); old != "" {
		r.porch().Forget(string(old))
	}
	if left := r.mem.LastPatched(v.UID); left == "" || left == v.ResourceVersion || r.Reader == nil {
		return v, nil
	}
	fresh := &pvapi.PackageVariant{}
	if err := r.Reader.Get(ctx, key, fresh); err != nil {
		return nil, err
	}
	return fresh, nil
}

// patchStatus writes the variant's status, losing nothing (kit.PatchStatus).
func (r *Reconciler) patchStatus(ctx context.Context, orig, v *pvapi.PackageVariant) error {
	return kit.PatchStatus(ctx, r.Client, r.Reader, orig, v, variantStatus)
}

// variantStatus is a PackageVariant's status, for kit.PatchStatus.
func variantStatus(o client.Object) any { return &o.(*pvapi.PackageVariant).Status }

// suspendedBy says why the variant is suspended, or "": by its own
// annotation, or by its set's (a set's suspension holds its children).
func (r *Reconciler) suspendedBy(ctx context.Context, v *pvapi.PackageVariant) string {
	if why := kit.SuspendedBy("PackageVariant "+v.Name, v.Annotations); why != "" {
		return why
	}
	set := r.parentSet(ctx, v)
	if set == nil {
		return "" // none, gone, or another set of that name: not this variant's set
	}
	return kit.SuspendedBy("its PackageVariantSet "+set.Name, set.Annotations)
}

func (r *Reconciler) summary(v *pvapi.PackageVariant) kit.Summary {
	return kit.Summary{Conditions: &v.Status.Conditions, Generation: v.Generation, Clock: r.Clock,
		ReadyReason: pvapi.ReasonNoErrors, ReadyMessage: "successfully ensured downstream package variant",
		ErrorReason: pvapi.ReasonError}
}

func (r *Reconciler) events() kit.Events { return kit.Events{Recorder: r.Recorder} }

// reconcileVariant runs the steps and returns their outcome (kit's error
// model); it sets status.downstreamTargets.
//
//   - an invalid spec stalls (ValidationError);
//   - no upstream revision matches spec.upstream: stalls (UpstreamNotFound);
//   - the downstream step: stalls on a stale draft, a package that cannot be
//     mutated, a locked upstream that is gone; a refused render is retried
//     with its render status in the targets; a Porch failure is retried.
func (r *Reconciler) reconcileVariant(ctx context.Context, v *pvapi.PackageVariant) error {
	if invalid := krm.InvalidFrom(variant.Validate(v.Core())); invalid != nil {
		return &kit.Stalling{Reason: pvapi.ReasonValidationError, Err: invalid,
			ReadyReason: pvapi.ReasonError, ReadyMessage: "invalid packagevariant object"}
	}
	r.sayDeprecated(v)
	for i, inj := range v.Spec.Injectors {
		if inj.Kind != nil && !r.Kinds.AllowsKind(inj.Group, *inj.Kind) {
			return r.Kinds.Refuse(pvapi.ReasonKindNotAllowed, fmt.Sprintf("`spec.injectors[%d]` names kind %q", i, *inj.Kind))
		}
	}
	up, err := r.findUpstream(ctx, v)
	if err != nil {
		return err
	}
	if up == nil {
		return kit.Stallf(pvapi.ReasonUpstreamNotFound, "upstream package revision not found: %s", upstream.Describe(*v.Spec.Upstream))
	}
	unlock := r.pkgs.Lock(downstreamKey(v).String())
	targets, err := r.reconcileDownstream(ctx, v, up)
	unlock()
	if err != nil && ctx.Err() != nil {
		// Stopped, not failed (a Ctrl-C read RenderFailed).
		return kit.Retry(pvapi.ReasonInterrupted, fmt.Errorf("stopped before it finished (%v); the next reconcile goes on", context.Cause(ctx)))
	}
	var rf *renderFailure
	if errors.As(err, &rf) {
		v.Status.DownstreamTargets = recordRender(v.Status.DownstreamTargets, rf.target)
		return kit.Retry(pvapi.ReasonRenderFailed, err)
	}
	if errors.Is(err, store.ErrRenderFailed) { // a draft Porch would not create: its render failed
		if key := missingContextKey(err.Error()); key != "" && setsContextKey(v, key) {
			// Retrying cannot help: every clone renders before the variant
			// writes its context (rule blueprint-renders-alone).
			return kit.Stall(pvapi.ReasonRenderFailed, fmt.Errorf("%w; the blueprint must render on its own: Porch renders every clone with a package context of name and package-path only, "+
				"before the variant writes `%s` into it, so the blueprint's pipeline must not need `data.%s` (take it from an object of the package that has a default, which the variant can inject, "+
				"or read it in a function the variant prepends, spec.pipeline)", err, key, key))
		}
		return kit.Retry(pvapi.ReasonRenderFailed, err)
	}
	var st *kit.Stalling
	if errors.As(err, &st) && st.Reason == pvapi.ReasonRenderConflict && wrote(targets) {
		// The write happened: its draft and render status are the variant's.
		// A reconcile that found the conflict in its memo records the same
		// write's targets again (memo.unchanged): the list is replaced by
		// that write's values whatever status it read, and where the writing
		// reconcile's patch landed this changes nothing.
		v.Status.DownstreamTargets = mergeTargets(v.Status.DownstreamTargets, targets)
	}
	var p *kit.Partial
	if err != nil && !(errors.As(err, &p) && p.Reason == pvapi.ReasonRemovalHeld) {
		// What was written before the failure is the variant's all the
		// same (a status write loses nothing): those targets are recorded,
		// the others kept as they were.
		v.Status.DownstreamTargets = upsertTargets(v.Status.DownstreamTargets, targets)
		return err
	}
	v.Status.DownstreamTargets = mergeTargets(v.Status.DownstreamTargets, targets)
	r.setOverridden(v, targets)
	return err
}

func (r *Reconciler) ensureFinalizer(ctx context.Context, v *pvapi.PackageVariant) error {
	if controllerutil.ContainsFinalizer(v, pv.Finalizer) {
		return nil
	}
	orig := v.DeepCopy()
	controllerutil.AddFinalizer(v, pv.Finalizer)
	if err := r.Client.Patch(ctx, v, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("adding the finalizer: %w", err)
	}
	return nil
}

// ownerRef is the variant as the owner of its revisions.
func ownerRef(v *pvapi.PackageVariant) store.OwnerRef {
	return store.OwnerRef{APIVersion: pv.APIVersion, Kind: pv.Kind, Name: v.Name, UID: string(v.UID), Controller: true}
}

// wrote reports whether targets carry the render status of a write.
func wrote(targets []target) bool {
	for _, t := range targets {
		if t.render != nil {
			return true
		}
	}
	return false
}

// ConditionBlueprintOverrides (rule blueprint-runs-last) is True while the
// blueprint's own pipeline runs, after a function the variant prepends, a
// function of the same kind that sets what it sets: the package ends with
// the blueprint's values although the variant is Ready. Set from the
// reconciles that ran the variant's chain on a draft (a draft the memo
// vouches for keeps what was set), removed when none warns; a new warning
// is also a Warning Event.
const (
	ConditionBlueprintOverrides = pvapi.ConditionBlueprintOverrides
	ReasonFunctionRunsAgain     = pvapi.ReasonFunctionRunsAgain
	EventBlueprintOverrides     = "BlueprintOverrides"
)

func (r *Reconciler) setOverridden(v *pvapi.PackageVariant, targets []target) {
	checked := false
	var msgs []string
	for _, t := range targets {
		if !t.checked {
			continue
		}
		checked = true
		for _, m := range t.overridden {
			msgs = append(msgs, t.name+": "+m)
		}
	}
	if !checked {
		return
	}
	if len(msgs) == 0 {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, ConditionBlueprintOverrides)
		return
	}
	msg := strings.Join(msgs, "; ")
	if prev := apimeta.FindStatusCondition(v.Status.Conditions, ConditionBlueprintOverrides); prev == nil || prev.Message != msg {
		r.events().Warning(v, EventBlueprintOverrides, "%s", msg)
	}
	kit.Set(&v.Status.Conditions, v.Generation, r.Clock, ConditionBlueprintOverrides, metav1.ConditionTrue, ReasonFunctionRunsAgain, msg)
}

// contextKeyMissing matches apply-replacements' error for a source field
// the package context (ConfigMap kptfile.kpt.dev) does not have.
var contextKeyMissing = regexp.MustCompile("fieldPath `data\\.([A-Za-z0-9_.-]+)` is missing for replacement source ConfigMap[^ ]*kptfile\\.kpt\\.dev")

// missingContextKey is the package-context key a render failed for want
// of, or "".
func missingContextKey(msg string) string {
	if m := contextKeyMissing.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// setsContextKey reports whether the variant writes key into the package
// context.
func setsContextKey(v *pvapi.PackageVariant, key string) bool {
	if pc := v.Spec.PackageContext; pc != nil {
		_, ok := pc.Data[key]
		return ok
	}
	return false
}
