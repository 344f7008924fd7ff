package packagevariantset

import (
	"context"
	"errors"
	"fmt"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"time"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/metrics"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Event reasons: one per child written, so that `kubectl describe
// packagevariantset` tells what pvkit did. A stalling error is a Warning
// event with its condition reason. A steady resync records none.
const (
	EventChildCreated = "ChildCreated"
	EventChildUpdated = "ChildUpdated"
	EventChildRemoved = "ChildRemoved"
)

// Reconciler reconciles PackageVariantSets.
type Reconciler struct {
	Client client.Client
	Store  store.Store
	Clock  kit.Clock
	// ReconcileTimeout bounds one reconcile (0:
	// kit.DefaultReconcileTimeout; negative: none).
	ReconcileTimeout time.Duration
	// Recorder records Events on the sets (nil: none).
	Recorder record.EventRecorder
	// Metrics records each reconcile's duration and result (nil: none).
	Metrics *metrics.Metrics
	// Kinds are the kinds objectSelector may select (the zero value:
	// kit.DefaultReadableKinds).
	Kinds kit.ReadableKinds
	// AllowMassDeletion lifts the mass-deletion guard for every set (pvctl
	// run --prune=all); a set lifts it for itself with AllowMassDeletionAnnotation.
	AllowMassDeletion bool
	// MaxChildren bounds the PackageVariants one set may have (0:
	// pvsexpand.DefaultMaxChildren); a set asking for more stalls with
	// TooManyChildren.
	MaxChildren int
	// Workers is the number of sets reconciled at once, and the number of
	// one set's children written at once (default 1).
	Workers int
	// Reader reads past the cache (the manager's API reader): a staged
	// rollout reads the children of its open wave fresh. nil: Client.
	Reader client.Reader
	// Shard is the shard this process reconciles (nil: no sharding); its
	// cache holds only the shard's sets and variants. A set new to the
	// shard is handed over (handOver): its children are relabelled to it.
	Shard *kit.Shard

	watch *kit.Watcher // set by SetupWithManager
}

// Reconcile implements reconcile.Reconciler: get the set, run reconcileSet,
// summarize its outcome into the conditions (kit.Summarize), record a stall
// as an Event, and patch the status when it changed.
func (r *Reconciler) Reconcile(parent context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	start := time.Now()
	// Every reconcile is bounded (ReconcileTimeout), its finish step past
	// the deadline so that the deadline is said in the conditions.
	deadline := kit.NewDeadline(parent, r.ReconcileTimeout)
	ctx, cancel := deadline.Work()
	defer cancel()
	set := &pvsapi.PackageVariantSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuccess, start)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if set.Spec.Rollout != nil && r.Reader != nil {
		// A rollout's plan starts from where the last one left it (status.
		// rollout), so the set is read past the cache, which can lag that
		// status write: e2e-porch TestFailingCanaryUndoneOnPorch saw a
		// reconcile that read the set before its undo on failure was
		// cached move the canary to the target again, and its status
		// write, rebased, mix the two plans. One read a set reconcile.
		if err := r.Reader.Get(ctx, req.NamespacedName, set); err != nil {
			r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuccess, start)
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
	}
	if !set.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(set, ChildrenFinalizer) {
			return r.reconcileDeletion(ctx, set, start) // wave by wave (rule set-deletion)
		}
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuccess, start)
		return ctrl.Result{}, nil // children go with it (owner references)
	}
	orig := set.DeepCopy()
	if why := kit.SuspendedBy("PackageVariantSet "+set.Name, set.Annotations); why != "" {
		result, retErr = kit.Suspended(ctx, set, &set.Status.Conditions, set.Generation, r.Clock, kit.Events{Recorder: r.Recorder}, why,
			func() error { return kit.PatchStatus(ctx, r.Client, r.Reader, orig, set, setStatus) })
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuspended, start)
		return result, retErr
	}
	kit.Resumed(ctx, set, &set.Status.Conditions, kit.Events{Recorder: r.Recorder})
	var outcome error
	var again time.Duration
	defer func() {
		fctx, fcancel := deadline.Finish()
		defer fcancel()
		result, retErr = r.finish(fctx, orig, set, deadline.Overrun(ctx, outcome), again, start)
	}()
	outcome = r.reconcileSet(ctx, set, &again)
	return
}

