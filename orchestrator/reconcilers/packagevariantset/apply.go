package packagevariantset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

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
	child.Name, child.Namespace, child.Labels, child.Annotations = desired.Metadata.Name, desired.Metadata.Namespace, desired.Metadata.Labels, desired.Metadata.Annotations
	child.OwnerReferences = api.OwnerRefs(desired.Metadata.OwnerReferences)
	controllerutil.AddFinalizer(child, pv.Finalizer)
	err := r.Client.Create(ctx, child)
	if apierrors.IsAlreadyExists(err) && r.Shard != nil {
		return r.takeBack(ctx, desired, err)
	}
	return err
}

// takeBack handles a child that exists though this shard's cache does not
// show it: a child of this set relabelled to another shard (by a person,
// or a hand-over not yet finished) is labelled back to the set's shard (a
// set and its children share one); anything else is the create's error.
func (r *Reconciler) takeBack(ctx context.Context, desired *pv.PackageVariant, createErr error) error {
	cur := &pvapi.PackageVariant{}
	if err := r.reader().Get(ctx, client.ObjectKey{Namespace: desired.Metadata.Namespace, Name: desired.Metadata.Name}, cur); err != nil {
		return errors.Join(createErr, err)
	}
	if cur.Labels[v1alpha2.SetLabel] != desired.Metadata.Labels[v1alpha2.SetLabel] {
		return createErr
	}
	want := desired.Metadata.Labels[v1alpha2.ShardLabel]
	if cur.Labels[v1alpha2.ShardLabel] == want {
		return nil // the cache has not shown it yet: it comes
	}
	return r.relabel(ctx, cur, want)
}

// relabel moves a child to shard want ("": the unlabelled shard).
func (r *Reconciler) relabel(ctx context.Context, child *pvapi.PackageVariant, want string) error {
	from := child.Labels[v1alpha2.ShardLabel]
	orig := child.DeepCopy()
	setShard(child, want)
	if err := r.Client.Patch(ctx, child, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("moving PackageVariant %s from %s to %s: %w", child.Name, kit.ShardName(from), kit.ShardName(want), err)
	}
	ctrl.LoggerFrom(ctx).Info("moved a child to its set's shard", "packageVariant", child.Name, "from", kit.ShardName(from), "to", kit.ShardName(want))
	return nil
}

// setShard sets an object's shard label to want, or removes it for "".
func setShard(o client.Object, want string) {
	l := o.GetLabels()
	if want == "" {
		delete(l, v1alpha2.ShardLabel)
	} else {
		if l == nil {
			l = map[string]string{}
		}
		l[v1alpha2.ShardLabel] = want
	}
	o.SetLabels(l)
}

func (r *Reconciler) update(ctx context.Context, namespace string, s pvsexpand.Step) error {
	child := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: s.Name}, child); err != nil {
		return err
	}
	orig := child.DeepCopy()
	child.Spec = s.Desired.Spec
	if !pvsexpand.SameMetadata(s.Current, s.Desired) { // its shard label, the target's labels it copies (rule child-labels)
		labels, ann := pvsexpand.ChildMetadata(s.Current, s.Desired).Apply(child.Labels, child.Annotations)
		child.SetLabels(labels)
		child.SetAnnotations(ann)
	}
	return r.Client.Patch(ctx, child, client.MergeFrom(orig))
}

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
func listed(ns []string) string { return krm.Listed(ns, 20) }

func withoutRemovals(steps []pvsexpand.Step) []pvsexpand.Step {
	out := make([]pvsexpand.Step, 0, len(steps))
	for _, s := range steps {
		if s.Action != pvsexpand.Remove {
			out = append(out, s)
		}
	}
	return out
}
