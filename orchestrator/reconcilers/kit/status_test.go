package kit

import (
	"context"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A reconcile that read the object before another reconcile's status patch
// landed (a lagging cache) must not overwrite that status: its patch fails
// with a conflict. (A render status was lost that way on a real Porch.)
func TestPatchStatusRefusesAStaleRead(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "v", Namespace: "ns"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(v).WithStatusSubresource(v).Build()
	ctx := context.Background()
	read := func() *pvapi.PackageVariant {
		var got pvapi.PackageVariant
		if err := c.Get(ctx, client.ObjectKeyFromObject(v), &got); err != nil {
			t.Fatal(err)
		}
		return &got
	}
	first, stale := read(), read()
	orig := first.DeepCopy()
	first.Status.DownstreamTargets = []pvapi.DownstreamTarget{{Name: "d"}}
	if err := PatchStatus(ctx, c, orig, first, orig.Status, first.Status); err != nil {
		t.Fatal(err)
	}
	origStale := stale.DeepCopy()
	stale.Status.ObservedGeneration = 7
	if err := PatchStatus(ctx, c, origStale, stale, origStale.Status, stale.Status); !apierrors.IsConflict(err) {
		t.Fatalf("a patch from a stale read: %v, want a conflict", err)
	}
	if got := read(); len(got.Status.DownstreamTargets) != 1 {
		t.Fatalf("the first patch's status was overwritten: %+v", got.Status)
	}
	// The same reconcile's own earlier write (a finalizer) is no conflict.
	fresh := read()
	origFresh := fresh.DeepCopy()
	fresh.Finalizers = []string{"x/y"}
	if err := c.Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Status.ObservedGeneration = 3
	if err := PatchStatus(ctx, c, origFresh, fresh, origFresh.Status, fresh.Status); err != nil {
		t.Fatalf("after its own write: %v", err)
	}
}
