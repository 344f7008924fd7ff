package krm

import (
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// About attaches obj to every problem that names no object: a typed
// constructor (packagecontext.NewConfig, pvsexpand.Validate...) knows the
// field paths but not the YAML object they were read from; the binary's
// edge, which read it, says which object they are about.
func About(obj *yaml.RNode, problems []Problem) []Problem {
	for i := range problems {
		if problems[i].Object == nil && problems[i].File == "" {
			problems[i].Object = obj
		}
	}
	return problems
}

// Invalid is an error made of the error-severity problems of a typed spec,
// kept typed (field paths and messages) up to whoever reports it: the
// controller's condition message, pvctl's table. Its text is the messages
// joined with "; ", each naming its field.
type Invalid struct {
	Problems []Problem
}

func (e *Invalid) Error() string {
	msgs := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		msgs = append(msgs, p.Message)
	}
	return strings.Join(msgs, "; ")
}

// Fields lists the field path of each problem, in order.
func (e *Invalid) Fields() []string {
	out := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		out = append(out, p.Field)
	}
	return out
}

// InvalidFrom returns an *Invalid of the error-severity problems, or nil
// when there are none.
func InvalidFrom(problems []Problem) *Invalid {
	var errs []Problem
	for _, p := range problems {
		if p.Severity == fn.Error {
			errs = append(errs, p)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &Invalid{Problems: errs}
}
