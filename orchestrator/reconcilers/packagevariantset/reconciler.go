package packagevariantset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/internal/names"
	"github.com/pvkit/pvkit/orchestrator/api"
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
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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

	watch *kit.Watcher // set by SetupWithManager
}

// Reconcile implements reconcile.Reconciler: get the set, run reconcileSet,
// summarize its outcome into the conditions (kit.Summarize), record a stall
// as an Event, and patch the status when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	start := time.Now()
	set := &pvsapi.PackageVariantSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuccess, start)
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !set.DeletionTimestamp.IsZero() {
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuccess, start)
		return ctrl.Result{}, nil // children go with it (owner references)
	}
	orig := set.DeepCopy()
	if why := kit.SuspendedBy("PackageVariantSet "+set.Name, set.Annotations); why != "" {
		result, retErr = kit.Suspended(ctx, set, &set.Status.Conditions, set.Generation, r.Clock, kit.Events{Recorder: r.Recorder}, why,
			func() error { return kit.PatchStatus(ctx, r.Client, orig, set, orig.Status, set.Status) })
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuspended, start)
		return result, retErr
	}
	kit.Resumed(ctx, set, &set.Status.Conditions, kit.Events{Recorder: r.Recorder})
	var outcome error
	var again time.Duration
	defer func() { result, retErr = r.finish(ctx, orig, set, outcome, again, start) }()
	outcome = r.reconcileSet(ctx, set, &again)
	return
}

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
		Patch:       func() error { return kit.PatchStatus(ctx, r.Client, orig, set, orig.Status, set.Status) },
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
	if *again, err = r.applyRollout(ctx, set, x, existing, upstreams); err != nil {
		return err
	}
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
	return nil
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
	if err := r.Client.List(ctx, &repos, client.InNamespace(set.Namespace)); err != nil {
		return nil, nil, fmt.Errorf("listing Repositories: %w", err)
	}
	for i := range repos.Items {
		w.Add(pvsexpand.RepositoryGVK, objectOf(&repos.Items[i]))
	}
	u := set.Spec.Upstream
	revs, err := r.Store.ListRevisions(ctx, store.PackageKey{Namespace: set.Namespace, Repository: u.Repo, Package: u.Package})
	if err != nil {
		return nil, nil, err
	}
	for _, rev := range revs {
		w.AddRevision(pvsexpand.Revision{
			Object:     pvsexpand.Object{Name: rev.Name, Namespace: rev.Namespace, Labels: rev.Labels, Annotations: rev.Annotations},
			Repository: rev.Repository, Package: rev.Package, Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle})
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
	if err := r.Client.List(ctx, &list, client.InNamespace(set.Namespace),
		client.MatchingLabels{v1alpha2.SetLabel: pvsexpand.SetID(set.Core())}); err != nil {
		return nil, nil, fmt.Errorf("listing the set's PackageVariants: %w", err)
	}
	out := make([]*pv.PackageVariant, 0, len(list.Items))
	deleting := map[string]bool{}
	for i := range list.Items {
		out = append(out, list.Items[i].Core())
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

// apply carries out the plan: create, update the spec in place, delete.
// Each child written is logged; the Events are one per action and
// reconcile (recordSteps), so a fan-out to N targets records three Events
// at most, not N.
func (r *Reconciler) apply(ctx context.Context, set *pvsapi.PackageVariantSet, steps []pvsexpand.Step) error {
	// The writes go out r.Workers at a time (the controller's --workers; one
	// at a time in pvctl run): a fan-out to N children is not N round trips
	// in a row. Errors and Events keep the plan's order.
	results := make([]error, len(steps))
	var g errgroup.Group // each step's error is kept in results, so none stops the others
	g.SetLimit(max(r.Workers, 1))
	for i, s := range steps {
		if s.Action != pvsexpand.Create && s.Action != pvsexpand.Update && s.Action != pvsexpand.Remove {
			continue
		}
		g.Go(func() error {
			results[i] = r.applyStep(ctx, set, s)
			return nil
		})
	}
	_ = g.Wait() // nil: the steps' errors are in results
	var errs []error
	var done []pvsexpand.Step
	var held []string
	for i, s := range steps {
		if s.Action != pvsexpand.Create && s.Action != pvsexpand.Update && s.Action != pvsexpand.Remove {
			continue
		}
		if err := results[i]; errors.Is(err, kit.ErrRemovalHeld) {
			held = append(held, s.Name)
			continue
		}
		if err := results[i]; err != nil {
			errs = append(errs, fmt.Errorf("%s PackageVariant %q: %w", s.Action, s.Name, err))
			continue
		}
		ctrl.LoggerFrom(ctx).Info(string(s.Action)+"d PackageVariant", "packageVariant", s.Name, "target", s.Where)
		done = append(done, s)
	}
	r.recordSteps(set, done)
	if len(errs) > 0 || len(held) == 0 {
		return errors.Join(errs...)
	}
	// Everything else is done; the removals wait for the host (pvctl run
	// --prune): reported as such, not retried.
	what := fmt.Sprintf("%d PackageVariants", len(held))
	if len(held) == 1 {
		what = "1 PackageVariant"
	}
	return &kit.Partial{Reason: pvsapi.ReasonRemovalHeld, Err: fmt.Errorf("the set no longer wants %s (%s): %w", what, strings.Join(held, ", "), kit.ErrRemovalHeld)}
}

// applyStep carries out one step of the plan.
func (r *Reconciler) applyStep(ctx context.Context, set *pvsapi.PackageVariantSet, s pvsexpand.Step) error {
	switch s.Action {
	case pvsexpand.Create:
		return r.create(ctx, s.Desired)
	case pvsexpand.Update:
		return r.update(ctx, set.Namespace, s)
	default:
		child := &pvapi.PackageVariant{}
		child.Namespace, child.Name = set.Namespace, s.Name
		return client.IgnoreNotFound(r.Client.Delete(ctx, child))
	}
}

func (r *Reconciler) create(ctx context.Context, desired *pv.PackageVariant) error {
	child := &pvapi.PackageVariant{Spec: desired.Spec}
	child.Name, child.Namespace, child.Labels = desired.Metadata.Name, desired.Metadata.Namespace, desired.Metadata.Labels
	child.OwnerReferences = api.OwnerRefs(desired.Metadata.OwnerReferences)
	controllerutil.AddFinalizer(child, pv.Finalizer)
	return r.Client.Create(ctx, child)
}

func (r *Reconciler) update(ctx context.Context, namespace string, s pvsexpand.Step) error {
	child := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: s.Name}, child); err != nil {
		return err
	}
	orig := child.DeepCopy()
	child.Spec = s.Desired.Spec
	return r.Client.Patch(ctx, child, client.MergeFrom(orig))
}

