package packagevariant

import (
	"context"
	"fmt"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EventPublishedDrift (Warning): the downstream package has a newer
// published revision the variant did not make.
const EventPublishedDrift = "PublishedDrift"

// observeDrift (rule: published-drift) reports, for each Published target
// of the variant, a newer published revision of its package that the
// variant does not own (a person's copy and approval: `porchctl rpkg copy`
// and approve, as Nephio scales a workload): the target's Drift, the
// condition PublishedDrift and, when it appears, a Warning Event. pvkit
// changes nothing: the variant's next upgrade would start from its own
// revision, and a person decides whose content wins. One listing of the
// package, only for a variant with a Published target; a steady resync
// writes nothing.
func (r *Reconciler) observeDrift(ctx context.Context, v *pvapi.PackageVariant) error {
	var revs []store.Revision
	listed := false
	drifted := ""
	for i := range v.Status.DownstreamTargets {
		t := &v.Status.DownstreamTargets[i]
		if t.Lifecycle != string(store.Published) || t.Revision <= 0 {
			t.Drift = nil
			continue
		}
		if !listed {
			var err error
			if revs, err = r.Store.ListRevisions(ctx, downstreamKey(v)); err != nil {
				return err
			}
			listed = true
		}
		d := newerOutside(v, t, revs)
		switch {
		case d == nil:
			t.Drift = nil
			continue
		case t.Drift == nil || *t.Drift != *d:
			if t.Drift == nil {
				r.events().Warning(v, EventPublishedDrift, "%s", d.Message)
			}
			t.Drift = d
		}
		drifted = t.Drift.Message
	}
	if drifted == "" {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, pvapi.ConditionPublishedDrift)
		return nil
	}
	kit.Set(&v.Status.Conditions, v.Generation, r.Clock, pvapi.ConditionPublishedDrift, metav1.ConditionTrue, pvapi.ReasonNewerRevision, drifted)
	return nil
}

// newerOutside is the drift of a published target: the newest published
// revision of its package, newer than it, that the variant does not own
// (nil when there is none).
func newerOutside(v *pvapi.PackageVariant, t *pvapi.DownstreamTarget, revs []store.Revision) *pvapi.TargetDrift {
	var newest *store.Revision
	for i := range revs {
		r := &revs[i]
		if r.Lifecycle.IsPublished() && r.Revision > t.Revision && !r.OwnedBy(string(v.UID)) && (newest == nil || r.Revision > newest.Revision) {
			newest = r
		}
	}
	if newest == nil {
		return nil
	}
	return &pvapi.TargetDrift{Reason: pvapi.ReasonNewerRevision, Revision: newest.Name,
		Message: fmt.Sprintf("%s (revision %d of %s in %s) is newer than the variant's %s (revision %d) and was not made by it: "+
			"the variant's next upgrade starts from its own revision; carry the change into the variant or the blueprint, or delete %s",
			newest.Name, newest.Revision, newest.Package, newest.Repository, t.Name, t.Revision, newest.Name)}
}
