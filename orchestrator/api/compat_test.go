// Package api_test checks the orchestrator's API against Porch v1.5.3's
// (rule: porch-yaml): Porch's YAML decodes unchanged, and every field
// of Porch's CRD schemas exists in pvkit's with the same type.
package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	porchpv "github.com/nephio-project/porch/controllers/packagevariants/api/v1alpha1"
	porchpvs "github.com/nephio-project/porch/controllers/packagevariantsets/api/v1alpha2"
	pv "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvs "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"sigs.k8s.io/yaml"
)

// porchDir is Porch v1.5.3 in the module cache.
func porchDir(t *testing.T) string {
	t.Helper()
	out, err := goModDir("github.com/nephio-project/porch")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// samples are Porch's own PackageVariant and PackageVariantSet YAMLs, and the
// ones in this repository.
func samples(t *testing.T) []string {
	porch := porchDir(t)
	files := []string{
		filepath.Join(porch, "controllers/packagevariants/config/samples/dp.yaml"),
		filepath.Join(porch, "controllers/packagevariantsets/config/samples/pvs-v1alpha2.yaml"),
		filepath.Join(porch, "examples/tutorials/starting-with-porch/name-namespace-variant.yaml"),
		filepath.Join(porch, "examples/tutorials/starting-with-porch/simple-variant.yaml"),
	}
	for _, g := range []string{"../../examples/*.yaml", "../../functions/*/testdata/*/fnconfig.yaml", "../../functions/pvs-expand/testdata/*/expected/packagevariants/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	return files
}

var versionedRevision = regexp.MustCompile(`(?m)^(\s+revision:\s+)v(\d+)\s*$`)

// TestPorchYAMLDecodesUnchanged decodes every sample with Porch's types and
// with pvkit's: both must fail alike or both give the same JSON. Porch's own
// samples still write `revision: v3`, which both reject (the field is an
// integer); they are compared again with the number.
func TestPorchYAMLDecodesUnchanged(t *testing.T) {
	n := 0
	for _, f := range samples(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---")) {
			for _, variant := range [][]byte{doc, versionedRevision.ReplaceAll(doc, []byte("${1}${2}"))} {
				var head struct{ APIVersion, Kind string }
				if yaml.Unmarshal(variant, &head) != nil {
					continue
				}
				var theirs, ours any
				switch head.APIVersion + " " + head.Kind {
				case "config.porch.kpt.dev/v1alpha1 PackageVariant":
					theirs, ours = &porchpv.PackageVariant{}, &pv.PackageVariant{}
				case "config.porch.kpt.dev/v1alpha2 PackageVariantSet":
					theirs, ours = &porchpvs.PackageVariantSet{}, &pvs.PackageVariantSet{}
				default:
					continue
				}
				n++
				errTheirs, errOurs := yaml.Unmarshal(variant, theirs), yaml.Unmarshal(variant, ours)
				if (errTheirs == nil) != (errOurs == nil) {
					t.Errorf("%s[%d]: Porch's types: %v; pvkit's: %v", f, i, errTheirs, errOurs)
					continue
				}
				if errTheirs != nil {
					continue
				}
				// pvkit may keep more (the kpt function `tag` Porch v1.5.3
				// drops); everything Porch keeps, pvkit keeps the same.
				if missing := lost(canonical(t, theirs), canonical(t, ours), ""); len(missing) > 0 {
					t.Errorf("%s[%d]: pvkit's types lose or change what Porch's keep: %s", f, i, strings.Join(missing, "; "))
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d samples checked", n)
	}
}

// lost lists the paths where ours does not hold theirs.
func lost(theirs, ours any, path string) []string {
	switch a := theirs.(type) {
	case map[string]any:
		b, ok := ours.(map[string]any)
		if !ok {
			return []string{path + " is not a map"}
		}
		var out []string
		for k, v := range a {
			out = append(out, lost(v, b[k], path+"."+k)...)
		}
		sort.Strings(out)
		return out
	case []any:
		b, ok := ours.([]any)
		if !ok || len(a) != len(b) {
			return []string{path + " differs"}
		}
		var out []string
		for i := range a {
			out = append(out, lost(a[i], b[i], path+"["+strconv.Itoa(i)+"]")...)
		}
		return out
	}
	if !cmp.Equal(theirs, ours) {
		return []string{path + ": " + fmt.Sprint(theirs) + " became " + fmt.Sprint(ours)}
	}
	return nil
}

func canonical(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCRDSchemasExtendPorch: every property of Porch's CRD schemas exists in
// pvkit's, with the same type; pvkit may add properties, never drop or
// retype one.
func TestCRDSchemasExtendPorch(t *testing.T) {
	porch := porchDir(t)
	for _, name := range []string{"config.porch.kpt.dev_packagevariants.yaml", "config.porch.kpt.dev_packagevariantsets.yaml"} {
		theirs := schemas(t, filepath.Join(porch, "controllers/config/crd/bases", name))
		ours := schemas(t, filepath.Join("../../config/crd", name))
		for version, schema := range theirs {
			if version == "v1alpha1" && strings.Contains(name, "packagevariantsets") {
				continue // Porch's v1alpha1 sets are neither served nor stored
			}
			mine, ok := ours[version]
			if !ok {
				t.Errorf("%s: version %s missing", name, version)
				continue
			}
			for path, typ := range flatten(schema, "") {
				if got, ok := flatten(mine, "")[path]; !ok {
					t.Errorf("%s %s: %s is missing", name, version, path)
				} else if got != typ {
					t.Errorf("%s %s: %s is %q, Porch's is %q", name, version, path, got, typ)
				}
			}
		}
	}
}

func schemas(t *testing.T, file string) map[string]map[string]any {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, v := range crd.Spec.Versions {
		out[v.Name] = v.Schema.OpenAPIV3Schema
	}
	return out
}

// flatten maps each property path of a schema to its type.
func flatten(s map[string]any, prefix string) map[string]string {
	out := map[string]string{}
	if typ, ok := s["type"].(string); ok {
		out[prefix] = typ
	}
	if props, ok := s["properties"].(map[string]any); ok {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for p, typ := range flatten(props[k].(map[string]any), prefix+"."+k) {
				out[p] = typ
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		for p, typ := range flatten(items, prefix+"[]") {
			out[p] = typ
		}
	}
	if add, ok := s["additionalProperties"].(map[string]any); ok {
		for p, typ := range flatten(add, prefix+"{}") {
			out[p] = typ
		}
	}
	return out
}
