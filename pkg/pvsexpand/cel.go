package pvsexpand

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"github.com/pvkit/pvkit/pkg/celbound"
)

// Limits of every CEL evaluation are pkg/celbound's, as every pvkit CEL
// expression's: a cost budget checked while evaluating, and the caller's
// deadline (Expand's context: set at the edges, the controller and the
// binary, never here) checked every celbound.InterruptEvery comprehension
// steps and before each expression.
const (
	costLimit = celbound.CostLimit
	// celStringsVersion is the version of CEL's strings extension (cel-go
	// v0.26.1's newest: format as the CEL spec has it, reverse, join,
	// quote...). Raise it deliberately, with a test of what changes.
	celStringsVersion = 4
)

// maxSetCost bounds the cost of all the evaluations of one set's expansion
// (a variable for tests): the cost limit bounds one expression on one
// target (about 1 s at the limit, measured), this bounds a set of 5,000
// targets to about 10 s.
var maxSetCost uint64 = 10 * costLimit

// Object is what an expression sees of an object (`upstream`, `repository`,
// an object `target`): its name, namespace, labels and annotations, nothing
// else. Any other field is a compile-time error.
type Object struct {
	Name        string            `cel:"name"`
	Namespace   string            `cel:"namespace"`
	Labels      map[string]string `cel:"labels"`
	Annotations map[string]string `cel:"annotations"`
}

// RepoTarget is `target` for an explicit repositories list.
type RepoTarget struct {
	Repo    string `cel:"repo"`
	Package string `cel:"package"`
}

// scope is which variables an expression may use.
type scope int

const (
	listScope         scope = iota // target is {repo, package}; repository known
	listScopeNoRepo                // the same, for downstream.repoExpr
	objectScope                    // target is an Object; repository known
	objectScopeNoRepo              // the same, for downstream.repoExpr
	scopes
)

func (s scope) hasRepository() bool { return s == listScope || s == objectScope }

// withoutRepository is the scope of downstream.repoExpr, evaluated before the
// downstream Repository is known.
func (s scope) withoutRepository() scope {
	if s == objectScope {
		return objectScopeNoRepo
	}
	return listScopeNoRepo
}

// engine holds one CEL environment per scope, built once, and the compiled
// programs, refusals included, keyed by scope and expression text, within
// a byte budget (least recently used out first).
type engine struct {
	envs  [scopes]*cel.Env
	progs *celbound.Cache
}

// compiled is a cached compilation: a program, or the message refusing it.
type compiled struct {
	prog cel.Program
	err  error
}

// Bounds of compilation are celbound's (a parse nested deeper than its
// recursion limit is refused before it is type-checked: nested literals
// 248 deep, 1 KB, took 9 s to check; comprehensions and calls are bounded
// in number and nesting: 290 two-level comprehensions in 8 KiB took 0.35 s
// to check, 700 calls of size() 0.13 s); programCacheBytes bounds the
// memory of compiled programs (celbound.ProgramCost: about 48 bytes per
// character of expression, measured).
const (
	parserRecursionLimit = celbound.ParserRecursionLimit
	programCacheBytes    = 64 << 20
)

var (
	engineOnce sync.Once
	theEngine  *engine
	engineErr  error
)

// celEngine returns the process-wide engine.
func celEngine() (*engine, error) {
	engineOnce.Do(func() { theEngine, engineErr = newEngine() })
	return theEngine, engineErr
}

