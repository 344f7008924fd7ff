package packagevariant

import (
	"context"
	"fmt"
	"maps"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/provenance"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Events of the drift policies: a draft made to resolve a drift (Normal).
const (
	EventDriftAdopted  = "DriftAdopted"
	EventDriftReverted = "DriftReverted"
)

// resolveDrift (rule drift-policy) acts on the drift of pub, the
// variant's newest published revision, when its policy is adopt or
// revert; ok is false when it has nothing to do (report, or no drift),
// and the reconcile goes on as before. Either policy makes one draft (an
// edit of pub, with observe.DriftResolutionAnnotation and an Event), approved like
// any other; the drift stays reported until it is published. Adopting a
// newer revision writes nothing to the package: the variant owns it and
// goes on from it.
func (r *Reconciler) resolveDrift(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, pub store.Revision) (targets []target, ok bool, err error) {
	policy, _ := observe.DriftPolicy(v)
	if policy == observe.DriftReport {
		return nil, false, nil
	}
	revs, err := r.porch().ListRevisions(ctx, downstreamKey(v))
	if err != nil {
		return nil, false, err
	}
	d, _, err := r.observer().DriftOf(ctx, v, pub, revs)
	if err != nil || d == nil || (policy == observe.DriftAdopt && d.Reason == pvapi.ReasonBranchUnreadable) {
		return nil, false, err // an unreadable branch has nothing to adopt: reported (its message says so)
	}
	if policy == observe.DriftAdopt && d.Reason == pvapi.ReasonNewerRevision {
		rev := d.Rev
		rev.Owners = append(rev.Owners, ownerRef(v))
		rev.Labels = store.Overlay(rev.Labels, v.Spec.Labels)
		rev.Annotations = store.Overlay(rev.Annotations, v.Spec.Annotations)
		if err := r.porch().Update(ctx, rev); err != nil {
			return nil, false, fmt.Errorf("adopting %s (%s: %s): %w", rev.Name, observe.DriftPolicyAnnotation, observe.DriftAdopt, err)
		}
		ctrl.LoggerFrom(ctx).Info("adopted a newer revision made outside the variant", "revision", rev.Name)
		r.events().Normal(v, EventDriftAdopted, "adopted %s, newer than the variant's %s (%s: %s): the variant goes on from it", rev.Name, pub.Name, observe.DriftPolicyAnnotation, observe.DriftAdopt)
		targets, err = r.reconcilePublished(ctx, v, up, rev)
		return targets, true, err
	}
	w := work{origins: r.sourceOrigins(ctx, v, pub)}
	if policy == observe.DriftAdopt {
		branch, of := d.Branch, w.origins
		w.prepare = func(map[string]string) (map[string]string, error) { return maps.Clone(branch), nil }
		w.origins = func(files map[string]string) provenance.Origins { return observe.AdoptedOrigins(d, of(files)) }
	}
	resolution := policy + " of " + d.Rev.Name
	draft, err := r.createDraftAnnotated(ctx, v, store.Task{Type: store.Edit, Source: pub.Name}, map[string]string{observe.DriftResolutionAnnotation: resolution})
	if err != nil {
		return nil, false, err
	}
	event, said := EventDriftReverted, "reverts"
	if policy == observe.DriftAdopt {
		event, said = EventDriftAdopted, "adopts"
	}
	r.events().Normal(v, event, "made draft %s, which %s the drift of %s from %s (%s: %s); approve it like any draft", draft.Name, said, d.Rev.Name, pub.Name, observe.DriftPolicyAnnotation, policy)
	targets, err = r.mutateNewWith(ctx, v, up, draft, pub.Lock, w)
	return targets, true, err
}
