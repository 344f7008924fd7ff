package render

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// pipeline runs a package's pipeline on its input. A pipeline that fails
// returns what it leaves, as kpt keeps it for kpt.dev/save-on-render-failure:
// the resources before the mutator that failed, the mutated ones when a
// validator failed, nil when a mutator could not start (kpt prepares every
// mutator before running the first).
func (h *hydration) pipeline(dir string, p *pipeline, input []*yaml.RNode) ([]*yaml.RNode, error) {
	if p.empty() {
		if err := areKRM("the input resource list", input); err != nil {
			return nil, err
		}
		return input, nil
	}
	for i, f := range p.Mutators {
		if err := h.prepare(dir, f, fmt.Sprintf("pipeline.mutators[%d]", i)); err != nil {
			return nil, err
		}
	}
	for i, f := range p.Mutators {
		out, err := h.mutate(dir, f, fmt.Sprintf("pipeline.mutators[%d]", i), input)
		if err != nil {
			for _, r := range input {
				_ = r.PipeE(yaml.ClearAnnotation(resourceIDAnnotation))
			}
			return input, err
		}
		input = out
	}
	for i, f := range p.Validators {
		field := fmt.Sprintf("pipeline.validators[%d]", i)
		f.validator = true
		selected := selectInput(input, f.Selectors, f.Exclusions)
		skip, err := h.skip(f, field, selected)
		if err != nil {
			return input, err
		}
		if skip {
			continue
		}
		if err := h.prepare(dir, f, field); err != nil {
			return input, err
		}
		cfg, err := configOf(dir, f, field, input)
		if err != nil {
			return input, h.notRun(f, err)
		}
		copies := make([]*yaml.RNode, len(selected))
		for j, r := range selected {
			copies[j] = r.Copy()
		}
		if _, err := h.run(dir, f, field, cfg, copies); err != nil {
			return input, err
		}
	}
	return input, nil
}

// prepare checks what a step needs before it runs, as kpt does before
// running it: exec allowed, its config file, a runtime that runs it. A
// step that cannot run is recorded (ExecutionError) and fails the render.
func (h *hydration) prepare(dir string, f step, field string) error {
	name := f.name()
	var err error
	switch {
	case f.Exec != "" && !h.opts.AllowExec:
		err = fmt.Errorf("`%s` (exec %q): exec functions run only when allowed (kpt: --allow-exec)", field, f.Exec)
	case h.opts.Runtime == nil:
		err = fmt.Errorf("`%s` (%s): no function runtime", field, name)
	default:
		if _, cerr := functionConfig(h.fs, dir, f); cerr != nil {
			err = fmt.Errorf("`%s` (%s): %w", field, name, cerr)
		} else if r, rerr := h.opts.Runtime.Runner(h.ctx, f.Function); rerr != nil {
			err = fmt.Errorf("`%s`: %w", field, rerr)
		} else {
			if h.runners == nil {
				h.runners = map[string]Runner{}
			}
			h.runners[dir+"\x00"+field] = r
		}
	}
	if err != nil {
		return h.notRun(f, err)
	}
	return nil
}

// notRun records a step that could not run (kpt's executionError) and
// returns err.
func (h *hydration) notRun(f step, err error) error {
	h.status.Runs = append(h.status.Runs, Run{Image: f.Image, Exec: f.Exec, When: f.When, StepName: f.Name, Validator: f.validator,
		ExitCode: 1, ExecutionError: err.Error()})
	return err
}

// skip evaluates a step's `when` over the resources it would run on; a
// false one is recorded as skipped, as kpt's main branch records it.
func (h *hydration) skip(f step, field string, selected []*yaml.RNode) (bool, error) {
	if f.When == "" {
		return false, nil
	}
	ok, err := evalWhen(h.ctx, f.when, selected)
	if err != nil {
		return false, fmt.Errorf("`%s.when` (%s): %w", field, f.name(), err)
	}
	if ok {
		return false, nil
	}
	h.status.Runs = append(h.status.Runs, Run{Image: f.Image, Exec: f.Exec, When: f.When, Skipped: true, StepName: f.Name, Validator: f.validator,
		Results: fn.Results{{Severity: fn.Info, Message: fmt.Sprintf("skipped: `%s.when` is false (%s)", field, newerField)}}})
	return true, nil
}