// setStatus is a set's status, for kit.PatchStatus.
func setStatus(o client.Object) any { return &o.(*pvsapi.PackageVariantSet).Status }

// finish is Reconcile's one finish step, deferred: summarize, record a new
// stall as an Event, set observedGeneration only when the outcome settles
// the generation (kit.Result.Observed), patch the status when it changed,
// record the metrics.
func (r *Reconciler) finish(ctx context.Context, orig, set *pvsapi.PackageVariantSet, outcome error, again time.Duration, start time.Time) (ctrl.Result, error) {
	res := kit.Summary{Conditions: &set.Status.Conditions, Generation: set.Generation, Clock: r.Clock,
		ReadyReason: pvsapi.ReasonReconciled, ReadyMessage: "package variants successfully reconciled",
		ErrorReason: pvsapi.ReasonUnexpectedError}.Summarize(outcome)
	if res.Waiting == nil { // a finished reconcile handled the request it saw
		set.Status.LastHandledReconcileAt = set.Annotations[kit.ReconcileRequestAnnotation]
	}
	return kit.Finish{Result: res, Outcome: outcome, Object: set, Events: kit.Events{Recorder: r.Recorder}, Again: again,
		SetObserved: func() { set.Status.ObservedGeneration = set.Generation },
		Patch:       func() error { return kit.PatchStatus(ctx, r.Client, r.Reader, orig, set, setStatus) },
		Observe: func(waiting, stalled bool, err error) {
			r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultOf(waiting, stalled, err), start)
		},
	}.Do(ctx)
}

// ExpandTimeout bounds one set's expansion (its CEL evaluations) in the
// controller; past it, the targets not yet computed fail, the others are
// applied, nothing is removed, and the set is retried. A set at the
// children bound (5,000 children with CEL) expands in 0.04 s; a hostile
// one would run 22.8 s without it.
const ExpandTimeout = 10 * time.Second

