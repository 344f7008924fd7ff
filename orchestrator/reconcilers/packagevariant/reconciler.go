package packagevariant

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/approve"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/memory"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/metrics"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// controller does (package approve). Off by default: Nephio runs its own.
	ApproveByPolicy bool
	// Kinds are the kinds the reconciler may read for injection (the zero
	// value: kit.DefaultReadableKinds).
	Kinds kit.ReadableKinds
	// Workers is the number of variants reconciled at once (default 1). A
	// variant is never reconciled twice at once (the work queue), and two
	// variants writing the same downstream package take turns (pkgs).
	Workers int
	// Provenance is how drafts' provenance records are made and checked
	// (package stamp; the zero value: unsigned, builder "controller").
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
// asks for; approval by policy, once that succeeded, over the listing the
// downstream step made when it wrote nothing (rule listing-reused), else
// over a new one; then the observations
// of what is published (its health, its drift), whatever the steps before
// them said (a Waiting approval used to skip them), over the targets the
// status records. The outcome is the first that is not a wait (in step
// order), else the shortest wait; again is the shortest requeue asked
// for, the observation interval included.
func (r *Reconciler) steps(ctx context.Context, v *pvapi.PackageVariant) (outcome error, again time.Duration) {
	wctx, writes := settled.CountWrites(ctx)
	owned, err := r.reconcileVariant(wctx, v)
	outcomes := []error{err}
	if err == nil && r.ApproveByPolicy {
		if writes() > 0 { // the listing is not what Porch holds now
			owned, err = r.listOwned(ctx, v)
		}
		if err == nil {
			again, err = approve.Approver{Store: r.porch(), Clock: r.Clock, Events: r.events(), Verify: r.Provenance.Verify}.Run(ctx, v, owned)
		}
		outcomes = append(outcomes, err)
	}
	obs := r.observer()
	head, driftErr := obs.ObserveDrift(ctx, v, downstreamKey(v))
	outcomes = append(outcomes, obs.ObserveHealth(ctx, v, head), driftErr)
	cadence := observe.Cadence{Interval: r.ObserveInterval, ClusterPoll: r.ClusterPoll, Jitter: r.Jitter}
	return kit.FirstOutcome(outcomes...), kit.Soonest(again, cadence.Again(ctx, v))
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

func (r *Reconciler) summary(v *pvapi.PackageVariant) kit.Summary {
	return kit.Summary{Conditions: &v.Status.Conditions, Generation: v.Generation, Clock: r.Clock,
		ReadyReason: pvapi.ReasonNoErrors, ReadyMessage: "successfully ensured downstream package variant",
		ErrorReason: pvapi.ReasonError}
}

func (r *Reconciler) events() kit.Events { return kit.Events{Recorder: r.Recorder} }

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

// A variant reads one thing of its set: whether the set is suspended
// (pvkit.dev/suspend holds its children), once a reconcile, with its own
// watch of sets (watches.go). Every policy a set gives its children is
// written into their spec.policy by the set (rule policy-flows-down), as
// its pins, approval and health are. The set is read from the cache
// without a copy (client.UnsafeDisableDeepCopy: the informer's object
// itself, which nothing here writes to): a set's status names its
// children (a rollout's wave members, up to 5,000), and a copy of it
// cost as much as the set is large (docs/scale.md).

// parentSet is the set that controls v (nil: none, gone, or another set of
// its name). The caller reads it, never writes it: it may be the cache's
// own object.
func (r *Reconciler) parentSet(ctx context.Context, v *pvapi.PackageVariant) *pvsapi.PackageVariantSet {
	owner := metav1.GetControllerOf(v)
	if owner == nil || owner.Kind != "PackageVariantSet" {
		return nil
	}
	set := &pvsapi.PackageVariantSet{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: v.Namespace, Name: owner.Name}, set, client.UnsafeDisableDeepCopy)
	if err != nil || set.UID != owner.UID {
		return nil
	}
	return set
}

// porch is the variant's store, settled (orchestrator/store/settled):
// Porch's write outcomes read back, the drafts this process made and
// Porch does not list yet, the listed drafts it cannot find. One per
// reconciler, over Store as it is now (a test that swaps Store keeps
// what the settled store remembers).
func (r *Reconciler) porch() *settled.Store {
	r.storeMu.Lock()
	defer r.storeMu.Unlock()
	if r.settled == nil {
		r.settled = settled.New(r.Store, r.now)
	} else if !sameStore(r.settled.Store, r.Store) {
		r.settled.Store = r.Store
	}
	return r.settled
}

// sameStore compares two stores, false where they cannot be compared.
func sameStore(a, b store.Store) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// forget drops everything remembered of a variant (deleted, gone).
func (r *Reconciler) forget(uid types.UID) {
	r.mem.Forget(uid)
	r.porch().Forget(string(uid))
}

// MemorySize is how many variants the reconciler remembers, and how many
// notes of drafts its settled store holds (bounded by the variants and
// their listed drafts; make soak checks it).
func (r *Reconciler) MemorySize() (variants, notes int) {
	_, notes = r.porch().Size()
	variants, _ = r.mem.Size()
	return variants, notes
}

// listOwned lists the variant's revisions as the settled store gives them
// (the draft it created last read directly when the listing, an informer
// cache, does not show it), in the reconcile's outcomes.
func (r *Reconciler) listOwned(ctx context.Context, v *pvapi.PackageVariant) ([]store.Revision, error) {
	owned, err := r.porch().ListOwned(ctx, v.Namespace, string(v.UID))
	r.reclaimed(ctx, v)
	return owned, settledOutcome(ctx, err)
}
