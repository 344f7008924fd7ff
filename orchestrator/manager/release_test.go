package manager

import (
	"bytes"
	"context"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Issue 22 #3: the uninstall step leaves every revision in place and
// ownerless, and every variant without pvkit's finalizer; a dry run says
// so and changes nothing; other owners stay.
func TestRelease(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", UID: "uid-app", Finalizers: []string{pv.Finalizer}}}
	owned := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Name: "deploy.app.packagevariant-1", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: pv.APIVersion, Kind: pv.Kind, Name: "app", UID: "uid-app"}, {APIVersion: "v1", Kind: "ConfigMap", Name: "keep", UID: "uid-cm"}}}}
	other := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Name: "deploy.other.x", Namespace: "ns",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: pv.APIVersion, Kind: pv.Kind, Name: "gone", UID: "uid-gone"}}}}
	set := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "ns", Finalizers: []string{packagevariantset.ChildrenFinalizer}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(v, owned, other, set).Build()
	ctx := context.Background()
	var out bytes.Buffer
	if err := Release(ctx, c, "", true, &out); err != nil {
		t.Fatal(err)
	}
	if out.String() != "would release PackageRevision ns/deploy.app.packagevariant-1 (no PackageVariant owns it now)\nwould remove the finalizer of PackageVariant ns/app\nwould remove the finalizer of PackageVariantSet ns/fleet\n" {
		t.Fatalf("dry run said:\n%s", out.String())
	}
	var got porchapi.PackageRevision
	if err := c.Get(ctx, client.ObjectKeyFromObject(owned), &got); err != nil || len(got.OwnerReferences) != 2 {
		t.Fatalf("a dry run changed %s: %v %+v", got.Name, err, got.OwnerReferences)
	}
	out.Reset()
	if err := Release(ctx, c, "ns", false, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "released PackageRevision ns/deploy.app.packagevariant-1") || !strings.Contains(out.String(), "removed the finalizer of PackageVariant ns/app") {
		t.Fatalf("release said:\n%s", out.String())
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(owned), &got); err != nil || len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Kind != "ConfigMap" {
		t.Fatalf("%s owners: %v %+v", got.Name, err, got.OwnerReferences)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(other), &got); err != nil || len(got.OwnerReferences) != 1 {
		t.Fatalf("a revision owned by no current variant changed: %v %+v", err, got.OwnerReferences)
	}
	var gotS pvsapi.PackageVariantSet
	if err := c.Get(ctx, client.ObjectKeyFromObject(set), &gotS); err != nil || len(gotS.Finalizers) != 0 {
		t.Fatalf("set: %v %+v", err, gotS.Finalizers)
	}
	var gotV pvapi.PackageVariant
	if err := c.Get(ctx, client.ObjectKeyFromObject(v), &gotV); err != nil || len(gotV.Finalizers) != 0 {
		t.Fatalf("variant: %v %+v", err, gotV.Finalizers)
	}
	var prs porchapi.PackageRevisionList
	if err := c.List(ctx, &prs); err != nil || len(prs.Items) != 2 {
		t.Fatalf("release deleted something: %d revisions", len(prs.Items))
	}
}

func TestReleaseMainUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := ReleaseMain(context.Background(), nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "name one namespace (-n NAMESPACE) or all of them (-A)") {
		t.Fatalf("no namespace: exit %d, %q", code, errb.String())
	}
	out.Reset()
	if code := ReleaseMain(context.Background(), []string{"--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Nothing is deleted") {
		t.Fatalf("--help: exit %d, %q", code, out.String())
	}
}
