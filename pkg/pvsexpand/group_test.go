package pvsexpand

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ReadGroup reads a group.yaml, and names what it cannot read: not YAML,
// another kind, a field of the wrong type (aliases are bounded as every
// input's: pkg/krm).
func TestReadGroup(t *testing.T) {
	g, msg := ReadGroup("apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata: {name: g}\nspec:\n  members:\n  - {name: upf, upstream: {repo: catalog, package: upf, revision: 2}, package: user-plane}\n")
	if msg != "" || len(g.Spec.Members) != 1 || g.Spec.Members[0].DownstreamPackage() != "user-plane" || g.Spec.Members[0].Upstream.Revision != 2 {
		t.Fatalf("%+v %s", g, msg)
	}
	for _, c := range []struct{ text, want string }{
		{"a: [unclosed\n", "did not find expected"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\n", "not a pvkit.dev/v1alpha1 PackageGroup (found v1 ConfigMap)"},
		{"apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata: {name: g}\nspec:\n  members: {}\n", "`spec.members` must be"},
	} {
		if _, msg := ReadGroup(c.text); !strings.Contains(msg, c.want) {
			t.Errorf("ReadGroup(%.40q): %q, want %q", c.text, msg, c.want)
		}
	}
}

// A group multiplies a set's children: the bound on them counts each
// member of each target, before anything is built (a group of many members
// over a fleet is refused whole, as a fan-out is), and says why.
func TestGroupChildrenAreBounded(t *testing.T) {
	items := []*yaml.RNode{yaml.MustParse("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata: {name: bp.g.v1, namespace: ns}\nspec: {repository: bp, packageName: g, revision: 1, lifecycle: Published}\n")}
	for i := 0; i < 4; i++ {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r%d\n  namespace: ns\n  labels: {env: prod}\n", i)))
	}
	members := ""
	for i := 0; i < 3; i++ {
		members += fmt.Sprintf("  - {name: m%d, upstream: {repo: catalog, package: m%d}}\n", i, i)
	}
	items = append(items, yaml.MustParse("apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: g\n  namespace: ns\n  annotations: {pvkit.dev/group-revision: bp.g.v1}\nspec:\n  members:\n"+members))
	set, problems := ConfigFromObject(yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\n" +
		"spec:\n  group: {repo: bp, package: g}\n  targets:\n  - repositorySelector: {matchLabels: {env: prod}}\n"))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	w := WorldFromItems("ns", items)
	w.MaxChildren = 11
	if _, err := Expand(context.Background(), set, w); !errors.Is(err, ErrTooManyChildren) ||
		!strings.Contains(err.Error(), "more than 11 PackageVariants (12 counted at `spec.targets[0].repositorySelector`, 3 for each target: one a member of the group)") {
		t.Fatalf("err = %v", err)
	}
	w.MaxChildren = 12
	if x, err := Expand(context.Background(), set, w); err != nil || len(x.Children) != 12 {
		t.Fatalf("at the bound: %v, %v", err, x)
	}
}
