package render

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	"github.com/pvkit/pvkit/pkg/celbound"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Rule newer-kptfile-fields (rule: newer-kptfile-fields).
//
// Bounds of a step's `when` condition. kpt's main branch evaluates it with
// a cost limit of 1,000,000 and an interrupt check every 100 iterations;
// pvkit holds it to pkg/celbound's bounds, every pvkit CEL
// expression's: those, and what kpt does not bound, the expression's
// length, nesting and calls, read from a Kptfile anyone may write, the
// sizes strings and regular expressions read and write (CEL's `matches`
// ran a render 20-35 s past a 2 s render timeout).
const (
	// MaxWhenLength is the longest `when` expression, in bytes.
	MaxWhenLength = 4096
	// WhenCostLimit is CEL's cost limit of one evaluation (kpt's, celbound's).
	WhenCostLimit = celbound.CostLimit
)

// whenEnv is the CEL environment of `when`, as kpt's main branch declares
// it: one variable, `resources`, the list of resources the step's
// selectors pick, each a map with apiVersion, kind, metadata.name and
// metadata.namespace always present.
var whenEnv = sync.OnceValues(func() (*cel.Env, error) {
	return celbound.NewEnv(MaxWhenLength,
		cel.Variable("resources", cel.ListType(cel.DynType)),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(ext.StringsVersion(2)),
		ext.Sets(),
		ext.TwoVarComprehensions(),
		ext.Lists(ext.ListsVersion(3)),
	)
})

// compileWhen compiles a `when` expression: it must be a boolean.
func compileWhen(expr string) (cel.Program, error) {
	if len(expr) > MaxWhenLength {
		return nil, fmt.Errorf("is %d bytes; a condition is at most %d", len(expr), MaxWhenLength)
	}
	env, err := whenEnv()
	if err != nil {
		return nil, err
	}
	parsed, issues := env.Parse(expr)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("does not compile: %v", issues.Err())
	}
	if err := celbound.Shape(parsed); err != nil {
		return nil, err
	}
	ast, issues := env.Check(parsed)
	if issues != nil && issues.Err() != nil {
		return nil, fmt.Errorf("does not compile: %v", issues.Err())
	}
	if ast.OutputType() != cel.BoolType {
		return nil, fmt.Errorf("must be a boolean expression, not %v", ast.OutputType())
	}
	return env.Program(ast, celbound.ProgramOptions()...)
}

// evalWhen evaluates a step's compiled condition over the resources it
// would run on.
func evalWhen(ctx context.Context, prg cel.Program, resources []*yaml.RNode) (bool, error) {
	list := make([]any, 0, len(resources))
	for _, r := range resources {
		m, err := celResource(r)
		if err != nil {
			return false, err
		}
		list = append(list, m)
	}
	out, _, err := prg.ContextEval(ctx, map[string]any{"resources": list})
	if err != nil {
		return false, fmt.Errorf("failed to evaluate: %v", err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("must evaluate to a boolean, not %T", out)
	}
	return bool(b), nil
}

// celResource is a resource as a `when` condition sees it: its fields,
// with apiVersion, kind, metadata.name and metadata.namespace present
// (empty when unset) and the renderer's own annotations left out.
func celResource(r *yaml.RNode) (map[string]any, error) {
	c := r.Copy()
	if err := clearInternal(c); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := c.YNode().Decode(&m); err != nil {
		p, _, _ := kioutil.GetFileAnnotations(r)
		return nil, fmt.Errorf("resource in %s: %v", p, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if _, ok := m[k]; !ok {
			m[k] = ""
		}
	}
	md, ok := m["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		m["metadata"] = md
	}
	for _, k := range []string{"name", "namespace"} {
		if _, ok := md[k]; !ok {
			md[k] = ""
		}
	}
	return m, nil
}

// clearInternal removes the annotations the renderer keeps on a resource
// while it renders (its package, the selection's index); the file
// annotations stay, as kpt's functions see them.
func clearInternal(r *yaml.RNode) error {
	for _, a := range []string{pkgPathAnnotation, resourceIDAnnotation} {
		if err := r.PipeE(yaml.ClearAnnotation(a)); err != nil {
			return err
		}
	}
	return nil
}