// reconcileSet validates, expands and applies, and returns the outcome in
// kit's error model: an invalid set or a missing upstream stalls; target
// entries that could not be computed are a Partial outcome (the others are
// reconciled, nothing is removed; retried only when a kind could not be
// listed); a failing LIST or write is transient. It sets
// status.targetFailures, and again when a staged rollout must be judged
// again though nothing changes (applyRollout).
func (r *Reconciler) reconcileSet(ctx context.Context, set *pvsapi.PackageVariantSet, again *time.Duration) error {
	if err := r.handOver(ctx, set); err != nil {
		return err
	}
	if err := r.ensureFinalizer(ctx, set); err != nil {
		return err
	}
	core := set.Core()
	if invalid := krm.InvalidFrom(pvsexpand.Validate(core)); invalid != nil {
		return &kit.Stalling{Reason: pvsapi.ReasonValidationError, Err: invalid,
			ReadyReason: pvsapi.ReasonValidationError, ReadyMessage: "invalid packagevariant object"}
	}
	for i, t := range set.Spec.Targets {
		if s := t.ObjectSelector; s != nil && !r.Kinds.Allows(krm.GVK{APIVersion: s.APIVersion, Kind: s.Kind}) {
			return r.Kinds.Refuse(pvsapi.ReasonKindNotAllowed, fmt.Sprintf("`spec.targets[%d].objectSelector` selects kind %s %s", i, s.APIVersion, s.Kind))
		}
	}
	world, upstreams, err := r.world(ctx, set)
	if err != nil {
		return err
	}
	// The controller's deadline for one expansion (the edge sets it,
	// pkg/pvsexpand never does): without it a hostile set runs until its
	// cost budget is spent, 22.8 s measured (docs/security.md).
	expandCtx, cancel := context.WithTimeout(ctx, ExpandTimeout)
	defer cancel()
	x, err := pvsexpand.Expand(expandCtx, core, world)
	if errors.Is(err, pvsexpand.ErrUpstreamNotFound) { // the revision watch brings the next reconcile
		return kit.Stall(pvsapi.ReasonUpstreamNotFound, err)
	} else if errors.Is(err, pvsexpand.ErrTooManyChildren) {
		return kit.Stall(pvsapi.ReasonTooManyChildren, err)
	} else if err != nil {
		return err
	}
	existing, deleting, err := r.children(ctx, set)
	if err != nil {
		return err
	}
	if *again, err = r.applyRollout(ctx, set, core, x, existing, upstreams, world); err != nil {
		return err
	}
	keepOwnPolicies(x, existing)
	holders, err := r.nameHolders(ctx, set, x, existing)
	if err != nil {
		return err
	}
	steps, err := pvsexpand.Plan(core, x, append(existing, holders...))
	if err != nil {
		return err
	}
	guard := r.massDeletion(ctx, set, steps, len(existing)-len(deleting), deleting)
	if guard != nil {
		steps = withoutRemovals(steps)
	}
	if err := r.apply(ctx, set, steps); err != nil {
		return err
	}
	if guard != nil {
		return guard
	}
	set.Status.TargetFailures = nil
	retry := false
	for _, f := range x.Failures {
		set.Status.TargetFailures = append(set.Status.TargetFailures, pvsapi.TargetFailure{Target: f.Where, Message: f.Message})
		retry = retry || f.Unavailable
	}
	if len(x.Failures) > 0 {
		return &kit.Partial{Reason: pvsapi.ReasonPartiallyReconciled, Retry: retry, Err: fmt.Errorf(
			"%d target entries could not be computed (see status.targetFailures); the others are reconciled and no PackageVariant was removed", len(x.Failures))}
	}
	return rolloutHeld(set)
}

// rolloutHeld is the outcome of a set whose staged rollout is paused:
// Ready=False, reason RolloutPaused (RolledBack after an
// undo), the pause's cause and what to do in the message, so that status,
// `pvctl status -o json`, `pvctl wait --for=condition=Ready` and
// `kubectl wait` all read it as not ready (it read Ready=True Reconciled
// beside RolloutPaused=True). Not stalled and not retried: the set is
// reconciled, its rollout waits for someone; Ready again when it resumes
// or completes.
func rolloutHeld(set *pvsapi.PackageVariantSet) error {
	c := apimeta.FindStatusCondition(set.Status.Conditions, pvapi.ConditionRolloutPaused)
	if set.Spec.Rollout == nil || c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	reason := pvapi.ConditionRolloutPaused
	if c.Reason == pvapi.ReasonRolledBack {
		reason = pvapi.ReasonRolledBack
	}
	return &kit.Partial{Reason: reason, Err: fmt.Errorf("the staged rollout is paused (%s): %s", c.Reason, c.Message)}
}

