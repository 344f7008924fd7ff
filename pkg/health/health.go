// Package health evaluates a variant's health check (rule:
// health-gated-rollouts): which object a cluster's controller keeps for a
// downstream package (NameExpr, over the variant), and whether that object
// says the package's published revision runs (Condition, over the object
// and the revision), and, optionally, whether it says the revision failed
// (Failed: the third state, as Flux's health check expressions have it). It is pure: the caller reads the object, with the
// controller's rights and only in the variant's namespace, and gives it
// here as a map.
//
// Both expressions are CEL, held to pkg/celbound's bounds, every pvkit CEL
// expression's: at most MaxLength bytes, the parser's and
// the checker's limits, a cost limit per evaluation charged by the sizes
// strings and regular expressions read and write, a bounded `matches` (40
// matches of `[ab]{0,1000}` over a 20 KB status field held a worker 81 s
// with CEL's own), the caller's context checked every so many steps. The
// object is data anyone who may write it controls: a condition over it
// cannot loop or grow without bound.
package health

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/celbound"
)

// Bounds of an expression.
const (
	// MaxLength is the longest expression, in bytes.
	MaxLength = 4096
	// CostLimit is CEL's cost limit of one evaluation (celbound's).
	CostLimit = celbound.CostLimit
	// programCacheBytes bounds the compiled programs kept (the one CEL
	// program cache, celbound's: least recently used out first, charged
	// by celbound.ProgramCost; compiled again when needed).
	programCacheBytes = 16 << 20
)

// Variant is what the expressions see of the variant: `variant` and
// `downstream`.
type Variant struct {
	Name, Namespace     string
	Labels, Annotations map[string]string
	Repo, Package       string // the downstream's
}

// Revision is `revision`: the published downstream revision the check is
// about.
type Revision struct {
	Name, Repo, Package string
	Revision            int
	// Ref is the git tag Porch makes for a published revision,
	// "<package>/v<revision>": what a GitOps source that tracks the tag
	// reports back (Flux: "<ref>@sha1:<commit>").
	Ref string
	// Commit is the git commit that published it ("" where the store does
	// not know it); Branch the deployment repository's branch it was
	// published on ("" when not known); Commits the commits known to hold
	// it: Commit, and the branch's head when the package there is still
	// this revision (another package's publish moved the branch on), so a
	// branch-tracking agent ("main@sha1:<commit>") is judged by them.
	Commit, Branch string
	Commits        []string
	// Upstream is the upstream revision it was made from; UpstreamRef in
	// Porch's shape, the short name of the upstream's git ref:
	// "<package>/v<N>" for a numbered revision, "<package>/<tag>" for a tag
	// Porch could not number, the branch for a branch.
	UpstreamRepo, UpstreamPackage, UpstreamRef, UpstreamCommit string
}

// Ref is the git tag Porch makes for a package's published revision.
func Ref(pkg string, revision int) string { return fmt.Sprintf("%s/v%d", pkg, revision) }

func (v Variant) vars() map[string]any {
	return map[string]any{
		"variant": map[string]any{"name": v.Name, "namespace": v.Namespace,
			"labels": orEmpty(v.Labels), "annotations": orEmpty(v.Annotations)},
		"downstream": map[string]any{"repo": v.Repo, "package": v.Package},
	}
}

