package embedded

import (
	"context"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	pvcore "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"k8s.io/apimachinery/pkg/runtime"
)

// Issue 28 #1: the embedded cluster's schemas are the CRDs' (OpenAPI and
// CEL rules); an update is held only to what it makes worse.
func TestCRDSchemasApplied(t *testing.T) {
	sch, err := crdSchemas()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	set := &pvsapi.PackageVariantSet{}
	set.Name = "s"
	err = sch.validate(ctx, pvsapi.GroupVersion.WithKind("PackageVariantSet"), "s", set, nil)
	if err == nil || !strings.Contains(err.Error(), `PackageVariantSet.config.porch.kpt.dev "s" is invalid`) || !strings.Contains(err.Error(), "spec.targets: Required value") {
		t.Fatalf("a set without upstream or targets: %v", err)
	}
	// Exactly one of upstream and group (rule package-groups): the CRD's
	// CEL rule says so.
	set.Spec.Targets = []v1alpha2.Target{{Repositories: []v1alpha2.RepositoryTarget{{Name: "deploy"}}}}
	for _, c := range []struct {
		what            string
		upstream, group *pvcore.Upstream
	}{
		{"neither upstream nor group", nil, nil},
		{"both", &pvcore.Upstream{Repo: "blueprints", Package: "app"}, &pvcore.Upstream{Repo: "blueprints", Package: "free5gc"}},
	} {
		set.Spec.Upstream, set.Spec.Group = c.upstream, c.group
		err = sch.validate(ctx, pvsapi.GroupVersion.WithKind("PackageVariantSet"), "s", set, nil)
		if err == nil || !strings.Contains(err.Error(), "exactly one of upstream and group (a pvkit extension: a group of packages) must be set") {
			t.Fatalf("a set with %s: %v", c.what, err)
		}
	}
	set.Spec.Upstream, set.Spec.Group = nil, &pvcore.Upstream{Repo: "blueprints", Package: "free5gc"}
	if err := sch.validate(ctx, pvsapi.GroupVersion.WithKind("PackageVariantSet"), "s", set, nil); err != nil {
		t.Fatalf("a set of a group: %v", err)
	}
	set.Spec.Upstream, set.Spec.Group = &pvcore.Upstream{Repo: "blueprints", Package: "app"}, nil
	if err := sch.validate(ctx, pvsapi.GroupVersion.WithKind("PackageVariantSet"), "s", set, nil); err != nil {
		t.Fatalf("a valid set: %v", err)
	}

	bad := &pvapi.PackageVariant{}
	bad.Name = "v"
	bad.Spec.Downstream = &pvcore.Downstream{Repo: "deploy", Package: "../x"}
	gvk := pvapi.GroupVersion.WithKind("PackageVariant")
	if err := sch.validate(ctx, gvk, "v", bad, nil); err == nil || !strings.Contains(err.Error(), `spec.downstream.package: Invalid value: "../x"`) {
		t.Fatalf("a create with a bad package path: %v", err)
	}
	withFinalizer := bad.DeepCopy()
	withFinalizer.Finalizers = []string{"config.porch.kpt.dev/packagevariants"}
	if err := sch.validate(ctx, gvk, "v", withFinalizer, func() (runtime.Object, error) { return bad, nil }); err != nil {
		t.Fatalf("an update that makes nothing worse: %v", err)
	}
	worse := withFinalizer.DeepCopy()
	worse.Spec.Downstream.Repo = "Not A Repo"
	if err := sch.validate(ctx, gvk, "v", worse, func() (runtime.Object, error) { return withFinalizer, nil }); err == nil || !strings.Contains(err.Error(), "spec.downstream.repo") || strings.Contains(err.Error(), "spec.downstream.package") {
		t.Fatalf("an update that makes it worse: %v", err)
	}
}