// eventNames is how many children an Event names before "and N more".
const eventNames = 10

// recordSteps records one Event per action for the children written:
// "created 3 PackageVariants: a (target ...), b (...), c (...)".
func (r *Reconciler) recordSteps(set *pvsapi.PackageVariantSet, done []pvsexpand.Step) {
	ev := kit.Events{Recorder: r.Recorder}
	for _, a := range []struct {
		action pvsexpand.Action
		reason string
		verb   string
	}{{pvsexpand.Create, EventChildCreated, "created"}, {pvsexpand.Update, EventChildUpdated, "updated"}, {pvsexpand.Remove, EventChildRemoved, "removed"}} {
		var names []string
		n := 0
		for _, s := range done {
			if s.Action != a.action {
				continue
			}
			if n++; len(names) < eventNames {
				name := s.Name
				if a.action == pvsexpand.Remove {
					name += " (its target is gone)"
				} else {
					name += " (target " + s.Where + ")"
				}
				names = append(names, name)
			}
		}
		if n == 0 {
			continue
		}
		more := ""
		if n > len(names) {
			more = fmt.Sprintf(" and %d more", n-len(names))
		}
		noun := "PackageVariants"
		if n == 1 {
			noun = "PackageVariant"
		}
		ev.Normal(set, a.reason, "%s %d %s: %s%s", a.verb, n, noun, strings.Join(names, ", "), more)
	}
}