func newEngine() (*engine, error) {
	e := &engine{progs: celbound.NewCache(programCacheBytes)}
	objType := cel.ObjectType("pvsexpand.Object")
	for s := scope(0); s < scopes; s++ {
		target := cel.ObjectType("pvsexpand.RepoTarget")
		if s == objectScope || s == objectScopeNoRepo {
			target = objType
		}
		opts := []cel.EnvOption{
			ext.NativeTypes(ext.ParseStructTags(true), reflect.TypeOf(&Object{}), reflect.TypeOf(&RepoTarget{})),
			// Pinned, as the apiserver pins its CEL libraries: a cel-go
			// upgrade must not change what a stored expression means.
			ext.Strings(ext.StringsVersion(celStringsVersion)),
			cel.Variable("repoDefault", cel.StringType),
			cel.Variable("packageDefault", cel.StringType),
			cel.Variable("upstream", objType),
			cel.Variable("target", target),
		}
		if s.hasRepository() {
			opts = append(opts, cel.Variable("repository", objType))
		}
		// celbound's library: the standard one with pvkit's bounded
		// `matches`, the parser's and the checker's bounds.
		ce, err := celbound.NewEnv(maxExpressionLength, opts...)
		if err != nil {
			return nil, fmt.Errorf("building the CEL environment: %w", err)
		}
		e.envs[s] = ce
	}
	return e, nil
}

// compile parses and type-checks expr in scope, requires a string result and
// an affordable worst-case cost, and caches the outcome, a program or a
// refusal. The error is the message to report for the expression's field.
func (e *engine) compile(s scope, expr string) (cel.Program, error) {
	key := string(rune('0'+s)) + expr
	if v, ok := e.progs.Get(key); ok {
		c := v.(compiled)
		return c.prog, c.err
	}
	p, err := e.build(s, expr)
	e.progs.Put(key, compiled{p, err}, celbound.ProgramCost(expr, err))
	return p, err
}

func (e *engine) build(s scope, expr string) (cel.Program, error) {
	if len(expr) > maxExpressionLength {
		return nil, fmt.Errorf("is too long: %d characters, the limit is %d", len(expr), maxExpressionLength)
	}
	env := e.envs[s]
	parsed, iss := env.Parse(expr)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%s", compileMessage(iss.Err().Error()))
	}
	if err := celbound.Shape(parsed); err != nil {
		return nil, err
	}
	ast, iss := env.Check(parsed)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%s", compileMessage(iss.Err().Error()))
	}
	if t := ast.OutputType(); !t.IsExactType(cel.StringType) && !t.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("must evaluate to a string, found %s", t)
	}
	est, err := env.EstimateCost(ast, sizes{})
	switch {
	case err != nil:
		return nil, fmt.Errorf("is too expensive: its cost cannot be estimated: %v", err)
	case est.Max == math.MaxUint64:
		return nil, fmt.Errorf("is too expensive: its cost has no bound on inputs within the documented sizes")
	case est.Max > costLimit:
		return nil, fmt.Errorf("is too expensive: it may cost up to %d on inputs within the documented sizes, the limit is %d", est.Max, costLimit)
	}
	return env.Program(ast, celbound.ProgramOptions()...)
}

// compileMessage keeps the message lines of a CEL error report (dropping its
// source excerpts), as "message (at line:column)", joined with "; ".
func compileMessage(report string) string {
	var msgs []string
	for _, line := range strings.Split(report, "\n") {
		line, ok := strings.CutPrefix(line, "ERROR: <input>:")
		if !ok {
			continue
		}
		pos, msg, _ := strings.Cut(line, ": ")
		msg = strings.TrimSuffix(msg, " (in container '')")
		msgs = append(msgs, fmt.Sprintf("%s (at %s)", msg, pos))
	}
	if len(msgs) == 0 {
		return report
	}
	return strings.Join(msgs, "; ")
}

// eval runs a compiled expression with the cost limit, interrupted when ctx
// (the expansion's) ends, and returns its value and the cost
// it spent, stopped or not.
func eval(ctx context.Context, p cel.Program, vars map[string]any) (string, uint64, error) {
	out, det, err := p.ContextEval(ctx, vars)
	var cost uint64
	if det != nil && det.ActualCost() != nil {
		cost = *det.ActualCost()
	}
	if err != nil {
		return "", cost, err
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", cost, fmt.Errorf("must evaluate to a string, found %s", out.Type().TypeName())
	}
	return s, cost, nil
}
