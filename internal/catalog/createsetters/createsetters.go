// Package createsetters is create-setters of the kpt function catalog,
// written from its README and its example (`examples/create-setters-simple`
// of github.com/kptdev/krm-functions-catalog) on kyaml's function framework,
// the framework the catalog's function uses.
//
// What it does, as the README and the example show:
//   - the config's `data` holds the setters, name: value (any kind of
//     object; kpt's key=value arguments make a ConfigMap); a value that
//     parses as a YAML sequence is an array setter, a scalar one a scalar
//     setter (its text as written), anything else is ignored; no data, or a
//     value that does not parse, is an error;
//   - every scalar field value, of every object, that holds a scalar
//     setter's value gets the line comment `kpt-set: <value with each
//     setter's value replaced by ${name}>`, longer values first, each part
//     of the value matched once; a multi-line value is left alone (the main
//     branch);
//   - a field whose value is a sequence holding exactly an array setter's
//     values (in any order) gets `kpt-set: ${name}` on its key; a flow
//     sequence (`[a, b]`) is written as a block sequence when it gets the
//     comment on its key, or when one of its values holds a scalar setter;
//     an empty sequence matches an empty array setter and keeps the comment
//     on its value;
//   - results: "Added line comment ... for field with value ..." per field,
//     with the field's path and file; no field matched at all is the error
//     "no matches for the input list of setters", exit 1.
//
// Deliberately different: a value that does not parse says which, and why
// (the catalog says "parsing error" only); setters of equal length are applied in the order
// of their names (the catalog's order is Go's map order, so two setters of
// one value name a field at random); v0.1.0 applied them one after another,
// in an order its comparator did not decide, and pvkit's v0.1 applies them
// so in the main branch's order.
package createsetters

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/internal/catalog/internal/kyamlproc"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Behaviour is one of the function's behaviours.
type Behaviour struct {
	// OneAfterAnother: each scalar setter replaces its value in the text
	// the ones before it left, and multi-line values are commented too
	// (v0.1.0); else one pass over the value, longest match first, and
	// multi-line values left alone (the main branch).
	OneAfterAnother bool
}

var (
	// V01 is v0.1.0.
	V01 = Behaviour{OneAfterAnother: true}
	// Unstable is the catalog's main branch.
	Unstable = Behaviour{}
)

// Run is the function as a process: a ResourceList on in, the result on
// out, the error on stderr; it returns the exit code.
func (b Behaviour) Run(in io.Reader, out, stderr io.Writer) int {
	return kyamlproc.MainLine(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		results, err := b.run(rl)
		if err != nil {
			rl.Results = framework.Results{{Message: "failed to create setters: " + err.Error(), Severity: framework.Error}}
			return err
		}
		rl.Results = results
		return nil
	}), in, out, stderr)
}

type scalarSetter struct{ name, value string }

type arraySetter struct {
	name   string
	values []string // sorted
}

// setters are the function config's, read.
type setters struct {
	scalars []scalarSetter // longest value first, then by name
	arrays  []arraySetter  // by name
	// comment is the line comment a scalar value gets, and whether any
	// setter matched it.
	comment func(value string) (string, bool)
	// multiLine: multi-line values are commented too.
	multiLine bool
	results   framework.Results
	file      string
}

func (b Behaviour) run(rl *framework.ResourceList) (framework.Results, error) {
	s, err := b.read(rl.FunctionConfig)
	if err != nil {
		return nil, err
	}
	for _, n := range rl.Items {
		file, _, err := kioutil.GetFileAnnotations(n)
		if err != nil {
			return nil, err
		}
		s.file = file
		s.walk(n, "")
	}
	if len(s.results) == 0 {
		return nil, fmt.Errorf("no matches for the input list of setters")
	}
	return s.results, nil
}

