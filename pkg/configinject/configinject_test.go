package configinject

import (
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var config = yaml.MustParse(`apiVersion: fn.pvkit.dev/v1alpha1
kind: ConfigInjection
metadata:
  name: v
  namespace: prod
spec:
  injectors:
  - name: east
  resources:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: east
      namespace: prod
    data:
      db: east-db
`)

// In-process (Porch's files), a file without an injected point keeps its
// exact bytes, as does an injected point that already holds the value.
func TestUntouchedFilesKeepTheirBytes(t *testing.T) {
	files := map[string]string{
		"Kptfile":         "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}   # flow style, odd spacing\nspec:\n    replicas:   1\n",
		"point.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: endpoints\n  annotations:\n    kpt.dev/config-injection: required\ndata:\n  db: local\n",
		"README.md":       "not yaml: [",
	}
	items, err := krm.FilesToItems(files)
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := Run(items, config); len(problems) > 0 {
		t.Fatal(problems)
	}
	out, err := krm.ItemsToFiles(items, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"deployment.yaml", "README.md"} {
		if out[name] != files[name] {
			t.Errorf("%s changed:\n%s", name, out[name])
		}
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: endpoints\n  annotations:\n    kpt.dev/config-injection: required\n    kpt.dev/injected-resource: east\ndata:\n  db: east-db\n"
	if out["point.yaml"] != want {
		t.Errorf("point.yaml =\n%s\nwant\n%s", out["point.yaml"], want)
	}

	// Second run on the written files: nothing changes, not even bytes.
	items, err = krm.FilesToItems(out)
	if err != nil {
		t.Fatal(err)
	}
	summary, problems := Run(items, config)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	again, err := krm.ItemsToFiles(items, out)
	if err != nil {
		t.Fatal(err)
	}
	for name := range out {
		if again[name] != out[name] {
			t.Errorf("second run changed %s:\n%s", name, again[name])
		}
	}
	if want := "1 injection point(s): 1 injected (0 updated, 1 already current), 0 not injected; 0 readiness gate(s) added; 0 candidate(s) in other namespaces ignored"; summary != want {
		t.Errorf("second summary = %q", summary)
	}
}

// The choice is made once per type: two points of one type get the same object.
func TestOneChoicePerType(t *testing.T) {
	items, err := krm.FilesToItems(map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"a.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    kpt.dev/config-injection: optional\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations:\n    kpt.dev/config-injection: optional\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := ConfigFromObject(config)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	r := newResolver(cfg)
	points, _ := FindPoints(items)
	if len(points) != 2 {
		t.Fatalf("points = %d", len(points))
	}
	c1, c2 := r.choose(points[0].typeKey()), r.choose(points[1].typeKey())
	if c1.candidate == nil || c1.candidate != c2.candidate || len(r.chosen) != 1 {
		t.Fatalf("choices %+v %+v, %d computed", c1, c2, len(r.chosen))
	}
}

// Issue 29 #5: no namespace is "default", as kubectl reads it: a candidate
// that names none is in the config's namespace "default", and the same
// object written once with no namespace and once with "default" is one
// object, refused as the same object given twice.
func TestMissingNamespaceIsDefault(t *testing.T) {
	cfg := yaml.MustParse(`apiVersion: fn.pvkit.dev/v1alpha1
kind: ConfigInjection
metadata:
  name: x
spec:
  resources:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: other}}
`)
	c, problems := ConfigFromObject(cfg)
	if len(problems) > 0 || len(c.Candidates) != 2 || c.Ignored != 1 {
		t.Fatalf("candidates %d, ignored %d, problems %v", len(c.Candidates), c.Ignored, problems)
	}
	dup := yaml.MustParse(strings.Replace(cfg.MustString(), "metadata: {name: b, namespace: default}", "metadata: {name: a, namespace: default}", 1))
	_, problems = ConfigFromObject(dup)
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "`spec.resources[1]` is the same object as `spec.resources[0]` (v1 ConfigMap \"a\" in namespace \"default\")") {
		t.Fatalf("problems: %v", problems)
	}
}
