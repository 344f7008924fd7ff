package pvsexpand

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/celbound"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// setWithExpr is a set over one selected Repository whose label "l" is
// the expression expr (YAML-quoted).
func setWithExpr(expr string) *yaml.RNode {
	return yaml.MustParse(fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: s, namespace: ns}
spec:
  upstream: {repo: up, package: p, revision: 1}
  targets:
  - repositorySelector: {}
    template:
      labelExprs:
      - key: l
        valueExpr: %q
`, expr))
}

// Issue 18 #2: counted repetitions make a short pattern a large program
// ('[a-z]{0,1000}' is 14 characters and about 2,000 instructions), and a
// match cannot be interrupted: a 282-character expression ran 62.7 s. A
// literal pattern is refused at validation by its program's size, naming
// the field.
func TestRegexLiteralRefusedBySize(t *testing.T) {
	expr := "repository.name.matches('" + strings.Repeat("[a-z]{0,1000}", 19) + "') ? 'y' : 'n'"
	if len(expr) < 282 {
		t.Fatalf("the attack is %d characters", len(expr))
	}
	_, problems := ConfigFromObject(setWithExpr(expr))
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "`spec.targets[0].template.labelExprs[0].valueExpr` is not a valid expression: regular expression \"[a-z]{0,1000}") ||
		!strings.Contains(problems[0].Message, fmt.Sprintf("instructions, more than %d (counted repetitions such as {0,1000} multiply its size)", celbound.MaxRegexInsts)) {
		t.Fatalf("problems = %v", problems)
	}
	// The global form too, and an invalid pattern.
	for expr, want := range map[string]string{
		"matches(repository.name, 'a{0,1000}b{0,1000}') ? 'y' : 'n'": "instructions, more than 1000",
		"repository.name.matches('(') ? 'y' : 'n'":                   "invalid regular expression \"(\": error parsing regexp: missing closing )",
	} {
		if _, problems := ConfigFromObject(setWithExpr(expr)); len(problems) != 1 || !strings.Contains(problems[0].Message, want) {
			t.Errorf("%s: problems = %v", expr, problems)
		}
	}
}

// A pattern that is not a literal is charged for the largest program it
// may have: over an annotation (256 KiB) that is refused at validation;
// over a name it is checked when it runs, and the large program fails that
// target only, at once.
func TestRegexFromInputBoundedAtRunTime(t *testing.T) {
	_, problems := ConfigFromObject(setWithExpr("repository.annotations['x'].matches(repository.annotations['p']) ? 'y' : 'n'"))
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "is too expensive: it may cost up to") {
		t.Fatalf("problems = %v", problems)
	}
	set, problems := ConfigFromObject(setWithExpr("repository.name.matches(repository.annotations['p']) ? 'y' : 'n'"))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	items := []*yaml.RNode{yaml.MustParse(boundsUpstream)}
	for name, pattern := range map[string]string{"evil": strings.Repeat("[a-z]{0,1000}", 20), "fine": "^[a-z]+$"} {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: %s\n  namespace: ns\n  annotations: {p: %q}\n", name, pattern)))
	}
	x, err := Expand(context.Background(), set, WorldFromItems("ns", items))
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Children) != 1 || x.Children[0].Spec.Labels["l"] != "y" {
		t.Fatalf("children = %+v", x.Children)
	}
	if len(x.Failures) != 1 || !strings.Contains(x.Failures[0].Where, `"evil"`) || !strings.Contains(x.Failures[0].Message, "instructions, more than 1000") {
		t.Fatalf("failures = %+v", x.Failures)
	}
}

// Issue 18 #3: nested literals 248 deep (1 KB) took 9 s to type-check, and
// failed compilations were not cached. The parser's recursion limit refuses
// them before the checker runs, and the refusal is remembered.
func TestDeepNestingRefusedAndRemembered(t *testing.T) {
	eng, err := newEngine()
	if err != nil {
		t.Fatal(err)
	}
	expr := "string(" + strings.Repeat("{1:", 248) + "1" + strings.Repeat("}", 248) + ")"
	_, err = eng.compile(listScope, expr)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("expression recursion limit exceeded: %d", parserRecursionLimit)) {
		t.Fatalf("err = %v", err)
	}
	if v, ok := eng.progs.Get(string(rune('0'+listScope)) + expr); !ok || v.(compiled).err == nil {
		t.Fatal("the refusal is not remembered")
	}
	_, n := eng.progs.Size()
	if _, err2 := eng.compile(listScope, expr); err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("second compile: %v", err2)
	}
	if _, n2 := eng.progs.Size(); n2 != n {
		t.Fatalf("the second compile made a new entry: %d -> %d", n, n2)
	}
}

// Comprehensions: the type checker's time grows with the square of their
// number (290 nested pairs in 8 KiB took 0.35 s), so one expression may
// have at most celbound.MaxComprehensions, counted before the check, nested at most
// celbound.MaxComprehensionNesting deep.
func TestComprehensionBounds(t *testing.T) {
	eng, err := newEngine()
	if err != nil {
		t.Fatal(err)
	}
	many := "string(size([" + strings.TrimSuffix(strings.Repeat("size([1].map(x, 1)), ", celbound.MaxComprehensions+1), ", ") + "]))"
	if _, err := eng.compile(listScope, many); err == nil || err.Error() != "has 17 comprehensions (map, filter, all, exists), more than 16" {
		t.Fatalf("err = %v", err)
	}
	deep := "string(size([1].map(a, [1].map(b, [1].map(c, 1)))))"
	if _, err := eng.compile(listScope, deep); err == nil || !strings.Contains(err.Error(), "comprehension exceeds nesting limit") {
		t.Fatalf("err = %v", err)
	}
	if _, err := eng.compile(listScope, "string(size([1].map(a, [1].map(b, 1))))"); err != nil {
		t.Fatalf("two levels: %v", err)
	}
}

// A set's distinct expressions are compiled within a total of
// maxSetExpressionBytes characters; past it the field is named and nothing
// more is compiled.
func TestSetExpressionBudget(t *testing.T) {
	var exprs strings.Builder
	for i := 0; i < 9; i++ {
		e := fmt.Sprintf("'%d'", i) + strings.Repeat(" + 'x'", 1300)
		fmt.Fprintf(&exprs, "      - key: l%d\n        valueExpr: %q\n", i, e)
	}
	cfg := yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\n" +
		"spec:\n  upstream: {repo: up, package: p, revision: 1}\n  targets:\n  - repositorySelector: {}\n    template:\n      labelExprs:\n" + exprs.String())
	_, problems := ConfigFromObject(cfg)
	found := false
	for _, p := range problems {
		found = found || strings.Contains(p.Message, "`spec.targets[0].template.labelExprs[8].valueExpr`: the set's distinct expressions add up to more than 65536 characters")
	}
	if !found {
		t.Fatalf("problems = %v", problems)
	}
}

// Issue 18 #4: the program cache was unbounded (about 270 KB per distinct
// 8 KiB expression, never freed). It is bounded by bytes, least recently
// used out first.
func TestProgramCacheBounded(t *testing.T) {
	eng, err := newEngine()
	if err != nil {
		t.Fatal(err)
	}
	const budget = 2 << 20
	eng.progs = celbound.NewCache(budget)
	for i := 0; i < 20; i++ {
		e := fmt.Sprintf("string(size([%d, %s]))", i, strings.TrimSuffix(strings.Repeat("1, ", 2600), ", "))
		if _, err := eng.compile(listScope, e); err != nil {
			t.Fatal(err)
		}
	}
	used, n := eng.progs.Size()
	if used > budget || n >= 20 || n == 0 {
		t.Fatalf("cache holds %d entries, %d bytes (budget %d)", n, used, budget)
	}
	// The most recent is kept, the first is gone.
	if _, ok := eng.progs.Get(string(rune('0'+listScope)) + fmt.Sprintf("string(size([%d, %s]))", 0, strings.TrimSuffix(strings.Repeat("1, ", 2600), ", "))); ok {
		t.Fatal("the least recently used program is still cached")
	}
}

// All the evaluations of one set's expansion share one cost budget: the
// cost limit bounds one expression on one target (about 1 s, 370 MB of
// garbage, at the limit), so 5,000 targets could cost over an hour without
// it. Once spent, the remaining targets fail at once, naming the budget.
func TestSetCostBudget(t *testing.T) {
	defer func(old uint64) { maxSetCost = old }(maxSetCost)
	maxSetCost = 30
	items := []*yaml.RNode{yaml.MustParse(boundsUpstream)}
	for i := 0; i < 10; i++ {
		items = append(items, yaml.MustParse(fmt.Sprintf("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r%d\n  namespace: ns\n  labels: {a: x, b: y, c: z}\n", i)))
	}
	set, problems := ConfigFromObject(setWithExpr("string(repository.labels.filter(k, k != 'a').size())"))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	x, err := Expand(context.Background(), set, WorldFromItems("ns", items))
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Children) == 0 || len(x.Failures) == 0 || len(x.Children)+len(x.Failures) != 10 {
		t.Fatalf("%d children, %d failures", len(x.Children), len(x.Failures))
	}
	if !strings.Contains(x.Failures[0].Message, "not evaluated: the set's expressions spent their cost budget of 30 for one expansion") {
		t.Fatalf("failure: %s", x.Failures[0].Message)
	}
}

// Issue 19 #6: a missing map key names the object that lacks it, not the
// target the failure is reported on.
func TestMissingKeyNamesItsObject(t *testing.T) {
	items := []*yaml.RNode{yaml.MustParse(boundsUpstream),
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r1\n  namespace: ns\n  labels: {team: a}\n")}
	for expr, want := range map[string]string{
		"upstream.labels['team']":   "no such key: team (`upstream.labels` of \"up\" has no key \"team\")",
		"repository.labels['tier']": "no such key: tier (`repository.labels` of \"r1\" has no key \"tier\")",
	} {
		set, problems := ConfigFromObject(setWithExpr(expr))
		if krm.HasErrorProblems(problems) {
			t.Fatal(problems)
		}
		x, err := Expand(context.Background(), set, WorldFromItems("ns", items))
		if err != nil || len(x.Failures) != 1 || !strings.HasSuffix(x.Failures[0].Message, want) {
			t.Errorf("%s: %v %+v", expr, err, x)
		}
	}
}
