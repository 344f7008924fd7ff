package pvsexpand

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const boundsUpstream = "apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: up\n  namespace: ns\n" +
	"spec:\n  repository: up\n  packageName: p\n  revision: 1\n  lifecycle: Published\n"

// Issue 18 #6: 300 repositories x 300 package names (46 KB of YAML) asked
// for 90,000 children and ran out of memory. The set fails whole, counted
// before anything is built: no instance, no child, little memory.
func TestFanOutIsBounded(t *testing.T) {
	var names, repos []string
	for i := 0; i < 300; i++ {
		names = append(names, fmt.Sprintf("pkg-%03d", i))
	}
	for i := 0; i < 300; i++ {
		repos = append(repos, fmt.Sprintf("    - name: cluster-%03d\n      packageNames: [%s]\n", i, strings.Join(names, ", ")))
	}
	doc := "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\n" +
		"spec:\n  upstream: {repo: up, package: p, revision: 1}\n  targets:\n  - repositories:\n" + strings.Join(repos, "")
	if len(doc) < 46_000 {
		t.Fatalf("the attack is %d bytes, want about 46 KB", len(doc))
	}
	set, problems := ConfigFromObject(yaml.MustParse(doc))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x, err := Expand(context.Background(), set, WorldFromItems("ns", []*yaml.RNode{yaml.MustParse(boundsUpstream)}))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooManyChildren) || x != nil ||
		err.Error() != "too many children: its targets ask for more than 5000 PackageVariants (5100 counted at `spec.targets[0].repositories[16]`); "+
			"one set may have at most 5000 (pvkit-controller and pvctl run: --max-children-per-set): split the set" {
		t.Fatalf("err = %v", err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
		t.Fatalf("refusing allocated %d bytes", a)
	}
}

// The bound is the operator's: a selector that selects more repositories
// than MaxChildren allows fails whole; at the bound, every child is made.
func TestFanOutBoundIsConfigurable(t *testing.T) {
	items := []*yaml.RNode{yaml.MustParse(boundsUpstream)}
	for i := 0; i < 4; i++ {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r%d\n  namespace: ns\n  labels: {env: prod}\n", i)))
	}
	set, problems := ConfigFromObject(yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\n" +
		"spec:\n  upstream: {repo: up, package: p, revision: 1}\n  targets:\n  - repositorySelector: {matchLabels: {env: prod}, packageNames: [a, b]}\n"))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	w := WorldFromItems("ns", items)
	w.MaxChildren = 7
	if _, err := Expand(context.Background(), set, w); !errors.Is(err, ErrTooManyChildren) || !strings.Contains(err.Error(), "more than 7 PackageVariants (8 counted at `spec.targets[0].repositorySelector`)") {
		t.Fatalf("err = %v", err)
	}
	w.MaxChildren = 8
	if x, err := Expand(context.Background(), set, w); err != nil || len(x.Children) != 8 {
		t.Fatalf("at the bound: %v, %d children", err, len(x.Children))
	}
}
