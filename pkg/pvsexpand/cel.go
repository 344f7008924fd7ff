package pvsexpand

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
)

// Limits of every CEL evaluation, as the Kubernetes apiserver does it: a cost
// budget checked while evaluating, and a deadline checked every
// interruptEvery comprehension steps.
const (
	costLimit      = 1_000_000
	interruptEvery = 100
	evalTimeout    = time.Second // for all the expressions of one target entry
)

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
// programs keyed by scope and expression text.
type engine struct {
	envs  [scopes]*cel.Env
	mu    sync.Mutex
	progs map[progKey]cel.Program
}

type progKey struct {
	scope scope
	expr  string
}

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
	e := &engine{progs: map[progKey]cel.Program{}}
	objType := cel.ObjectType("pvsexpand.Object")
	for s := scope(0); s < scopes; s++ {
		target := cel.ObjectType("pvsexpand.RepoTarget")
		if s == objectScope || s == objectScopeNoRepo {
			target = objType
		}
		opts := []cel.EnvOption{
			ext.NativeTypes(ext.ParseStructTags(true), reflect.TypeOf(&Object{}), reflect.TypeOf(&RepoTarget{})),
			ext.Strings(),
			cel.HomogeneousAggregateLiterals(),
			cel.EagerlyValidateDeclarations(true),
			cel.DefaultUTCTimeZone(true),
			cel.Variable("repoDefault", cel.StringType),
			cel.Variable("packageDefault", cel.StringType),
			cel.Variable("upstream", objType),
			cel.Variable("target", target),
		}
		if s.hasRepository() {
			opts = append(opts, cel.Variable("repository", objType))
		}
		env, err := cel.NewEnv(opts...)
		if err != nil {
			return nil, fmt.Errorf("building the CEL environment: %w", err)
		}
		e.envs[s] = env
	}
	return e, nil
}

// compile parses and type-checks expr in scope, requires a string result and
// an affordable minimum cost, and caches the program. The error is the
// message to report for the expression's field.
func (e *engine) compile(s scope, expr string) (cel.Program, error) {
	k := progKey{s, expr}
	e.mu.Lock()
	p, ok := e.progs[k]
	e.mu.Unlock()
	if ok {
		return p, nil
	}
	if len(expr) > maxExpressionLength {
		return nil, fmt.Errorf("is too long: %d characters, the limit is %d", len(expr), maxExpressionLength)
	}
	env := e.envs[s]
	ast, iss := env.Compile(expr)
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
	p, err = env.Program(ast, cel.CostLimit(costLimit), cel.CostTracking(actualCost{}), cel.InterruptCheckFrequency(interruptEvery))
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.progs[k] = p
	e.mu.Unlock()
	return p, nil
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
// (one deadline per target entry) ends.
func eval(ctx context.Context, p cel.Program, vars map[string]any) (string, error) {
	out, _, err := p.ContextEval(ctx, vars)
	if err != nil {
		return "", err
	}
	s, ok := out.Value().(string)
	if !ok {
		return "", fmt.Errorf("must evaluate to a string, found %s", out.Type().TypeName())
	}
	return s, nil
}
