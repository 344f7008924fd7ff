package packagevariantset

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/metrics"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// ChildrenFinalizer holds a set's deletion until its children are gone
// (rule set-deletion): a set whose children delete their
// packages (deletionPolicy delete, Porch's default) removes them itself,
// the last wave of its rollout first, each wave only when the one after
// it is gone, under its mass-deletion guard; a set whose every target
// orphans its packages carries none and goes with Kubernetes's garbage
// collector, as Porch's does. (A foreground cascading delete, kubectl
// delete --cascade=foreground, has the garbage collector delete the
// children first, all at once: the order is the background delete's.)
const ChildrenFinalizer = "pvkit.dev/children"

// deletesPackages: some target's children delete their packages when
// they go (their deletionPolicy is delete, or unset: Porch's default).
func deletesPackages(set *pvsapi.PackageVariantSet) bool {
	for _, t := range set.Spec.Targets {
		if t.Template == nil || t.Template.DeletionPolicy == nil || *t.Template.DeletionPolicy != pv.DeletionPolicyOrphan {
			return true
		}
	}
	return false
}

// ensureFinalizer gives a set the finalizer when its children delete
// packages, and takes it away when none does (one metadata patch, only
// when that changes).
func (r *Reconciler) ensureFinalizer(ctx context.Context, set *pvsapi.PackageVariantSet) error {
	want := deletesPackages(set)
	if controllerutil.ContainsFinalizer(set, ChildrenFinalizer) == want {
		return nil
	}
	orig := set.DeepCopy()
	if want {
		controllerutil.AddFinalizer(set, ChildrenFinalizer)
	} else {
		controllerutil.RemoveFinalizer(set, ChildrenFinalizer)
	}
	if err := r.Client.Patch(ctx, set, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("setting the finalizer %s: %w", ChildrenFinalizer, err)
	}
	return nil
}

// reconcileDeletion is a deleted set's reconcile while it holds the
// finalizer: deleteChildren, its outcome in the set's status, until the
// children are gone and the finalizer with them.
func (r *Reconciler) reconcileDeletion(ctx context.Context, set *pvsapi.PackageVariantSet, start time.Time) (ctrl.Result, error) {
	orig := set.DeepCopy()
	gone, outcome := r.deleteChildren(ctx, set)
	if gone {
		r.Metrics.ObserveReconcile("PackageVariantSet", metrics.ResultSuccess, start)
		return ctrl.Result{}, outcome
	}
	return r.finish(ctx, orig, set, outcome, 0, start)
}

// deleteChildren removes a deleted set's children, the last wave of its
// rollout first (children no wave names, which joined after its status
// was written, go with the last), each wave only once the one after it is
// gone (a child goes when its own finalizer has deleted or proposed for
// deletion its packages); a set without a rollout removes them at once.
// Each removal passes the mass-deletion guard as a spec change's does:
// more than one child and more than half of those left, only with the
// set's pvkit.dev/allow-mass-deletion (or pvctl's --prune=all). gone
// reports that the children and the finalizer are gone.
func (r *Reconciler) deleteChildren(ctx context.Context, set *pvsapi.PackageVariantSet) (gone bool, outcome error) {
	existing, deleting, err := r.children(ctx, set)
	if err != nil {
		return false, err
	}
	if len(existing) == 0 {
		orig := set.DeepCopy()
		controllerutil.RemoveFinalizer(set, ChildrenFinalizer)
		return true, client.IgnoreNotFound(r.Client.Patch(ctx, set, client.MergeFrom(orig)))
	}
	groups := deletionOrder(set, existing)
	live := len(existing) - len(deleting)
	for i, g := range groups {
		var going, left []string
		for _, n := range g.names {
			if deleting[n] {
				going = append(going, n)
			} else {
				left = append(left, n)
			}
		}
		rest := upNext(groups[i+1:])
		if len(going) > 0 {
			return false, kit.Retry(pvapi.ReasonDeleting, fmt.Errorf("the set is being deleted: %s: %d PackageVariant(s) on their way out (%s)%s", g.what, len(going), listed(going), rest))
		}
		if len(left) == 0 {
			continue
		}
		if len(left) > 1 && 2*len(left) > live && !r.AllowMassDeletion && set.Annotations[AllowMassDeletionAnnotation] != "true" {
			return false, kit.Stallf(pvsapi.ReasonMassDeletion,
				"the set is being deleted and would remove %d of its %d PackageVariants at once (%s; deletionPolicy delete: their packages go with them); none was removed: %s%s. If that is intended, annotate the set %s=true",
				len(left), live, g.what, listed(left), r.editedDrafts(ctx, set.Namespace, left), AllowMassDeletionAnnotation)
		}
		for _, n := range left {
			child := &pvapi.PackageVariant{}
			child.Namespace, child.Name = set.Namespace, n
			if err := client.IgnoreNotFound(r.Client.Delete(ctx, child)); err != nil {
				return false, fmt.Errorf("deleting PackageVariant %q: %w", n, err)
			}
		}
		kit.Events{Recorder: r.Recorder}.Normal(set, EventChildRemoved, "removed %d PackageVariant(s), %s, the set being deleted: %s%s", len(left), g.what, listed(left), rest)
		return false, kit.Retry(pvapi.ReasonDeleting, fmt.Errorf("the set is being deleted: %s: %d PackageVariant(s) removed (%s)%s", g.what, len(left), listed(left), rest))
	}
	return false, kit.Retry(pvapi.ReasonDeleting, fmt.Errorf("the set is being deleted: waiting for its %d PackageVariant(s) to go", len(existing)))
}

// group is children deleted together: a wave, or all of them.
type group struct {
	what  string
	names []string
}

// deletionOrder is the set's live children in the order they go: the
// units of its rollout's waves, last wave first (a child whose unit no
// wave names, which joined after the status was written, goes with the
// last), each unit's members together; without a rollout, one group. A
// wave's members are units (a child, or a grouped set's target): each
// live child is placed by its own unit (unitOf), not by its name.
func deletionOrder(set *pvsapi.PackageVariantSet, existing []*pv.PackageVariant) []group {
	names := make([]string, 0, len(existing))
	unit := map[string]string{}
	for _, c := range existing {
		names = append(names, c.Metadata.Name)
		unit[c.Metadata.Name] = unitOf(set, c.Metadata.Name, &c.Spec)
	}
	slices.Sort(names)
	ro := set.Status.Rollout
	if set.Spec.Rollout == nil || ro == nil || len(ro.Waves) == 0 {
		return []group{{what: "all of them", names: names}}
	}
	wave := map[string]int{} // unit -> index in the deletion order
	waves := make([]group, 0, len(ro.Waves))
	for i := len(ro.Waves) - 1; i >= 0; i-- {
		for _, m := range ro.Waves[i].Members {
			wave[m] = len(waves)
		}
		waves = append(waves, group{what: "wave " + ro.Waves[i].Name})
	}
	for _, n := range names {
		waves[wave[unit[n]]].names = append(waves[wave[unit[n]]].names, n) // a unit in no wave: 0, the last
	}
	return waves
}

// upNext says which waves go after this one.
func upNext(gs []group) string {
	var next []string
	for _, g := range gs {
		if len(g.names) > 0 {
			next = append(next, strings.TrimPrefix(g.what, "wave "))
		}
	}
	if len(next) == 0 {
		return ""
	}
	return "; then wave(s) " + strings.Join(next, ", ")
}
