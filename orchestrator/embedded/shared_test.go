package embedded

import (
	"context"
	"reflect"
	"strings"
	"testing"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// A list with client.UnsafeDisableDeepCopy is the namespace's objects as
// last listed, filtered by the labels asked, until any write; typed lists
// only (an unstructured list is one Go type for every kind).
func TestNoCopyListsSeeEveryWrite(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{Scheme: scheme})
	ctx := context.Background()
	mk := func(name, group string) {
		t.Helper()
		r := &porchconfig.Repository{}
		r.Name, r.Namespace, r.Labels = name, "default", map[string]string{"group": group}
		if err := c.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	mk("a", "x")
	mk("b", "y")
	names := func(opts ...client.ListOption) string {
		t.Helper()
		var l porchconfig.RepositoryList
		if err := c.List(ctx, &l, append(opts, client.InNamespace("default"), client.UnsafeDisableDeepCopy)...); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range l.Items {
			out = append(out, r.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names(); got != "a,b" {
		t.Fatalf("all: %s", got)
	}
	if got := names(client.MatchingLabels{"group": "y"}); got != "b" {
		t.Fatalf("group y: %s", got)
	}
	if len(c.lists) != 1 {
		t.Fatalf("the namespace's list was not kept: %d lists", len(c.lists))
	}
	mk("c", "y")
	if got := names(client.MatchingLabels{"group": "y"}); got != "b,c" {
		t.Fatalf("after a create: %s", got)
	}
	// A write brings only its object up to date in the kept list (read
	// again, not the whole namespace): an update, a delete, a create.
	kept := c.lists[listKey{reflect.TypeOf(&porchconfig.RepositoryList{}), "default"}]
	r := &porchconfig.Repository{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, r); err != nil {
		t.Fatal(err)
	}
	r.Labels["group"] = "y"
	if err := c.Update(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	mk("aa", "y")
	if got := names(client.MatchingLabels{"group": "y"}); got != "a,aa,c" {
		t.Fatalf("after an update, a delete and a create: %s", got)
	}
	if got := names(); got != "a,aa,c" {
		t.Fatalf("all, after them: %s", got)
	}
	if d := len(c.dirty); d != 0 || c.lists[listKey{reflect.TypeOf(&porchconfig.RepositoryList{}), "default"}] == kept {
		t.Fatalf("the kept list was not brought up to date: %d dirty", d)
	}
	// A write of another kind leaves the list as kept.
	kept = c.lists[listKey{reflect.TypeOf(&porchconfig.RepositoryList{}), "default"}]
	set := &pvsapi.PackageVariantSet{}
	set.Name, set.Namespace = "s", "default"
	set.Spec.Upstream = &pvcore.Upstream{Repo: "r", Package: "p"}
	set.Spec.Targets = []v1alpha2.Target{{Repositories: []v1alpha2.RepositoryTarget{{Name: "a"}}}}
	if err := c.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	if names(); c.lists[listKey{reflect.TypeOf(&porchconfig.RepositoryList{}), "default"}] != kept {
		t.Fatal("a set's write made the Repositories' list be read again")
	}
	var u unstructured.UnstructuredList
	u.SetAPIVersion("config.porch.kpt.dev/v1alpha1")
	u.SetKind("RepositoryList")
	if err := c.List(ctx, &u, client.InNamespace("default"), client.UnsafeDisableDeepCopy); err != nil || len(u.Items) != 3 {
		t.Fatalf("an unstructured list: %d items, %v", len(u.Items), err)
	}
}
