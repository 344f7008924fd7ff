package packagevariant

import (
	"context"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A variant reads its set's annotations (suspend, and the policies a set
// gives its children: drift, observe interval, draft upgrade, required
// provenance) up to five times a reconcile. A set's status names its
// children (a rollout's wave members, up to 5,000), so each read cost as
// much as the set is large: at 5,000 children the reads were 29% of a
// steady resync's CPU and made it grow with the square of the fleet
// (docs/scale.md). The set is now read once per reconcile, from the cache
// without a copy (client.UnsafeDisableDeepCopy: the informer's object
// itself, which nothing here writes to; a client without a cache copies
// it anyway).

type parentKey struct{}

// parentMemo is one reconcile's read of the variant's set.
type parentMemo struct {
	read bool
	set  *pvsapi.PackageVariantSet
}

// withParentMemo gives a reconcile its memo of the set.
func withParentMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, parentKey{}, &parentMemo{})
}

// parentSet is the set that controls v (nil: none, gone, or another set of
// its name), read once per reconcile. The caller reads it, never writes
// it: it may be the cache's own object.
func (r *Reconciler) parentSet(ctx context.Context, v *pvapi.PackageVariant) *pvsapi.PackageVariantSet {
	owner := metav1.GetControllerOf(v)
	if owner == nil || owner.Kind != "PackageVariantSet" {
		return nil
	}
	m, _ := ctx.Value(parentKey{}).(*parentMemo)
	if m != nil && m.read {
		return m.set
	}
	set := &pvsapi.PackageVariantSet{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: v.Namespace, Name: owner.Name}, set, client.UnsafeDisableDeepCopy)
	if err != nil || set.UID != owner.UID {
		set = nil
	}
	if m != nil {
		m.read, m.set = true, set
	}
	return set
}
