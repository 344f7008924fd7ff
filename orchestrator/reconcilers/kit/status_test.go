package kit

import (
	"context"
	"errors"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func status(o client.Object) any { return &o.(*pvapi.PackageVariant).Status }

// Issue 61 #1: a status write loses nothing. A reconcile that read the
// object before another write landed (a lagging cache, a spec update)
// must neither overwrite that write's status nor lose its own: its patch
// conflicts, and is rebased on the object as it is now, field by field,
// target by target. (Before, the patch was dropped and the reconcile run
// again; what it had written to Porch was remembered in memory only.)
func TestPatchStatusRebasesAConflict(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "v", Namespace: "ns"},
		Status: pvapi.PackageVariantStatus{DownstreamTargets: []pvapi.DownstreamTarget{{Name: "a", Lifecycle: "Draft"}, {Name: "b"}, {Name: "gone"}}}}
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
	first.Status.DownstreamTargets[0].LastWrite = "sha256:first" // a's digest
	first.Status.DownstreamTargets = append(first.Status.DownstreamTargets, pvapi.DownstreamTarget{Name: "c", LastWrite: "sha256:c"})
	if err := PatchStatus(ctx, c, nil, orig, first, status); err != nil {
		t.Fatal(err)
	}
	origStale := stale.DeepCopy()
	stale.Status.ObservedGeneration = 7
	stale.Status.DownstreamTargets[0].Lifecycle = "Proposed" // a's lifecycle
	stale.Status.DownstreamTargets[1].Revision = 2           // b's
	stale.Status.DownstreamTargets = stale.Status.DownstreamTargets[:2]
	stale.Status.DownstreamTargets = append(stale.Status.DownstreamTargets, pvapi.DownstreamTarget{Name: "d"}) // "gone" removed, d added
	if err := PatchStatus(ctx, c, nil, origStale, stale, status); err != nil {
		t.Fatalf("a patch from a stale read: %v, want it rebased", err)
	}
	got := read().Status
	want := []pvapi.DownstreamTarget{{Name: "a", Lifecycle: "Proposed", LastWrite: "sha256:first"}, {Name: "b", Revision: 2}, {Name: "c", LastWrite: "sha256:c"}, {Name: "d"}}
	if got.ObservedGeneration != 7 || len(got.DownstreamTargets) != len(want) {
		t.Fatalf("status after both: %+v", got)
	}
	for i := range want {
		if g := got.DownstreamTargets[i]; g.Name != want[i].Name || g.Lifecycle != want[i].Lifecycle || g.LastWrite != want[i].LastWrite || g.Revision != want[i].Revision {
			t.Errorf("target %d = %+v, want %+v", i, g, want[i])
		}
	}
	if stale.Status.DownstreamTargets[0].LastWrite != "sha256:first" || stale.ResourceVersion != read().ResourceVersion {
		t.Fatalf("the object does not hold what was written: %+v", stale.Status)
	}
	// The same reconcile's own earlier write (a finalizer) is no conflict.
	fresh := read()
	origFresh := fresh.DeepCopy()
	fresh.Finalizers = []string{"x/y"}
	if err := c.Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Status.ObservedGeneration = 3
	if err := PatchStatus(ctx, c, nil, origFresh, fresh, status); err != nil {
		t.Fatalf("after its own write: %v", err)
	}
}

// A conflict on every try is given up after StatusRebases rebases, as a
// conflict (the reconcile runs again: StatusLost).
func TestPatchStatusGivesUpAfterItsRebases(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "v", Namespace: "ns"}}
	patches := 0
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(v).WithStatusSubresource(v).Build(), interceptor.Funcs{
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			patches++
			return apierrors.NewConflict(schema.GroupResource{Resource: "packagevariants"}, "v", errors.New("modified"))
		}})
	var got pvapi.PackageVariant
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(v), &got); err != nil {
		t.Fatal(err)
	}
	orig := got.DeepCopy()
	got.Status.ObservedGeneration = 1
	if err := PatchStatus(context.Background(), c, nil, orig, &got, status); !StatusLost(err) || patches != 1+StatusRebases {
		t.Fatalf("err %v after %d patches, want a conflict after %d", err, patches, 1+StatusRebases)
	}
}

// Rebase merges keyed lists entry by entry (a condition this reconcile
// changed whole) and replaces other lists whole.
func TestRebase(t *testing.T) {
	type st struct {
		Conditions []metav1.Condition `json:"conditions,omitempty"`
		Other      []string           `json:"other,omitempty"`
		N          int                `json:"n,omitempty"`
	}
	before := st{Conditions: []metav1.Condition{{Type: "Ready", Status: "False"}, {Type: "Stalled", Status: "True"}}, Other: []string{"a"}, N: 1}
	after := st{Conditions: []metav1.Condition{{Type: "Ready", Status: "True"}}, Other: []string{"b"}, N: 1}
	fresh := st{Conditions: []metav1.Condition{{Type: "Extra", Status: "True"}, {Type: "Ready", Status: "False", Message: "theirs"}, {Type: "Stalled", Status: "True"}}, Other: []string{"c"}, N: 5}
	var out st
	if err := Rebase(&before, &after, &fresh, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Conditions) != 2 || out.Conditions[0].Type != "Extra" || out.Conditions[1].Type != "Ready" || out.Conditions[1].Status != "True" || out.Conditions[1].Message != "" {
		t.Fatalf("conditions: %+v", out.Conditions)
	}
	if len(out.Other) != 1 || out.Other[0] != "b" || out.N != 5 {
		t.Fatalf("out: %+v", out)
	}
}
