package pvsexpand

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// An expression that is cheap to compile but expensive on the input it meets
// is cut by the runtime cost limit, as a failure of that target only.
func TestRuntimeCostLimit(t *testing.T) {
	var labels strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&labels, "    l%d: v\n", i)
	}
	items := []*yaml.RNode{
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: big\n  namespace: ns\n  labels:\n" + labels.String()),
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: small\n  namespace: ns\n  labels:\n    l0: v\n"),
		yaml.MustParse("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: up\n  namespace: ns\nspec:\n  repository: up\n  packageName: p\n  revision: 1\n  lifecycle: Published\n"),
	}
	cfg := yaml.MustParse(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: s
  namespace: ns
spec:
  upstream: {repo: up, package: p, revision: 1}
  targets:
  - repositorySelector: {}
    template:
      labelExprs:
      - key: n
        valueExpr: "string(repository.labels.map(a, repository.labels.map(b, a + b)).size())"
`)
	set, problems := ConfigFromObject(cfg)
	if krm.HasErrorProblems(problems) {
		t.Fatalf("the expression must pass validation: %v", problems)
	}
	x, err := Expand(set, NewWorld("ns", items))
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Children) != 1 || x.Children[0].Spec.Labels["n"] != "1" {
		t.Fatalf("the small repository must still be computed: %+v", x.Children)
	}
	if len(x.Failures) != 1 || !strings.Contains(x.Failures[0].Message, "actual cost limit exceeded") || !strings.Contains(x.Failures[0].Where, `"big"`) {
		t.Fatalf("failures = %+v", x.Failures)
	}
}

// Programs are compiled once per expression text and scope.
func TestProgramsAreCached(t *testing.T) {
	eng, err := celEngine()
	if err != nil {
		t.Fatal(err)
	}
	p1, err := eng.compile(listScope, "target.repo + '-cache-test'")
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := eng.compile(listScope, "target.repo + '-cache-test'")
	p3, _ := eng.compile(objectScope, "target.name + '-cache-test'")
	if p1 != p2 || p3 == nil || p1 == p3 {
		t.Fatalf("programs not cached by text and scope")
	}
}
