package packagecontext

import (
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var config = yaml.MustParse(`apiVersion: fn.pvkit.dev/v1alpha1
kind: PackageContext
metadata:
  name: ctx
spec:
  data:
    env: prod
`)

// In-process, the package arrives as files (Porch's PackageRevisionResources):
// a package context that does not parse is reported naming the file, the
// reference's "failed to parse" case.
func TestMalformedContextFileInProcess(t *testing.T) {
	files := map[string]string{
		"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: [app\n",
	}
	_, err := krm.FilesToItems(files)
	want := `failed to parse "package-context.yaml": MalformedYAMLError: yaml: line 5: did not find expected ',' or ']'`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

// Only package-context.yaml changes; every other file keeps its bytes.
func TestRunOnFiles(t *testing.T) {
	files := map[string]string{
		"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app   # spacing kept\n",
		"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: app\n",
	}
	items, err := krm.FilesToItems(files)
	if err != nil {
		t.Fatal(err)
	}
	summary, problems := Run(items, config)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	if want := `ConfigMap "kptfile.kpt.dev" in "package-context.yaml": 1 key(s) added, 0 updated, 0 removed, 0 unchanged`; summary != want {
		t.Errorf("summary = %q, want %q", summary, want)
	}
	out, err := krm.ItemsToFiles(items, files)
	if err != nil {
		t.Fatal(err)
	}
	if out["Kptfile"] != files["Kptfile"] {
		t.Errorf("Kptfile rewritten:\n%s", out["Kptfile"])
	}
	if want := files["package-context.yaml"] + "  env: prod\n"; out["package-context.yaml"] != want {
		t.Errorf("package-context.yaml =\n%s\nwant\n%s", out["package-context.yaml"], want)
	}
}
