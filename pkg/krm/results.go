package krm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Problem (rule: typed-problems) is one finding about one object: the
// object (nil for findings about
// the package as a whole), the file it lives in, the field path and the message.
// Mutations collect Problems and turn them into results at the end.
type Problem struct {
	Severity fn.Severity
	Object   *yaml.RNode
	File     string
	Field    string
	Message  string
}

// Errorf builds an error-severity Problem.
func Errorf(obj *yaml.RNode, field, format string, a ...any) Problem {
	return Problem{Severity: fn.Error, Object: obj, Field: field, Message: fmt.Sprintf(format, a...)}
}

// Warningf builds a warning-severity Problem.
func Warningf(obj *yaml.RNode, field, format string, a ...any) Problem {
	return Problem{Severity: fn.Warning, Object: obj, Field: field, Message: fmt.Sprintf(format, a...)}
}

// InFile sets the file of a Problem that has no object to take it from.
func (p Problem) InFile(file string) Problem {
	p.File = file
	return p
}

// Result converts the Problem to a kpt result naming object, file and field.
func (p Problem) Result() *fn.Result {
	r := &fn.Result{Message: p.Message, Severity: p.Severity}
	file := p.File
	if p.Object != nil {
		n := p.Object.YNode()
		apiVersion, kind := TypeMeta(n)
		r.ResourceRef = &fn.ResourceRef{APIVersion: apiVersion, Kind: kind, Name: Name(n), Namespace: Namespace(n)}
		if file == "" {
			file = Path(p.Object)
		}
		if file != "" {
			r.File = &fn.File{Path: file, Index: Index(p.Object)}
		}
	} else if file != "" {
		r.File = &fn.File{Path: file}
	}
	if p.Field != "" {
		r.Field = &fn.Field{Path: p.Field}
	}
	return r
}

// Info returns the one info summary result of a run.
func Info(format string, a ...any) *fn.Result {
	return &fn.Result{Severity: fn.Info, Message: fmt.Sprintf(format, a...)}
}

// HasErrors reports whether any result has error severity.
func HasErrors(results fn.Results) bool {
	for _, r := range results {
		if r.Severity == fn.Error {
			return true
		}
	}
	return false
}

// Line renders a result as one line for stderr: the severity, the file, the
// object and the message (the message already names the field).
func Line(r *fn.Result) string {
	var b strings.Builder
	b.WriteString(string(r.Severity))
	b.WriteString(": ")
	if r.File != nil && r.File.Path != "" {
		b.WriteString(r.File.Path)
		b.WriteString(": ")
	}
	if ref := r.ResourceRef; ref != nil && ref.Kind != "" {
		fmt.Fprintf(&b, "%s %q: ", ref.Kind, ref.Name)
	}
	b.WriteString(strings.ReplaceAll(r.Message, "\n", " "))
	return b.String()
}

// ResultsError joins the error results into one error (nil when none), for
// callers that run a mutation in-process.
func ResultsError(results fn.Results) error {
	var errs []error
	for _, r := range results {
		if r.Severity == fn.Error {
			errs = append(errs, errors.New(Line(r)))
		}
	}
	return errors.Join(errs...)
}

// HasErrorProblems reports whether any problem has error severity.
func HasErrorProblems(problems []Problem) bool {
	for _, p := range problems {
		if p.Severity == fn.Error {
			return true
		}
	}
	return false
}

// FailureSummary is the info summary of a failed run.
func FailureSummary(what string, problems []Problem) string {
	n := 0
	for _, p := range problems {
		if p.Severity == fn.Error {
			n++
		}
	}
	return fmt.Sprintf("%s not applied: %d error(s); the package is unchanged", what, n)
}

// Mutate runs a mutation's two steps, config then apply, and returns the
// summary line and every problem. apply is not called when the config has
// errors. name is used in the failure summary.
func Mutate[C any, S fmt.Stringer](name string, items []*yaml.RNode, fc *yaml.RNode,
	parse func(*yaml.RNode) (C, []Problem), apply func([]*yaml.RNode, C) (S, []Problem)) (string, []Problem) {
	cfg, problems := parse(fc)
	if HasErrorProblems(problems) {
		return FailureSummary(name, problems), problems
	}
	summary, applyProblems := Applied(name, items, cfg, apply)
	return summary, append(problems, applyProblems...)
}

// Applied runs a mutation's apply step with a config already built (and
// found valid), and returns the summary line and the apply's problems.
func Applied[C any, S fmt.Stringer](name string, items []*yaml.RNode, cfg C, apply func([]*yaml.RNode, C) (S, []Problem)) (string, []Problem) {
	s, problems := apply(items, cfg)
	if HasErrorProblems(problems) {
		return FailureSummary(name, problems), problems
	}
	return s.String(), problems
}

// AsProcessor turns a mutation's Run into a KRM function body: one result per
// problem, then the info summary.
func AsProcessor(run func(items []*yaml.RNode, fc *yaml.RNode) (string, []Problem)) Processor {
	return func(rl *ResourceList) {
		summary, problems := run(rl.Items, rl.FunctionConfig)
		for _, p := range problems {
			rl.Results = append(rl.Results, p.Result())
		}
		rl.Results = append(rl.Results, Info("%s", summary))
	}
}
