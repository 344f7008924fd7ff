// Package applysetters is apply-setters of the kpt function catalog, v0.2.0,
// v0.2.1 and its main branch (they behave alike: v0.2.1 changed only the
// module path), written from its README and its cases
// (`tests/apply-setters`, `examples/apply-setters-simple` of
// github.com/kptdev/krm-functions-catalog) on kyaml's function framework,
// the framework the catalog's function uses; TestAgainstV020 runs pvkit's
// cases through the released v0.2.0, built from the Go module proxy, and
// requires the same items, exit code and message.
//
// What it does:
//   - the setters are the config's `data`, name: value (any kind of
//     object; kpt's key=value arguments make a ConfigMap);
//   - a scalar field whose line comment is `# kpt-set: <pattern>` and whose
//     pattern names a given setter (`${name}`) is set to the pattern with
//     each given setter's value in place of its name; a setter the pattern
//     names but the config does not give keeps the value it has in the
//     field (read back through the pattern), and one that cannot be read
//     back is the error "values for setters [...] must be provided"; an
//     empty result is written quoted, and the value's type is read anew
//     (`3` is a number, `"3"` stays a string);
//   - a field whose key (or flow sequence value) has `# kpt-set: ${name}`
//     for a given setter is set to the setter's value parsed as a YAML
//     sequence, written as a block, or `[]` when the value is empty; a
//     pattern that is not one setter, or a value that is not a sequence, is
//     an error;
//   - results: `set field value to "..."` per field, with its path and
//     file; none: the info result "no matches for input setter(s)".
//
// Deliberately different: setters are applied in the order of their names
// (the catalog's order is Go's map order: where one setter's value names
// another setter, its result changed from run to run).
package applysetters

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/internal/catalog/internal/kyamlproc"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Run is the function as a process: a ResourceList on in, the result on
// out, the error on stderr; it returns the exit code.
func Run(in io.Reader, out, stderr io.Writer) int {
	return kyamlproc.MainLine(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		a := &applier{values: rl.FunctionConfig.GetDataMap()}
		a.names = slices.Sorted(maps.Keys(a.values))
		for _, n := range rl.Items {
			file, _, err := kioutil.GetFileAnnotations(n)
			if err != nil {
				return a.fail(rl, err)
			}
			a.file = file
			if err := a.walk(n, ""); err != nil {
				return a.fail(rl, err)
			}
		}
		rl.Results = a.results
		if len(a.results) == 0 {
			rl.Results = framework.Results{{Message: "no matches for input setter(s)"}}
		}
		return nil
	}), in, out, stderr)
}

// applier applies the setters to one object after another.
type applier struct {
	values  map[string]string
	names   []string // sorted
	file    string
	results framework.Results
}

func (a *applier) fail(rl *framework.ResourceList, err error) error {
	rl.Results = framework.Results{{Message: "failed to apply setters: " + err.Error(), Severity: framework.Error}}
	return err
}

const commentPrefix = "# kpt-set: "

// setterNames matches each ${name} of a pattern.
var setterNames = regexp.MustCompile(`\$\{([^}]*)\}`)

// walk visits n: a mapping's sequence fields, then each field's value; a
// sequence's elements; a scalar.
func (a *applier) walk(n *yaml.RNode, path string) error {
	switch y := n.YNode(); y.Kind {
	case yaml.DocumentNode:
		if len(y.Content) > 0 {
			return a.walk(yaml.NewRNode(y.Content[0]), path)
		}
	case yaml.MappingNode:
		if err := a.sequences(y, path); err != nil {
			return err
		}
		for i := 0; i+1 < len(y.Content); i += 2 {
			if err := a.walk(yaml.NewRNode(y.Content[i+1]), path+"."+y.Content[i].Value); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, e := range y.Content {
			if err := a.walk(yaml.NewRNode(e), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		return a.scalar(y, path)
	}
	return nil
}

// pattern is the setter pattern of a line comment, or "".
func pattern(comment string) string {
	if !strings.HasPrefix(comment, commentPrefix) {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(comment, commentPrefix))
}

// tagged says whether the pattern names a given setter.
func (a *applier) tagged(p string) bool {
	for _, name := range a.names {
		if strings.Contains(p, "${"+name+"}") {
			return true
		}
	}
	return false
}

func (a *applier) scalar(n *yaml.Node, path string) error {
	p := pattern(n.LineComment)
	if p == "" || !a.tagged(p) {
		return nil
	}
	value := p
	for _, name := range a.names {
		value = strings.ReplaceAll(value, "${"+name+"}", a.values[name])
	}
	for name, current := range current(p, n.Value) {
		value = strings.ReplaceAll(value, "${"+name+"}", current)
	}
	if missing := setterNames.FindAllString(value, -1); len(missing) > 0 {
		return fmt.Errorf("values for setters %v must be provided", missing)
	}
	n.Value = value
	if value == "" {
		n.Style = yaml.DoubleQuotedStyle
	}
	n.Tag = yaml.NodeTagEmpty
	a.result(strings.TrimPrefix(path, "."), value)
	return nil
}

// current reads the setters a pattern names back from a field's value:
// each ${name} matches what stands in its place. A value the pattern does
// not match, or a setter that reads back empty, gives none.
func current(p, value string) map[string]string {
	names := setterNames.FindAllString(p, -1)
	expr := regexp.QuoteMeta(p)
	for _, name := range names {
		expr = strings.ReplaceAll(expr, regexp.QuoteMeta(name), `(.*)`)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil
	}
	m := re.FindStringSubmatch(value)
	if len(m) == 0 || len(m)-1 != len(names) {
		return nil
	}
	out := map[string]string{}
	for i, v := range m[1:] {
		if v == "" {
			return nil
		}
		out[strings.TrimSuffix(strings.TrimPrefix(names[i], "${"), "}")] = v
	}
	return out
}

// sequences sets the sequence fields of a mapping tagged with an array
// setter.
func (a *applier) sequences(m *yaml.Node, path string) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i], m.Content[i+1]
		if value.Kind != yaml.SequenceNode {
			continue
		}
		comment := key.LineComment
		if value.Style == yaml.FlowStyle {
			comment = value.LineComment
		}
		p := pattern(comment)
		if p == "" || !a.tagged(p) {
			continue
		}
		if len(setterNames.FindAllString(p, -1)) != 1 || !strings.HasPrefix(p, "${") || !strings.HasSuffix(p, "}") {
			return fmt.Errorf("invalid setter pattern for array node: %q", p)
		}
		v := a.values[strings.TrimSuffix(strings.TrimPrefix(p, "${"), "}")]
		field := strings.TrimPrefix(path+"."+key.Value, ".")
		if v == "" {
			value.Content, value.Style = []*yaml.Node{}, yaml.FlowStyle
			value.LineComment, key.LineComment = comment, ""
			a.result(field, v)
			continue
		}
		parsed, err := yaml.Parse(v)
		if err != nil || parsed.YNode().Kind != yaml.SequenceNode {
			return fmt.Errorf("input to array setter must be an array of values, but found %q", v)
		}
		value.Content, value.Style = parsed.YNode().Content, yaml.FoldedStyle
		key.LineComment = comment
		a.result(field, v)
	}
	return nil
}

func (a *applier) result(field, value string) {
	a.results = append(a.results, &framework.Result{
		Message: fmt.Sprintf("set field value to %q", value),
		Field:   &framework.Field{Path: field},
		File:    &framework.File{Path: a.file},
	})
}