func (b Behaviour) read(config *yaml.RNode) (*setters, error) {
	data := config.GetDataMap()
	if len(data) == 0 {
		return nil, fmt.Errorf("config map cannot be empty")
	}
	s := &setters{multiLine: b.OneAfterAnother}
	for _, name := range slices.Sorted(maps.Keys(data)) {
		v := data[name]
		n, err := yaml.Parse(v)
		if err != nil {
			return nil, fmt.Errorf("parsing error: data.%s is not YAML: %v", name, err)
		}
		switch n.YNode().Kind {
		case yaml.SequenceNode:
			s.arrays = append(s.arrays, arraySetter{name: name, values: values(n)})
		case yaml.ScalarNode:
			s.scalars = append(s.scalars, scalarSetter{name: name, value: v})
		}
	}
	slices.SortStableFunc(s.scalars, func(a, b scalarSetter) int { return len(b.value) - len(a.value) })
	if b.OneAfterAnother {
		s.comment = func(value string) (string, bool) {
			out, matched := value, false
			for _, sc := range s.scalars {
				if strings.Contains(value, sc.value) {
					matched = true
					out = strings.ReplaceAll(out, sc.value, "${"+sc.name+"}")
				}
			}
			return out, matched
		}
	} else {
		pairs := make([]string, 0, 2*len(s.scalars))
		for _, sc := range s.scalars {
			pairs = append(pairs, sc.value, "${"+sc.name+"}")
		}
		r := strings.NewReplacer(pairs...)
		s.comment = func(value string) (string, bool) {
			out := r.Replace(value)
			return out, out != value
		}
	}
	return s, nil
}

// values are a sequence's element values, sorted (a mapping element's is
// empty).
func values(seq *yaml.RNode) []string {
	var out []string
	for _, e := range seq.YNode().Content {
		out = append(out, e.Value)
	}
	slices.Sort(out)
	return out
}

// walk visits n: a mapping's sequence fields, then each field's value; a
// sequence's elements; a scalar. path is the field's, dot-separated, with
// [i] for an element.
func (s *setters) walk(n *yaml.RNode, path string) {
	switch n.YNode().Kind {
	case yaml.DocumentNode:
		s.walk(yaml.NewRNode(n.YNode().Content[0]), path)
	case yaml.MappingNode:
		s.sequences(n, path)
		content := n.YNode().Content
		for i := 0; i+1 < len(content); i += 2 {
			s.walk(yaml.NewRNode(content[i+1]), path+"."+content[i].Value)
		}
	case yaml.SequenceNode:
		for i, e := range n.YNode().Content {
			s.walk(yaml.NewRNode(e), fmt.Sprintf("%s[%d]", path, i))
		}
	case yaml.ScalarNode:
		s.scalar(n.YNode(), path)
	}
}

func (s *setters) scalar(n *yaml.Node, path string) {
	if !s.multiLine && strings.Contains(n.Value, "\n") {
		return
	}
	comment, ok := s.comment(n.Value)
	if !ok {
		return
	}
	n.LineComment = "kpt-set: " + comment
	s.result(strings.TrimPrefix(path, "."), n.Value, n.LineComment)
}

// sequences comments the fields of a mapping whose sequences are an array
// setter's values.
func (s *setters) sequences(m *yaml.RNode, path string) {
	content := m.YNode().Content
	for i := 0; i+1 < len(content); i += 2 {
		key, value := content[i], content[i+1]
		if value.Kind != yaml.SequenceNode {
			continue
		}
		vals := values(yaml.NewRNode(value))
		target := key
		if value.Style&yaml.FlowStyle != 0 {
			target = value
			if s.holdsScalar(vals) {
				value.Style, target = yaml.FoldedStyle, key
			}
		}
		for _, a := range s.arrays {
			if !slices.Equal(vals, a.values) {
				continue
			}
			if target.Style&yaml.FlowStyle != 0 && len(vals) > 0 {
				target.Style, target = yaml.FoldedStyle, key
			}
			target.LineComment = "kpt-set: ${" + a.name + "}"
			s.result(strings.TrimPrefix(path+"."+key.Value, "."), fmt.Sprint(vals), target.LineComment)
			break
		}
	}
}

// holdsScalar: one of the values holds a scalar setter's value.
func (s *setters) holdsScalar(vals []string) bool {
	for _, v := range vals {
		for _, sc := range s.scalars {
			if strings.Contains(v, sc.value) {
				return true
			}
		}
	}
	return false
}

func (s *setters) result(field, value, comment string) {
	s.results = append(s.results, &framework.Result{
		Message: fmt.Sprintf("Added line comment %q for field with value %q", comment, value),
		Field:   &framework.Field{Path: field},
		File:    &framework.File{Path: s.file},
	})
}
