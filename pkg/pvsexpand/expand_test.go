package pvsexpand

import (
	"context"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// rule no-removal-on-partial: when the objects of a selected kind cannot be listed (the orchestrator
// marks the kind Unavailable), the target fails; it never counts as zero
// targets, so no child is removed, and the other targets are still computed.
func TestUnlistableKindKeepsChildren(t *testing.T) {
	items := []*yaml.RNode{
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r1\n  namespace: ns\n"),
		yaml.MustParse("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: up\n  namespace: ns\nspec:\n  repository: up\n  packageName: p\n  revision: 1\n  lifecycle: Published\n"),
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: s-team-a-p\n  namespace: ns\n  labels:\n    config.porch.kpt.dev/packagevariantset: s\nspec:\n  downstream: {repo: team-a, package: p}\n"),
	}
	set, problems := ConfigFromObject(yaml.MustParse(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: s, namespace: ns}
spec:
  upstream: {repo: up, package: p, revision: 1}
  targets:
  - objectSelector: {apiVersion: example.com/v1, kind: Team}
  - repositories: [{name: r1}]
`))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	w := WorldFromItems("ns", items)
	w.Unavailable = map[krm.GVK]string{{APIVersion: "example.com/v1", Kind: "Team"}: "teams.example.com is forbidden"}
	x, err := Expand(context.Background(), set, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Failures) != 1 || !strings.Contains(x.Failures[0].Message, "example.com/v1 Team objects could not be listed: teams.example.com is forbidden") {
		t.Fatalf("failures = %+v", x.Failures)
	}
	steps, err := PlanItems(set, x, items)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Action{}
	for _, s := range steps {
		got[s.Name] = s.Action
	}
	if got["s-r1-p"] != Create || got["s-team-a-p"] != Keep || len(got) != 2 {
		t.Fatalf("steps = %v", got)
	}
	// With the kind listable (and empty), the same child is removed.
	w.Unavailable = nil
	x, _ = Expand(context.Background(), set, w)
	steps, _ = PlanItems(set, x, items)
	for _, s := range steps {
		if s.Name == "s-team-a-p" && s.Action != Remove {
			t.Fatalf("with a complete expansion the orphan must be removed, got %s", s.Action)
		}
	}
}

// Under kpt, items carry kpt's path and index annotations; CEL must not see
// them, so an expression gives the same result under kpt and in-process.
func TestReaderAnnotationsHidden(t *testing.T) {
	o := toObject(yaml.MustParse(`metadata:
  name: r
  annotations:
    config.kubernetes.io/path: repositories.yaml
    config.kubernetes.io/index: '0'
    internal.config.kubernetes.io/path: repositories.yaml
    internal.config.kubernetes.io/seqindent: compact
    config.k8s.io/id: '3'
    owner: alice
`).YNode())
	if len(o.Annotations) != 1 || o.Annotations["owner"] != "alice" {
		t.Fatalf("annotations = %v", o.Annotations)
	}
}