func (r Revision) value() map[string]any {
	commits := make([]string, 0, len(r.Commits))
	commits = append(commits, r.Commits...)
	return map[string]any{"name": r.Name, "repo": r.Repo, "package": r.Package,
		"revision": int64(r.Revision), "ref": r.Ref, "commit": r.Commit, "branch": r.Branch, "commits": commits,
		"upstream": map[string]any{"repo": r.UpstreamRepo, "package": r.UpstreamPackage, "ref": r.UpstreamRef, "commit": r.UpstreamCommit}}
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Problem is one problem of a health check: its field and the message.
type Problem struct{ Field, Message string }

// Validate checks a health check, naming each problem's field under
// prefix (spec.health, spec.rollout.health), in the fields' order: the
// kind, and that both expressions compile to the right type within the
// bounds.
func Validate(prefix string, c *pv.HealthCheck) []Problem {
	var out []Problem
	add := func(field, format string, a ...any) {
		out = append(out, Problem{Field: prefix + "." + field, Message: fmt.Sprintf(format, a...)})
	}
	if c.APIVersion == "" {
		add("apiVersion", "`%s.apiVersion` must be set (the object's, e.g. kustomize.toolkit.fluxcd.io/v1)", prefix)
	}
	if c.Kind == "" || c.Kind[0] < 'A' || c.Kind[0] > 'Z' {
		add("kind", "`%s.kind` must be a kind (it starts with a capital letter), found %q", prefix, c.Kind)
	}
	if c.ClusterExpr != "" {
		if _, err := compile(nameKind, c.ClusterExpr); err != nil {
			add("clusterExpr", "`%s.clusterExpr` %v", prefix, err)
		}
	}
	if c.Namespace != "" && !isDNSLabel(c.Namespace) {
		add("namespace", "`%s.namespace` must be a namespace's name (lower-case letters, digits and '-', at most 63), found %q", prefix, c.Namespace)
	}
	if _, err := compile(nameKind, c.NameExpr); err != nil {
		add("nameExpr", "`%s.nameExpr` %v", prefix, err)
	}
	if _, err := compile(conditionKind, c.Condition); err != nil {
		add("condition", "`%s.condition` %v", prefix, err)
	}
	if c.Failed != "" {
		if _, err := compile(conditionKind, c.Failed); err != nil {
			add("failed", "`%s.failed` %v", prefix, err)
		}
	}
	if c.Message != "" {
		if _, err := compile(messageKind, c.Message); err != nil {
			add("message", "`%s.message` %v", prefix, err)
		}
	}
	return out
}

// Name is the object's name for a variant: NameExpr's value, which must be
// a name (non-empty, at most 253 bytes, no '/').
func Name(ctx context.Context, c *pv.HealthCheck, v Variant) (string, error) {
	return evalName(ctx, "nameExpr", c.NameExpr, v, "an object name", func(s string) bool {
		return s != "" && len(s) <= 253 && !strings.ContainsAny(s, "/\x00")
	})
}

// Cluster is the name of the cluster whose API server holds the object
// (ClusterExpr's value; "" without one: the management cluster). It names
// a Secret, `<cluster>-kubeconfig`, so it must be a DNS subdomain of at
// most 242 bytes (the Secret's name at most 253).
func Cluster(ctx context.Context, c *pv.HealthCheck, v Variant) (string, error) {
	if c.ClusterExpr == "" {
		return "", nil
	}
	return evalName(ctx, "clusterExpr", c.ClusterExpr, v, "a cluster's name (a DNS subdomain, at most 242 bytes)", func(s string) bool {
		if s == "" || len(s) > 242 {
			return false
		}
		for _, l := range strings.Split(s, ".") {
			if !isDNSLabel(l) {
				return false
			}
		}
		return true
	})
}

func evalName(ctx context.Context, field, expr string, v Variant, what string, ok func(string) bool) (string, error) {
	p, err := compile(nameKind, expr)
	if err != nil {
		return "", fmt.Errorf("%s %v", field, err)
	}
	out, _, err := p.ContextEval(ctx, v.vars())
	if err != nil {
		return "", fmt.Errorf("%s %q: %v", field, expr, err)
	}
	s, isString := out.Value().(string)
	if !isString || !ok(s) {
		return "", fmt.Errorf("%s %q gave %v, not %s", field, expr, out.Value(), what)
	}
	return s, nil
}

// isDNSLabel reports whether s is a DNS-1123 label.
func isDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// Healthy evaluates the condition over the object (as read, a map of its
// fields) and the revision.
func Healthy(ctx context.Context, c *pv.HealthCheck, v Variant, object map[string]any, rev Revision) (bool, error) {
	return evalBool(ctx, "condition", c.Condition, v, object, rev)
}

// State is what a health check reads: the revision runs, not yet, or
// failed.
type State int

// The states of a health check, as Flux's health check expressions
// (current, inProgress, failed).
const (
	InProgress State = iota
	Current
	Failed
)

// Evaluate reads the object in three states: Failed when the check's
// failed expression holds (evaluated first: a failure wins), Current when
// its condition holds, InProgress otherwise.
func Evaluate(ctx context.Context, c *pv.HealthCheck, v Variant, object map[string]any, rev Revision) (State, error) {
	if c.Failed != "" {
		failed, err := evalBool(ctx, "failed", c.Failed, v, object, rev)
		if err != nil || failed {
			return Failed, err
		}
	}
	ok, err := Healthy(ctx, c, v, object, rev)
	if err != nil || !ok {
		return InProgress, err
	}
	return Current, nil
}

// evalBool evaluates a condition-kind expression (the field's name for
// messages) over the object and the revision.
func evalBool(ctx context.Context, field, expr string, v Variant, object map[string]any, rev Revision) (bool, error) {
	p, err := compile(conditionKind, expr)
	if err != nil {
		return false, fmt.Errorf("%s %v", field, err)
	}
	vars := v.vars()
	vars["object"], vars["revision"] = object, rev.value()
	out, _, err := p.ContextEval(ctx, vars)
	if err != nil {
		return false, fmt.Errorf("%s %q: %v", field, expr, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("%s %q gave %v, not a bool", field, expr, out.Value())
	}
	return b, nil
}

type exprKind int

const (
	nameKind exprKind = iota
	conditionKind
	messageKind
)

var envs = sync.OnceValues(func() ([3]*cel.Env, error) {
	var out [3]*cel.Env
	for k := range out {
		opts := []cel.EnvOption{
			cel.Variable("variant", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("downstream", cel.MapType(cel.StringType, cel.StringType)),
			cel.CrossTypeNumericComparisons(true),
			cel.OptionalTypes(),
			ext.Strings(ext.StringsVersion(2)),
		}
		if exprKind(k) != nameKind {
			opts = append(opts, cel.Variable("object", cel.MapType(cel.StringType, cel.DynType)),
				cel.Variable("revision", cel.MapType(cel.StringType, cel.DynType)))
		}
		env, err := celbound.NewEnv(MaxLength, opts...)
		if err != nil {
			return out, err
		}
		out[k] = env
	}
	return out, nil
})

var programs = celbound.NewCache(programCacheBytes)

type compiled struct {
	p   cel.Program
	err error
}

// compile compiles an expression of a kind once (refusals too): a name
// must be a string, a condition a bool.
func compile(k exprKind, expr string) (cel.Program, error) {
	key := fmt.Sprintf("%d:%s", k, expr)
	if v, ok := programs.Get(key); ok {
		c := v.(compiled)
		return c.p, c.err
	}
	p, err := build(k, expr)
	programs.Put(key, compiled{p, err}, celbound.ProgramCost(expr, err))
	return p, err
}

func build(k exprKind, expr string) (cel.Program, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("must be set")
	}
	if len(expr) > MaxLength {
		return nil, fmt.Errorf("is %d bytes; an expression is at most %d", len(expr), MaxLength)
	}
	all, err := envs()
	if err != nil {
		return nil, err
	}
	env := all[k]
	parsed, iss := env.Parse(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("does not compile: %s", oneLine(iss.Err().Error()))
	}
	if err := celbound.Shape(parsed); err != nil {
		return nil, err
	}
	ast, iss := env.Check(parsed)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("does not compile: %s", oneLine(iss.Err().Error()))
	}
	want, what := cel.StringType, "a string"
	if k == conditionKind {
		want, what = cel.BoolType, "a bool"
	}
	if t := ast.OutputType(); !t.IsExactType(want) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("must evaluate to %s, found %s", what, t)
	}
	return env.Program(ast, celbound.ProgramOptions()...)
}

// oneLine keeps CEL's messages, dropping its source excerpts.
func oneLine(report string) string {
	var msgs []string
	for _, line := range strings.Split(report, "\n") {
		if l, ok := strings.CutPrefix(line, "ERROR: <input>:"); ok {
			msgs = append(msgs, l)
		}
	}
	if len(msgs) == 0 {
		return report
	}
	return strings.Join(msgs, "; ")
}
