package pipelineprepend

import (
	"strings"
	"testing"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const kptfileText = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
pipeline:
  mutators:
  - image: gcr.io/kpt-fn/set-labels:v0.2 # the user's
`

func pvConfig(t *testing.T, owner, fnName string) *yaml.RNode {
	t.Helper()
	return yaml.MustParse(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: ` + owner + `
spec:
  pipeline:
    mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      name: ` + fnName + `
      configMap:
        namespace: prod
`)
}

func items(t *testing.T) []*yaml.RNode {
	t.Helper()
	it, err := krm.FilesToItems(map[string]string{"Kptfile": kptfileText})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func mutatorNames(t *testing.T, items []*yaml.RNode) []string {
	t.Helper()
	var names []string
	for _, e := range krm.Lookup(items[0].YNode(), "pipeline", "mutators").Content {
		n, _ := krm.ScalarAt(e, "name")
		names = append(names, n)
	}
	return names
}

// The acceptance case of rule dotted-owners: owner "my.pv", function "set.ns", three runs,
// exactly one entry of that owner.
func TestDottedNamesThreeRuns(t *testing.T) {
	it := items(t)
	cfg := pvConfig(t, "my.pv", "set.ns")
	for run := 1; run <= 3; run++ {
		if _, problems := Run(it, cfg); len(problems) > 0 {
			t.Fatalf("run %d: %v", run, problems)
		}
	}
	got := mutatorNames(t, it)
	want := []string{"PackageVariant.my.pv.set.ns.0", ""}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after three runs mutators are %q, want %q", got, want)
	}
}

// Two owners chained on one package keep each other's entries.
func TestChainedOwners(t *testing.T) {
	it := items(t)
	a, b := pvConfig(t, "team", "set-ns"), pvConfig(t, "region", "set-ns")
	for run := 0; run < 2; run++ {
		for _, cfg := range []*yaml.RNode{a, b} {
			if _, problems := Run(it, cfg); len(problems) > 0 {
				t.Fatal(problems)
			}
		}
	}
	got := strings.Join(mutatorNames(t, it), ",")
	if want := "PackageVariant.region.set-ns.0,PackageVariant.team.set-ns.0,"; got != want {
		t.Fatalf("mutators = %q, want %q", got, want)
	}
}

// A failed run leaves the Kptfile exactly as it was.
func TestFailureChangesNothing(t *testing.T) {
	it, err := krm.FilesToItems(map[string]string{"Kptfile": kptfileText + "  validators: {}\n"})
	if err != nil {
		t.Fatal(err)
	}
	before := it[0].MustString()
	_, problems := Run(it, pvConfig(t, "pv", "x"))
	if !krm.HasErrorProblems(problems) || !strings.Contains(problems[0].Message, "`pipeline.validators` must be a list, found a map") {
		t.Fatalf("problems = %v", problems)
	}
	if after := it[0].MustString(); after != before {
		t.Fatalf("failed run changed the Kptfile:\n%s", after)
	}
}

// Rule blueprint-runs-last: a warning for each blueprint entry of the same
// function, after the owner's, that sets what it sets (by the configMap's
// keys, or the configPath object's); none for other keys, other functions
// or another owner's entries; an entry with no config it can read counts.
func TestOverridesWarned(t *testing.T) {
	for name, tc := range map[string]struct {
		blueprint string
		extra     map[string]string
		want      int
	}{
		"same key":             {"    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap: {app: web}\n", nil, 1},
		"other key":            {"    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap: {tier: web}\n", nil, 0},
		"other function":       {"    - image: gcr.io/kpt-fn/set-annotations:v0.1.4\n      configMap: {app: web}\n", nil, 0},
		"by digest, no config": {"    - image: ghcr.io/kptdev/krm-functions-catalog/set-labels@sha256:abc\n", nil, 1},
		"configPath, typed": {"    - image: gcr.io/kpt-fn/set-labels:v0.2\n      configPath: labels.yaml\n",
			map[string]string{"labels.yaml": "apiVersion: fn.kpt.dev/v1alpha1\nkind: SetLabels\nmetadata:\n  name: l\nlabels:\n  app: web\n"}, 1},
		"another owner": {"    - name: PackageVariant.other.x.0\n      image: gcr.io/kpt-fn/set-labels:v0.2\n      configMap: {app: web}\n", nil, 0},
	} {
		files := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n" + tc.blueprint}
		for k, v := range tc.extra {
			files[k] = v
		}
		it, err := krm.FilesToItems(files)
		if err != nil {
			t.Fatal(err)
		}
		cfg, problems := NewConfig("pv", &pv.Pipeline{Mutators: []pv.Function{{Image: "gcr.io/kpt-fn/set-labels:v0.1", ConfigMap: map[string]string{"app": "foo"}}}})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		_, problems = Apply(it, cfg)
		if len(problems) != tc.want || (tc.want > 0 && (problems[0].Severity != "warning" || problems[0].Field != "pipeline.mutators[1]")) {
			t.Errorf("%s: %v", name, problems)
		}
	}
}
