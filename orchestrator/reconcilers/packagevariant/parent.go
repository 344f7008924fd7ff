package packagevariant

import (
	"context"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
