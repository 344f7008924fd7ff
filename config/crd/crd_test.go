package crd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// porchCRD reads Porch v1.5.3's own CRD from the module cache (the version
// go.mod requires), as Porch's install applies it.
func porchCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", "github.com/nephio-project/porch").Output()
	if err != nil {
		t.Fatalf("go list -m github.com/nephio-project/porch: %v", err)
	}
	version, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if version != "v1.5.3" {
		t.Fatalf("go.mod requires Porch %s: the README's supported versions and this test say v1.5.3", version)
	}
	if dir == "" {
		t.Skip("SKIP: Porch's module is not in the module cache (go mod download github.com/nephio-project/porch)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "controllers/config/crd/bases", file))
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, "porch:"+file, b)
}

func decode(t *testing.T, name string, b []byte) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := sigsyaml.Unmarshal(b, crd); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return crd
}

// deref turns a validation keyword into a comparable value ("" when unset).
func deref(v any) string {
	switch p := v.(type) {
	case *float64:
		if p != nil {
			return fmt.Sprint(*p)
		}
	case *int64:
		if p != nil {
			return fmt.Sprint(*p)
		}
	case string:
		return p
	}
	return ""
}

// superset lists where ours would lose or refuse what Porch's schema keeps:
// a property Porch has and ours has not (the API server would prune it), a
// different type or format, an enum value Porch takes and ours does not, and
// unknown fields Porch preserves and ours prunes.
func superset(path string, porch, ours *apiextensionsv1.JSONSchemaProps) []string {
	if porch == nil {
		return nil
	}
	if ours == nil {
		return []string{path + ": missing"}
	}
	var diffs []string
	if porch.Type != ours.Type {
		diffs = append(diffs, fmt.Sprintf("%s: type %q, Porch's is %q", path, ours.Type, porch.Type))
	}
	if porch.Format != ours.Format {
		diffs = append(diffs, fmt.Sprintf("%s: format %q, Porch's is %q", path, ours.Format, porch.Format))
	}
	if len(ours.Enum) > 0 {
		var have []string
		for _, e := range ours.Enum {
			have = append(have, string(e.Raw))
		}
		for _, e := range porch.Enum {
			if !slices.Contains(have, string(e.Raw)) {
				diffs = append(diffs, fmt.Sprintf("%s: enum lacks Porch's %s", path, e.Raw))
			}
		}
		if len(porch.Enum) == 0 {
			diffs = append(diffs, fmt.Sprintf("%s: + enum %s", path, strings.Join(have, ",")))
		}
	}
	// What ours adds: validation Porch's schema has not. Each is listed in
	// TestCRDIsASupersetOfPorchs with its reason.
	for _, a := range []struct {
		name        string
		porch, ours any
	}{
		{"minimum", porch.Minimum, ours.Minimum}, {"maximum", porch.Maximum, ours.Maximum},
		{"minLength", porch.MinLength, ours.MinLength}, {"maxLength", porch.MaxLength, ours.MaxLength},
		{"minItems", porch.MinItems, ours.MinItems}, {"maxItems", porch.MaxItems, ours.MaxItems},
		{"maxProperties", porch.MaxProperties, ours.MaxProperties}, {"pattern", porch.Pattern, ours.Pattern},
	} {
		if p, o := deref(a.porch), deref(a.ours); p != o {
			diffs = append(diffs, fmt.Sprintf("%s: + %s %v", path, a.name, o))
		}
	}
	for _, r := range ours.Required {
		if !slices.Contains(porch.Required, r) {
			diffs = append(diffs, fmt.Sprintf("%s: + required %s", path, r))
		}
	}
	for _, r := range porch.Required {
		if !slices.Contains(ours.Required, r) {
			diffs = append(diffs, fmt.Sprintf("%s: - required %s", path, r))
		}
	}
	if len(ours.XValidations) > len(porch.XValidations) {
		for _, v := range ours.XValidations[len(porch.XValidations):] {
			diffs = append(diffs, fmt.Sprintf("%s: + x-kubernetes-validations %q", path, v.Message))
		}
	}
	if p := porch.XPreserveUnknownFields; p != nil && *p && (ours.XPreserveUnknownFields == nil || !*ours.XPreserveUnknownFields) {
		diffs = append(diffs, path+": prunes unknown fields Porch's keeps")
	}
	if porch.XIntOrString != ours.XIntOrString {
		diffs = append(diffs, fmt.Sprintf("%s: int-or-string %v, Porch's %v", path, ours.XIntOrString, porch.XIntOrString))
	}
	names := make([]string, 0, len(porch.Properties))
	var added []string
	for n := range ours.Properties {
		if _, ok := porch.Properties[n]; !ok {
			added = append(added, n)
		}
	}
	sort.Strings(added)
	for _, n := range added {
		diffs = append(diffs, fmt.Sprintf("%s.%s: + field", path, n))
	}
	for n := range porch.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := porch.Properties[n]
		var o *apiextensionsv1.JSONSchemaProps
		if v, ok := ours.Properties[n]; ok {
			o = &v
		}
		diffs = append(diffs, superset(path+"."+n, &p, o)...)
	}
	if porch.Items != nil && porch.Items.Schema != nil {
		var o *apiextensionsv1.JSONSchemaProps
		if ours.Items != nil {
			o = ours.Items.Schema
		}
		diffs = append(diffs, superset(path+"[]", porch.Items.Schema, o)...)
	}
	if porch.AdditionalProperties != nil && porch.AdditionalProperties.Schema != nil {
		var o *apiextensionsv1.JSONSchemaProps
		if ours.AdditionalProperties != nil {
			o = ours.AdditionalProperties.Schema
		}
		diffs = append(diffs, superset(path+"{}", porch.AdditionalProperties.Schema, o)...)
	}
	return diffs
}