// newerField says where a field kpt v1.0.0-beta.56 and Porch v1.5.3 refuse
// stands (doc.go).
const newerField = "honoured as kpt's main branch does; kpt v1.0.0-beta.56 and Porch v1.5.3 refuse the field"

func (f step) name() string {
	if f.Image != "" {
		return f.Image
	}
	return f.Exec
}

// configOf is the config of a step given by reference: the one resource of
// its package the reference matches, as the pipeline has left it so far
// (nil for a step without configRef).
func configOf(dir string, f step, field string, input []*yaml.RNode) (*yaml.RNode, error) {
	if f.ConfigRef == nil {
		return nil, nil
	}
	var found []*yaml.RNode
	for _, r := range input {
		if p := r.GetAnnotations()[pkgPathAnnotation]; p != "" && p != dir {
			continue
		}
		if f.ConfigRef.matches(r) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("`%s.configRef` (%s): resource %s not found in package", field, f.name(), f.ConfigRef)
	case 1:
		cfg := found[0].Copy()
		if err := clearInternal(cfg); err != nil {
			return nil, err
		}
		return cfg, nil
	}
	return nil, fmt.Errorf("`%s.configRef` (%s): resource %s matched %d resources, must match exactly one", field, f.name(), f.ConfigRef, len(found))
}

// mutate runs one mutator on the resources its selectors pick and merges
// its output back.
func (h *hydration) mutate(dir string, f step, field string, input []*yaml.RNode) ([]*yaml.RNode, error) {
	cfg, err := configOf(dir, f, field, input)
	if err != nil {
		return nil, h.notRun(f, err)
	}
	if f.ConfigPath != "" { // the config as the pipeline has left it so far
		for _, r := range input {
			p, _, _ := kioutil.GetFileAnnotations(r)
			if r.GetAnnotations()[pkgPathAnnotation] == dir && p == f.ConfigPath {
				cfg = r
			}
		}
	}
	selective := len(f.Selectors) > 0 || len(f.Exclusions) > 0
	if selective {
		for i, r := range input {
			if err := r.PipeE(yaml.SetAnnotation(resourceIDAnnotation, strconv.Itoa(i))); err != nil {
				return nil, err
			}
		}
	}
	selected := selectInput(input, f.Selectors, f.Exclusions)
	if skip, err := h.skip(f, field, selected); err != nil || skip {
		if err == nil && selective {
			for _, r := range input {
				if err := r.PipeE(yaml.ClearAnnotation(resourceIDAnnotation)); err != nil {
					return nil, err
				}
			}
		}
		return input, err
	}
	out, err := h.run(dir, f, field, cfg, selected)
	if err != nil {
		return nil, err
	}
	if !selective {
		return out, nil
	}
	merged := mergeWithInput(out, selected, input)
	for _, r := range merged {
		if err := r.PipeE(yaml.ClearAnnotation(resourceIDAnnotation)); err != nil {
			return nil, err
		}
	}
	return merged, nil
}

// run runs one function on input and records its run in the status.
func (h *hydration) run(dir string, f step, field string, cfg *yaml.RNode, input []*yaml.RNode) ([]*yaml.RNode, error) {
	name := f.Image
	if name == "" {
		name = f.Exec
	}
	if cfg == nil {
		var err error
		if cfg, err = functionConfig(h.fs, dir, f); err != nil {
			return nil, h.notRun(f, fmt.Errorf("`%s` (%s): %w", field, name, err))
		}
	}
	if err := h.ctx.Err(); err != nil { // the caller's deadline for the whole render
		return nil, h.notRun(f, fmt.Errorf("`%s` (%s): not run: the render was stopped (%v)", field, name, context.Cause(h.ctx)))
	}
	runner := h.runners[dir+"\x00"+field] // prepared
	if runner == nil {
		return nil, h.notRun(f, fmt.Errorf("`%s` (%s): not prepared", field, name))
	}
	if err := areKRM("the input resource list", input); err != nil {
		return nil, h.notRun(f, fmt.Errorf("`%s` (%s): %w", field, name, err))
	}
	filter := &runtimeutil.FunctionFilter{Run: runner, FunctionConfig: cfg, GlobalScope: true}
	out, runErr := filter.Filter(input)
	run := Run{Image: f.Image, Exec: f.Exec, When: f.When, StepName: f.Name, Validator: f.validator}
	results, err := parseResults(filter.Results)
	if err != nil {
		return nil, h.notRun(f, fmt.Errorf("`%s` (%s): its results: %w", field, name, err))
	}
	run.Results = append(results, f.newerFields(field)...)
	if runErr != nil {
		run.ExitCode, run.Stderr = exitOf(runErr)
		h.status.Runs = append(h.status.Runs, run)
		return nil, &FunctionError{Field: field, Function: name, Results: errorMessages(results), Err: runErr}
	}
	for _, r := range out { // what the function made belongs to this package
		if r.GetAnnotations()[pkgPathAnnotation] == "" {
			if err := r.PipeE(yaml.SetAnnotation(pkgPathAnnotation, dir)); err != nil {
				return nil, err
			}
		}
	}
	if err := pathInvariants(out); err != nil {
		return nil, h.notRun(f, fmt.Errorf("`%s` (%s): %w", field, name, err))
	}
	if err := areKRM("the output resource list", out); err != nil {
		return nil, h.notRun(f, fmt.Errorf("`%s` (%s): %w", field, name, err))
	}
	h.status.Runs = append(h.status.Runs, run)
	return out, nil
}