// AllowMassDeletionAnnotation on a set, "true", lifts its mass-deletion
// guard while it is there; each reconcile then takes the set's size as the
// guard's new baseline (status.peakChildren). Remove it once the removal is
// done.
const AllowMassDeletionAnnotation = "pvkit.dev/allow-mass-deletion"

// massDeletion is the guard against a typo that empties a fleet (a selector
// `env: prd`, repositories losing a label a few at a time): a reconcile
// that would remove more than one child and more than half of them, or
// that would leave the set with less than half of the most children it had
// since the guard was last lifted (status.peakChildren; more than one
// lost), removes none, stalls naming what would go and the drafts that
// hold a person's edits (from each child's status), and applies the rest
// of its plan. The set's annotation, or AllowMassDeletion, lets it
// through and takes the set's new size as the baseline. No peer has this
// (Argo CD users ask for it in argo-cd#18480).
//
// children counts the set's children that are not being deleted already;
// removals of those being deleted are no loss of this reconcile's.
func (r *Reconciler) massDeletion(ctx context.Context, set *pvsapi.PackageVariantSet, steps []pvsexpand.Step, children int, deleting map[string]bool) error {
	var removed []string
	creates := 0
	for _, s := range steps {
		switch s.Action {
		case pvsexpand.Remove:
			if !deleting[s.Name] {
				removed = append(removed, s.Name)
			}
		case pvsexpand.Create:
			creates++
		}
	}
	after := children - len(removed) + creates
	if r.AllowMassDeletion || set.Annotations[AllowMassDeletionAnnotation] == "true" {
		set.Status.PeakChildren = after
		return nil
	}
	peak := max(set.Status.PeakChildren, children, after)
	set.Status.PeakChildren = peak
	loss := peak - after
	once := len(removed) > 1 && 2*len(removed) > children
	overTime := len(removed) > 0 && loss > 1 && 2*loss > peak
	if !once && !overTime {
		return nil
	}
	sort.Strings(removed)
	what := fmt.Sprintf("the set would remove %d of its %d PackageVariants (more than half)", len(removed), children)
	if !once {
		what = fmt.Sprintf("the set would remove %d of its %d PackageVariants, leaving %d of the %d it had since its mass-deletion guard was last lifted (status.peakChildren; more than half lost)",
			len(removed), children, after, peak)
	}
	return kit.Stallf(pvsapi.ReasonMassDeletion,
		"%s; none was removed: %s%s. If that is intended, annotate the set %s=true (pvctl run: --prune=all), and remove the annotation after",
		what, listed(removed), r.editedDrafts(ctx, set.Namespace, removed), AllowMassDeletionAnnotation)
}

// editedDrafts names, from the children's own status, the drafts of the
// children that would go which hold an edit someone made after the
// variant's last write (a person's push): what removing them would lose.
func (r *Reconciler) editedDrafts(ctx context.Context, namespace string, children []string) string {
	var edited []string
	for _, name := range children {
		v := &pvapi.PackageVariant{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, v); err != nil {
			continue
		}
		for _, t := range v.Status.DownstreamTargets {
			if t.Edited {
				edited = append(edited, fmt.Sprintf("%s (%s's)", t.Name, name))
			}
		}
	}
	if len(edited) == 0 {
		return ""
	}
	return fmt.Sprintf("; drafts that hold someone's edits and would go with them: %s", listed(edited))
}

// listed is names joined, at most 20 of them and the count of the rest.
func listed(ns []string) string { return names.Listed(ns, 20) }

func withoutRemovals(steps []pvsexpand.Step) []pvsexpand.Step {
	out := make([]pvsexpand.Step, 0, len(steps))
	for _, s := range steps {
		if s.Action != pvsexpand.Remove {
			out = append(out, s)
		}
	}
	return out
}