// world gathers what the set is expanded against: the Repositories in its
// namespace, the upstream package's revisions (only that package: rule targeted-watches), and
// the objects of each selected kind; a kind that cannot be listed is
// Unavailable, which fails its targets (rule: no-removal-on-partial).
// It returns the upstream package's revisions too (a rollout resolves its
// target among them: one list per reconcile).
func (r *Reconciler) world(ctx context.Context, set *pvsapi.PackageVariantSet) (*pvsexpand.World, []store.Revision, error) {
	w := pvsexpand.NewWorld(set.Namespace)
	var repos porchconfig.RepositoryList
	// Read only (objectOf): from the cache without a copy (a set of 25
	// over a namespace of 10,000 Repositories copied them all).
	if err := r.Client.List(ctx, &repos, client.InNamespace(set.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing Repositories: %w", err)
	}
	for i := range repos.Items {
		w.Add(pvsexpand.RepositoryGVK, objectOf(&repos.Items[i]))
	}
	u := set.Spec.Upstream
	if set.Spec.Group != nil { // rule package-groups: the group package's revisions
		u = set.Spec.Group
	}
	revs, err := r.Store.ListRevisions(ctx, store.PackageKey{Namespace: set.Namespace, Repository: u.Repo, Package: u.Package})
	if err != nil {
		return nil, nil, err
	}
	for _, rev := range revs {
		w.AddRevision(pvsexpand.Revision{
			Object:     pvsexpand.Object{Name: rev.Name, Namespace: rev.Namespace, Labels: rev.Labels, Annotations: rev.Annotations},
			Repository: rev.Repository, Package: rev.Package, Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle})
	}
	if set.Spec.Group != nil {
		if err := r.addGroup(ctx, w, u, revs); err != nil {
			return nil, nil, err
		}
	}
	w.Unavailable = map[krm.GVK]string{}
	for _, t := range set.Spec.Targets {
		if s := t.ObjectSelector; s != nil {
			g := krm.GVK{APIVersion: s.APIVersion, Kind: s.Kind}
			if err := r.watchKind(schema.FromAPIVersionAndKind(g.APIVersion, g.Kind)); err != nil {
				w.Unavailable[g] = err.Error()
				continue
			}
			objs, err := kit.List(ctx, r.Client, set.Namespace, g)
			if err != nil {
				w.Unavailable[g] = err.Error()
				continue
			}
			for i := range objs {
				w.Add(g, objectOf(&objs[i]))
			}
		}
	}
	w.MaxChildren = r.MaxChildren
	return w, revs, nil
}

// objectOf is an object as a set's CEL expressions see it.
func objectOf(o client.Object) pvsexpand.Object {
	return pvsexpand.Object{Name: o.GetName(), Namespace: o.GetNamespace(), Labels: o.GetLabels(), Annotations: o.GetAnnotations()}
}

// children lists the set's PackageVariants.
// children lists the set's children, and the names of those already being
// deleted (their finalizer waits for their drafts).
func (r *Reconciler) children(ctx context.Context, set *pvsapi.PackageVariantSet) ([]*pv.PackageVariant, map[string]bool, error) {
	var list pvapi.PackageVariantList
	// Listed without a copy (the cache's own objects), each child copied
	// once matched: what follows may change them.
	if err := r.Client.List(ctx, &list, client.InNamespace(set.Namespace),
		client.MatchingLabels{v1alpha2.SetLabel: pvsexpand.SetID(set.Core())}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("listing the set's PackageVariants: %w", err)
	}
	out := make([]*pv.PackageVariant, 0, len(list.Items))
	deleting := map[string]bool{}
	for i := range list.Items {
		out = append(out, list.Items[i].DeepCopy().Core())
		if !list.Items[i].DeletionTimestamp.IsZero() {
			deleting[list.Items[i].Name] = true
		}
	}
	return out, deleting, nil
}

// nameHolders reads the PackageVariants, other than the set's children,
// that already have the name of a child to create (the cached client: no
// API request), so that Plan refuses to replace them.
func (r *Reconciler) nameHolders(ctx context.Context, set *pvsapi.PackageVariantSet, x *pvsexpand.Expansion, children []*pv.PackageVariant) ([]*pv.PackageVariant, error) {
	mine := make(map[string]bool, len(children))
	for _, c := range children {
		mine[c.Metadata.Name] = true
	}
	var out []*pv.PackageVariant
	for _, c := range x.Children {
		if mine[c.Name] {
			continue
		}
		other := &pvapi.PackageVariant{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: c.Name}, other)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading PackageVariant %q: %w", c.Name, err)
		}
		out = append(out, other.Core())
	}
	return out, nil
}

// eventNames is how many children an Event names before "and N more".
const eventNames = 10

// AllowMassDeletionAnnotation on a set, "true", lifts its mass-deletion
// guard while it is there; each reconcile then takes the set's size as the
// guard's new baseline (status.peakChildren). Remove it once the removal is
// done.
const AllowMassDeletionAnnotation = "pvkit.dev/allow-mass-deletion"
