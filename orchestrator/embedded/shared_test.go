package embedded

import (
	"context"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/api"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	pvcore "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A read with client.UnsafeDisableDeepCopy is served again without
// decoding (as an informer serves it) until a write to the object, its
// spec, metadata or status, or its deletion; a plain read always decodes.
func TestNoCopyReadsSeeEveryWrite(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Scheme: scheme})
	ctx := context.Background()
	set := &pvsapi.PackageVariantSet{}
	set.Name, set.Namespace = "s", "default"
	set.Spec.Upstream = &pvcore.Upstream{Repo: "blueprints", Package: "app"}
	set.Spec.Targets = []v1alpha2.Target{{Repositories: []v1alpha2.RepositoryTarget{{Name: "deploy"}}}}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(set)
	read := func() *pvsapi.PackageVariantSet {
		t.Helper()
		got := &pvsapi.PackageVariantSet{}
		if err := c.Get(ctx, key, got, client.UnsafeDisableDeepCopy); err != nil {
			t.Fatal(err)
		}
		return got
	}
	a, b := read(), read()
	if a.Annotations["x"] != "" || b.ResourceVersion != a.ResourceVersion {
		t.Fatalf("two reads: %q, %q", a.ResourceVersion, b.ResourceVersion)
	}
	if _, ok := c.shared[key]; !ok {
		t.Fatal("a no-copy read was not kept")
	}
	// A metadata write.
	cur := &pvsapi.PackageVariantSet{}
	if err := c.Get(ctx, key, cur); err != nil {
		t.Fatal(err)
	}
	cur.Annotations = map[string]string{"pvkit.dev/suspend": "true"}
	if err := c.Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if got := read(); got.Annotations["pvkit.dev/suspend"] != "true" {
		t.Fatalf("after an update: %v", got.Annotations)
	}
	// A status write.
	before := read()
	cur = read().DeepCopy()
	cur.Status.PeakChildren = 7
	if err := c.Status().Update(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if got := read(); got.Status.PeakChildren != 7 || got.ResourceVersion == before.ResourceVersion {
		t.Fatalf("after a status write: %+v", got.Status)
	}
	// Deleted: not found, not the kept one.
	if err := c.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, key, &pvsapi.PackageVariantSet{}, client.UnsafeDisableDeepCopy); err == nil {
		t.Fatal("a deleted set read without a copy")
	}
}
