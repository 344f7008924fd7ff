package variant

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
)

// Validate is the one check of a variant's spec (issue 20 #1): its own
// checks and the chain's constructors', each problem with its field path.
func TestValidateFieldPaths(t *testing.T) {
	up := &pv.Upstream{Repo: "blueprints", Package: "app"}
	down := &pv.Downstream{Repo: "deploy", Package: "app"}
	for _, tt := range []struct {
		name string
		spec pv.PackageVariantSpec
		want [][2]string // field, message
	}{
		{"valid", pv.PackageVariantSpec{Upstream: up, Downstream: down}, nil},
		{"missing ends", pv.PackageVariantSpec{}, [][2]string{
			{"spec.upstream", "`spec.upstream` must be set"},
			{"spec.downstream", "`spec.downstream` must be set"}}},
		{"names", pv.PackageVariantSpec{Upstream: &pv.Upstream{Repo: "Blue", Package: "a//b", Revision: -2}, Downstream: &pv.Downstream{}}, [][2]string{
			{"spec.upstream.repo", "`spec.upstream.repo` must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found \"Blue\""},
			{"spec.upstream.package", "`spec.upstream.package` must not have an empty segment, found \"a//b\""},
			{"spec.upstream.revision", "`spec.upstream.revision` must be a published revision number (1 or more), or -1 for the branch placeholder (Porch's `main`), found -2"},
			{"spec.downstream.repo", "`spec.downstream.repo` must not be empty"},
			{"spec.downstream.package", "`spec.downstream.package` must not be empty"}}},
		{"policies", pv.PackageVariantSpec{Upstream: up, Downstream: down, AdoptionPolicy: "all", DeletionPolicy: "keep"}, [][2]string{
			{"spec.adoptionPolicy", "`spec.adoptionPolicy` must be \"adoptNone\" or \"adoptExisting\", found \"all\""},
			{"spec.deletionPolicy", "`spec.deletionPolicy` must be \"delete\" or \"orphan\", found \"keep\""}}},
		{"the functions' checks", pv.PackageVariantSpec{Upstream: up, Downstream: down,
			PackageContext: &pv.PackageContext{Data: map[string]string{"name": "x"}, RemoveKeys: []string{"ok", "bad key"}},
			Pipeline:       &pv.Pipeline{Validators: []pv.Function{{Image: "a", Exec: "b"}}},
			Injectors:      []pv.InjectionSelector{{Name: ""}}}, [][2]string{
			{"spec.packageContext.data.name", "`spec.packageContext.data` must not contain the reserved key \"name\" (kpt and Porch set it)"},
			{"spec.packageContext.removeKeys[1]", "`spec.packageContext.removeKeys[1]` must consist of alphanumeric characters, '-', '_' or '.'"},
			{"spec.pipeline.validators[0]", "`spec.pipeline.validators[0]` must specify only one of `image` and `exec`"},
			{"spec.injectors[0].name", "`spec.injectors[0].name` must not be empty"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got [][2]string
			for _, p := range Validate(&pv.PackageVariant{Metadata: pvMeta("v"), Spec: tt.spec}) {
				if p.Object != nil {
					t.Errorf("a typed problem names a YAML object: %+v", p)
				}
				got = append(got, [2]string{p.Field, p.Message})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("problems (-want +got):\n%s", diff)
			}
			invalid := krm.InvalidFrom(Validate(&pv.PackageVariant{Metadata: pvMeta("v"), Spec: tt.spec}))
			if (invalid == nil) != (tt.want == nil) {
				t.Fatalf("InvalidFrom = %v", invalid)
			}
		})
	}
}

func pvMeta(name string) meta.ObjectMeta { return meta.ObjectMeta{Name: name, Namespace: "default"} }
