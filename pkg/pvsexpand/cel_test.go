package pvsexpand

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// An expression that is cheap to compile but expensive on the input it meets
// is cut by the runtime cost limit, as a failure of that target only.
func TestRuntimeCostLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: evaluates to the cost limit (2.5 s)")
	}
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
        valueExpr: "string(repository.labels.map(a, repository.labels.map(b, a)).size())"
`)
	set, problems := ConfigFromObject(cfg)
	if krm.HasErrorProblems(problems) {
		t.Fatalf("the expression must pass validation: %v", problems)
	}
	x, err := Expand(context.Background(), set, WorldFromItems("ns", items))
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

// The string bomb of issue 11: each replace multiplies the string by ten.
// Its worst case is known before it runs, so it is refused at validation,
// fast, naming the field; so is every shorter chain over the limit.
func TestStringBombRefusedAtValidation(t *testing.T) {
	for _, n := range []int{6, 8, 9, 20} {
		expr := "'aaaaaaaaaa'" + strings.Repeat(".replace('a','aaaaaaaaaa')", n)
		cfg := yaml.MustParse(fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: s, namespace: ns}
spec:
  upstream: {repo: up, package: p, revision: 1}
  targets:
  - repositories: [{name: r}]
    template:
      annotationExprs:
      - key: bomb
        valueExpr: %q
`, expr))
		start := time.Now()
		_, problems := ConfigFromObject(cfg)
		took := time.Since(start)
		// 20 calls deep is past the parser's recursion limit too.
		refused := len(problems) == 1 && (strings.Contains(problems[0].Message, "is too expensive: ") ||
			n > parserRecursionLimit && strings.Contains(problems[0].Message, "max recursion depth exceeded"))
		if !refused || problems[0].Field != "spec.targets[0].template.annotationExprs[0].valueExpr" {
			t.Fatalf("%d replaces: problems = %+v", n, problems)
		}
		if took > time.Second { // the acceptance asks for 100 ms; this guards against a hang, not a timing
			t.Fatalf("%d replaces: validation took %s", n, took)
		}
	}
	// Five stay under the limit and run: 10^6 characters.
	eng, err := celEngine()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.compile(listScope, "'aaaaaaaaaa'"+strings.Repeat(".replace('a','aaaaaaaaaa')", 4)); err != nil {
		t.Fatalf("four replaces are affordable: %v", err)
	}
}

// An expression longer than the limit is refused without compiling it.
func TestExpressionLength(t *testing.T) {
	eng, err := celEngine()
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.compile(listScope, "'"+strings.Repeat("a", maxExpressionLength)+"'")
	if err == nil || !strings.Contains(err.Error(), "is too long: 8194 characters, the limit is 8192") {
		t.Fatalf("err = %v", err)
	}
}

// At run time every string built is capped, whatever the static estimate
// said: a value over maxValueSize stops the evaluation.
func TestRuntimeValueCap(t *testing.T) {
	eng, err := celEngine()
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.compile(objectScope, "target.annotations['big'].replace('a', 'aaaa')")
	if err != nil {
		t.Fatalf("the expression is affordable on inputs within the bounds: %v", err)
	}
	vars := map[string]any{"repoDefault": "r", "packageDefault": "p", "upstream": &Object{}, "repository": &Object{},
		"target": &Object{Annotations: map[string]string{"big": strings.Repeat("a", 300<<10)}}}
	_, _, err = eval(context.Background(), p, vars)
	if err == nil || !strings.Contains(err.Error(), "actual cost limit exceeded") {
		t.Fatalf("a 1.2 MB result must stop the evaluation: %v", err)
	}
	vars["target"] = &Object{Annotations: map[string]string{"big": "abc"}}
	if out, _, err := eval(context.Background(), p, vars); err != nil || out != "aaaabc" {
		t.Fatalf("a small input runs: %q, %v", out, err)
	}
}

// An input object larger than the apiserver would store fails its target
// before any expression sees it.
func TestOversizedInputFailsItsTarget(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	items := []*yaml.RNode{
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: big\n  namespace: ns\n  annotations:\n    a: " + big + "\n"),
		yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: small\n  namespace: ns\n"),
		yaml.MustParse("apiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: up\n  namespace: ns\nspec:\n  repository: up\n  packageName: p\n  revision: 1\n  lifecycle: Published\n"),
	}
	set, problems := ConfigFromObject(yaml.MustParse(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: s, namespace: ns}
spec:
  upstream: {repo: up, package: p, revision: 1}
  targets:
  - repositorySelector: {}
    template:
      labelExprs:
      - {key: n, valueExpr: "repository.name"}
`))
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	x, err := Expand(context.Background(), set, WorldFromItems("ns", items))
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Children) != 1 || len(x.Failures) != 1 ||
		x.Failures[0].Message != `object "big" has 307201 bytes of annotations, more than the 262144 an object may have` {
		t.Fatalf("children %+v, failures %+v", x.Children, x.Failures)
	}
}

// The deadline is checked before each expression too, not only inside
// comprehensions.
func TestDeadlineBetweenExpressions(t *testing.T) {
	eng, err := celEngine()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ev := &evaluator{ctx: ctx, eng: eng, vars: map[string]any{"repoDefault": "r", "packageDefault": "p", "upstream": &Object{}, "target": &RepoTarget{}, "repository": &Object{}}}
	ev.eval("spec.targets[0].template.labelExprs[0].valueExpr", listScope, "'x'")
	if ev.err == nil || ev.err.Error() != "`spec.targets[0].template.labelExprs[0].valueExpr`: not evaluated: the set's expansion ran out of time (context canceled)" {
		t.Fatalf("err = %v", ev.err)
	}
}

// Issue 20 #6: CEL's libraries are versioned, as the apiserver's are: every
// extension library pkg/pvsexpand uses is given its version explicitly,
// so that a cel-go upgrade cannot change what a stored expression means;
// and the pinned version is the one whose functions the templates use.
func TestCELLibrariesPinned(t *testing.T) {
	src, err := os.ReadFile("cel.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range regexp.MustCompile(`ext\.(Strings|Lists|Sets|Math|Encoders|Bindings|Protos)\([^)]*\)`).FindAllString(string(src), -1) {
		if !strings.Contains(call, "Version(") {
			t.Errorf("%s: an unversioned CEL library (pass ext.%sVersion(N))", call, strings.TrimSuffix(strings.TrimPrefix(call, "ext."), call[strings.Index(call, "("):]))
		}
	}
	for expr, want := range map[string]string{`'gums'.reverse()`: "smug", `['a','b'].join('-')`: "a-b", `'%s-%d'.format(['x', 3])`: "x-3"} {
		eng, err := celEngine()
		if err != nil {
			t.Fatal(err)
		}
		p, err := eng.compile(objectScope, expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		vars := map[string]any{"repoDefault": "r", "packageDefault": "p", "upstream": &Object{}, "repository": &Object{}, "target": &Object{}}
		got, _, err := eval(context.Background(), p, vars)
		if err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q (strings library version %d)", expr, got, err, want, celStringsVersion)
		}
	}
}
