package pipelineprepend

import (
	"strings"
	"testing"

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
