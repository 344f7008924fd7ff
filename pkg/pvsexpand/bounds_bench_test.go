package pvsexpand

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/celbound"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The worst cases under the bounds of docs/security.md, measured (make
// bench-security). Each builds what an attacker within the bounds could
// write; none asserts a timing.

// fillTo repeats unit, separated by ", ", up to max characters.
func fillTo(unit string, max int) string {
	var b strings.Builder
	for b.Len()+len(unit)+2 < max {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(unit)
	}
	return b.String()
}

// worstExpression is the slowest 8 KiB expression to compile found within
// the bounds (list literals nested 12 deep, as many as fit; of the shapes
// tried: calls, comprehensions, map and list literals, identifiers,
// strings), made distinct by i.
func worstExpression(i int) string {
	deep := func(v string) string { return strings.Repeat("[", 12) + v + strings.Repeat("]", 12) }
	return "string(size([" + deep(fmt.Sprint(i)) + ", " + fillTo(deep("1"), maxExpressionLength-40) + "]))"
}

// BenchmarkCompileWorstExpression: one 8 KiB expression, nothing cached.
func BenchmarkCompileWorstExpression(b *testing.B) {
	for i := 0; i < b.N; i++ {
		eng, err := newEngine()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := eng.build(listScope, worstExpression(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateHostileSet: a set with 64 KiB of distinct worst
// expressions (the most a set may have), validated with a cold cache.
func BenchmarkValidateHostileSet(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var exprs strings.Builder
		for j := 0; j < maxSetExpressionBytes/maxExpressionLength; j++ {
			fmt.Fprintf(&exprs, "      - key: l%d\n        valueExpr: %q\n", j, worstExpression(i*100+j))
		}
		cfg := yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\n" +
			"spec:\n  upstream: {repo: up, package: p, revision: 1}\n  targets:\n  - repositorySelector: {}\n    template:\n      labelExprs:\n" + exprs.String())
		eng, err := celEngine()
		if err != nil {
			b.Fatal(err)
		}
		eng.progs = celbound.NewCache(programCacheBytes)
		if _, problems := ConfigFromObject(cfg); krm.HasErrorProblems(problems) {
			b.Fatal(problems)
		}
	}
}

// squareWorld is repos Repositories of 3,000 labels each, and a set whose
// expression squares a repository's labels: every target runs into the
// cost limit.
func squareWorld(b *testing.B, repos int) (*v1alpha2.PackageVariantSet, *World) {
	var labels strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&labels, "    l%d: v\n", i)
	}
	items := []*yaml.RNode{yaml.MustParse(boundsUpstream)}
	for i := 0; i < repos; i++ {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: big%d\n  namespace: ns\n  labels:\n", i)+labels.String()))
	}
	set, problems := ConfigFromObject(setWithExpr("string(repository.labels.map(a, repository.labels.map(b, a)).size())"))
	if krm.HasErrorProblems(problems) {
		b.Fatal(problems)
	}
	return set, WorldFromItems("ns", items)
}

// BenchmarkEvaluateAtCostLimit: one evaluation stopped by the runtime cost
// limit: the runtime bound of one expression on one target.
func BenchmarkEvaluateAtCostLimit(b *testing.B) {
	set, w := squareWorld(b, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, err := Expand(context.Background(), set, w)
		if err != nil || len(x.Failures) != 1 || !strings.Contains(x.Failures[0].Message, "actual cost limit exceeded") {
			b.Fatalf("%v, %+v", err, x)
		}
	}
}

// BenchmarkHostileSetEvaluation: every target's expression runs into the
// cost limit (20 repositories): the set's cost budget bounds the whole
// expansion.
func BenchmarkHostileSetEvaluation(b *testing.B) {
	set, w := squareWorld(b, 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, err := Expand(context.Background(), set, w)
		if err != nil || len(x.Failures) != 20 {
			b.Fatalf("%v, %+v", err, x)
		}
	}
}

// BenchmarkHostileSetAtTheEdge: the same set under the controller's and
// the binary's deadline (10 s): the expansion stops there, every target
// not computed by then failing, naming the deadline.
func BenchmarkHostileSetAtTheEdge(b *testing.B) {
	set, w := squareWorld(b, 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		x, err := Expand(ctx, set, w)
		cancel()
		if err != nil || len(x.Failures) != 20 || !strings.Contains(x.Failures[19].Message, "ran out of time") {
			b.Fatalf("%v, %+v", err, x)
		}
	}
}

// BenchmarkFanOutRefused: 300 repositories x 300 package names (46 KB),
// refused by the children bound.
func BenchmarkFanOutRefused(b *testing.B) {
	set := fanOutSet(b, 300, 300)
	w := WorldFromItems("ns", []*yaml.RNode{yaml.MustParse(boundsUpstream)})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Expand(context.Background(), set, w); err == nil {
			b.Fatal("not refused")
		}
	}
}

// BenchmarkFanOutAtBound: the most children a set may have by default
// (5,000: 50 x 100), each with a label from an expression.
func BenchmarkFanOutAtBound(b *testing.B) {
	set := fanOutSet(b, 50, 100)
	items := []*yaml.RNode{yaml.MustParse(boundsUpstream)}
	for i := 0; i < 50; i++ {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: cluster-%03d\n  namespace: ns\n", i)))
	}
	w := WorldFromItems("ns", items)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, err := Expand(context.Background(), set, w)
		if err != nil || len(x.Children) != DefaultMaxChildren {
			b.Fatalf("%v, %d children, failures %v", err, len(x.Children), x.Failures[:1])
		}
	}
}

func fanOutSet(b *testing.B, repos, pkgs int) *v1alpha2.PackageVariantSet {
	var names, rs []string
	for i := 0; i < pkgs; i++ {
		names = append(names, fmt.Sprintf("pkg-%03d", i))
	}
	for i := 0; i < repos; i++ {
		rs = append(rs, fmt.Sprintf("    - name: cluster-%03d\n      packageNames: [%s]\n", i, strings.Join(names, ", ")))
	}
	set, problems := ConfigFromObject(yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\n" +
		"spec:\n  upstream: {repo: up, package: p, revision: 1}\n  targets:\n  - repositories:\n" + strings.Join(rs, "") +
		"    template:\n      labelExprs:\n      - key: t\n        valueExpr: target.repo + '-' + target.package\n"))
	if krm.HasErrorProblems(problems) {
		b.Fatal(problems)
	}
	return set
}