// Issue 32 #3: pvkit's CRDs replace Porch's CRDs of the same name, so every
// object Porch's controllers read must round-trip through them: every served
// version of Porch's served by ours with the same storage version, every
// field with its type and format, every enum value, preserved unknown fields
// preserved, the same scope, names and status subresource. What ours adds is
// validation only (config/crd/crdtest/cases.yaml lists what it refuses).
func TestCRDIsASupersetOfPorchs(t *testing.T) {
	for _, tc := range []struct {
		file string
		ours []byte
	}{
		{"config.porch.kpt.dev_packagevariants.yaml", PackageVariants},
		{"config.porch.kpt.dev_packagevariantsets.yaml", PackageVariantSets},
	} {
		t.Run(tc.file, func(t *testing.T) {
			porch, ours := porchCRD(t, tc.file), decode(t, tc.file, tc.ours)
			if porch.Name != ours.Name || porch.Spec.Group != ours.Spec.Group || porch.Spec.Scope != ours.Spec.Scope || porch.Spec.Names.Kind != ours.Spec.Names.Kind ||
				porch.Spec.Names.Plural != ours.Spec.Names.Plural || porch.Spec.Names.ListKind != ours.Spec.Names.ListKind {
				t.Fatalf("not the same resource: ours %s %s %+v, Porch's %s %s %+v", ours.Name, ours.Spec.Scope, ours.Spec.Names, porch.Name, porch.Spec.Scope, porch.Spec.Names)
			}
			for _, short := range porch.Spec.Names.ShortNames {
				if !slices.Contains(ours.Spec.Names.ShortNames, short) {
					t.Errorf("short name %q of Porch's is missing", short)
				}
			}
			served, added := 0, []string{}
			for _, pv := range porch.Spec.Versions {
				if !pv.Served {
					continue // Porch's own install serves it not: no object is read in it
				}
				served++
				i := slices.IndexFunc(ours.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == pv.Name })
				if i < 0 {
					t.Errorf("version %s is served by Porch's and missing from ours", pv.Name)
					continue
				}
				ov := ours.Spec.Versions[i]
				if !ov.Served || ov.Storage != pv.Storage {
					t.Errorf("version %s: ours served %v storage %v, Porch's served %v storage %v", pv.Name, ov.Served, ov.Storage, pv.Served, pv.Storage)
				}
				if (pv.Subresources != nil && pv.Subresources.Status != nil) != (ov.Subresources != nil && ov.Subresources.Status != nil) {
					t.Errorf("version %s: the status subresource differs from Porch's", pv.Name)
				}
				for _, d := range superset(pv.Name, pv.Schema.OpenAPIV3Schema, ov.Schema.OpenAPIV3Schema) {
					if strings.Contains(d, ": + ") || strings.Contains(d, ": - required ") {
						added = append(added, d)
					} else {
						t.Errorf("Porch's %s round-trips not: %s", tc.file, d)
					}
				}
			}
			if served == 0 {
				t.Fatalf("Porch's %s serves no version", tc.file)
			}
			// What ours adds, each line reviewed: validation (an object Porch's
			// controller would stall on is refused at admission instead) and
			// pvkit's extension fields (pruned where Porch's copy is installed).
			golden := filepath.Join("testdata", "adds-to-porch-v1.5.3", strings.TrimSuffix(tc.file, ".yaml")+".txt")
			got := "# What pvkit's " + tc.file + " adds to Porch v1.5.3's (TestCRDIsASupersetOfPorchs).\n" +
				"# +: validation or a field Porch's has not; - required: a field Porch's requires and pvkit's does not.\n" +
				strings.Join(added, "\n") + "\n"
			if os.Getenv("PVKIT_UPDATE_GOLDEN") != "" {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (PVKIT_UPDATE_GOLDEN=1 writes it)", err)
			}
			if got != string(want) {
				t.Errorf("what pvkit's CRD adds to Porch's changed; review it and PVKIT_UPDATE_GOLDEN=1 go test ./config/crd/ to accept:\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// The comparison finds what it is for: a field dropped, a type changed, an
// enum value lost, pruning where Porch's keeps.
func TestSupersetFindsTheDifferences(t *testing.T) {
	yes := true
	porch := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"a": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"x"`)}, {Raw: []byte(`"y"`)}}},
		"b": {Type: "integer", Format: "int64"},
		"c": {Type: "object", XPreserveUnknownFields: &yes},
		"d": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"e": {Type: "string"}}}}},
		"f": {Type: "string"},
	}}
	ours := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"a": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"x"`)}}},
		"b": {Type: "string"},
		"c": {Type: "object"},
		"d": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}},
		"f": {Type: "string", Enum: []apiextensionsv1.JSON{{Raw: []byte(`"z"`)}}},
	}}
	got := superset("v1", porch, ours)
	want := []string{
		`v1.a: enum lacks Porch's "y"`,
		`v1.b: type "string", Porch's is "integer"`,
		`v1.b: format "", Porch's is "int64"`,
		`v1.c: prunes unknown fields Porch's keeps`,
		`v1.d[].e: missing`,
		`v1.f: + enum "z"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("superset =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := superset("v1", porch, porch); len(d) != 0 {
		t.Errorf("a schema is not a superset of itself: %q", d)
	}
}