// functionConfig is a function's config: the file at configPath, or a
// ConfigMap `function-input` of configMap, or none.
func functionConfig(fs filesys.FileSystem, dir string, f step) (*yaml.RNode, error) {
	switch {
	case f.ConfigPath != "":
		b, err := fs.ReadFile(path.Join(dir, f.ConfigPath))
		if err != nil {
			return nil, fmt.Errorf("missing function config %q", f.ConfigPath)
		}
		n, err := yaml.Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("invalid function config %q: %w", f.ConfigPath, err)
		}
		return n, nil
	case len(f.ConfigMap) > 0:
		cm := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\ndata: {}\n")
		data := yaml.NewMapRNode(&f.ConfigMap)
		if err := data.VisitFields(func(n *yaml.MapNode) error {
			n.Value.YNode().Tag = yaml.NodeTagString
			return nil
		}); err != nil {
			return nil, err
		}
		if err := cm.PipeE(yaml.SetField("data", data)); err != nil {
			return nil, err
		}
		return cm, nil
	}
	return nil, nil
}

// pathInvariants refuses a function's output holding a resource outside
// its package or two resources at one file and index.
func pathInvariants(nodes []*yaml.RNode) error {
	seen := map[string]bool{}
	for _, n := range nodes {
		p, index, err := kioutil.GetFileAnnotations(n)
		if err != nil {
			return err
		}
		fp := path.Clean(p)
		if strings.HasPrefix(fp, "../") || fp == ".." {
			return fmt.Errorf("function must not modify resources outside of package: resource has path %s", p)
		}
		key := n.GetAnnotations()[pkgPathAnnotation] + "\x00" + fp + "\x00" + index
		if seen[key] {
			return fmt.Errorf("resource at path %q and index %q already exists", fp, index)
		}
		seen[key] = true
	}
	return nil
}

// FunctionError is a function that ran and failed: its error results say
// why, and its exit code and stderr how it ended.
type FunctionError struct {
	Field, Function string
	Results         []string
	Err             error
}

func (e *FunctionError) Error() string {
	if len(e.Results) > 0 {
		return fmt.Sprintf("`%s`: function %s failed: %s (%v)", e.Field, e.Function, strings.Join(e.Results, "; "), e.Err)
	}
	return fmt.Sprintf("`%s`: function %s failed: %v", e.Field, e.Function, e.Err)
}

func (e *FunctionError) Unwrap() error { return e.Err }

// errorMessages are the messages of the error results.
func errorMessages(results fn.Results) []string {
	var out []string
	for _, r := range results {
		if r.Severity == fn.Error {
			out = append(out, r.Message)
		}
	}
	return out
}

// newerFields are info results saying that the step's fields newer than
// Porch v1.5.3 were honoured (one rule, doc.go: never ignored in silence).
func (f step) newerFields(field string) fn.Results {
	var out fn.Results
	if f.When != "" {
		out = append(out, &fn.Result{Severity: fn.Info, Message: fmt.Sprintf("`%s.when` is true: the step ran (%s)", field, newerField)})
	}
	if f.ConfigRef != nil {
		out = append(out, &fn.Result{Severity: fn.Info, Message: fmt.Sprintf("`%s.configRef`: the config is %s (%s)", field, f.ConfigRef, newerField)})
	}
	return out
}
