// Package searchreplace is search-replace of the kpt function catalog,
// v0.2.0 and its main branch (the same behaviour), written from its README
// and its e2e cases (`tests/search-replace`, `examples/search-replace-*` of
// github.com/kptdev/krm-functions-catalog) on kyaml's function framework,
// as the catalog's function is.
//
// The config is a ConfigMap's data: matchers `by-value`, `by-value-regex`,
// `by-path`, `by-file-path` (AND'ed), mutators `put-value`, `put-comment`.
//   - A field matches when its value matches (by-value exactly; by-value-regex
//     anywhere in the value, as the released function does, though its README
//     says the whole value) and its path matches by-path; with no value
//     matcher, the path alone; with no path, the value alone. Paths are
//     dotted (`spec.containers[0].image`); in by-path `*` is one element,
//     `**` any number, and `name[*]` any entry of a list.
//   - by-file-path is a glob (`**/setters.yaml`) on the object's file.
//   - put-value and put-comment may use by-value-regex's capture groups
//     (`${1}`); a group the regex does not have is an error. A new value's
//     type is implied from its text (`3` becomes a number).
//   - by-path of plain names (no `*`, no `[`) with put-value alone sets the
//     field, creating it and the maps on the way.
//   - put-comment with by-path also comments a field whose value is a list
//     (the comment on its key, a setter for the whole list).
//   - results: one per field, "Matched field value %q" or "Mutated field
//     value to %q" with the field's path and file; "no matches" when none.
package searchreplace

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/pvkit/pvkit/internal/catalog/internal/kyamlproc"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// keys are the config's keys, in the order the function's message lists
// them.
var keys = []string{"by-value", "by-file-path", "by-value-regex", "by-path", "put-value", "put-comment"}

type config struct {
	byValue, byValueRegex, byPath, byFilePath, putValue, putComment string
	re                                                              *regexp.Regexp
	results                                                         []*framework.Result
	file                                                            string
}

// Run is the function as a process: a ResourceList on in, the result on
// out, the error line on stderr; it returns the exit code.
func Run(in io.Reader, out, stderr io.Writer) int {
	p := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		c, err := readConfig(rl.FunctionConfig)
		if err == nil {
			err = c.run(rl.Items)
		}
		if err != nil {
			rl.Results = framework.Results{{Message: fmt.Sprintf("failed to perform search-replace operation: %q", err.Error()), Severity: framework.Error}}
			return err
		}
		rl.Results = c.results
		if len(c.results) == 0 {
			rl.Results = framework.Results{{Message: "no matches"}}
		}
		return nil
	})
	return kyamlproc.MainLine(p, in, out, stderr)
}

func readConfig(o *yaml.RNode) (*config, error) {
	data := o.GetDataMap()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		if !slices.Contains(keys, k) {
			return nil, fmt.Errorf("invalid matcher %q, must be one of %q", k, keys)
		}
	}
	c := &config{byValue: data["by-value"], byValueRegex: data["by-value-regex"], byPath: data["by-path"],
		byFilePath: data["by-file-path"], putValue: data["put-value"], putComment: data["put-comment"]}
	if c.byValue != "" && c.byValueRegex != "" {
		return nil, fmt.Errorf("only one of [%q, %q] can be provided", "by-value", "by-value-regex")
	}
	if c.byValueRegex != "" {
		re, err := regexp.Compile(c.byValueRegex)
		if err != nil {
			return nil, err
		}
		c.re = re
	}
	return c, nil
}

func (c *config) mutates() bool { return c.putValue != "" || c.putComment != "" }

func (c *config) run(items []*yaml.RNode) error {
	for _, o := range items {
		file, _, err := kioutil.GetFileAnnotations(o)
		if err != nil {
			return err
		}
		if c.byFilePath != "" {
			ok, err := doublestar.Match(c.byFilePath, file)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
		}
		c.file = file
		if c.setsByPath() {
			if err := c.setByPath(o); err != nil {
				return err
			}
			continue
		}
		if err := c.walk(o.YNode(), ""); err != nil {
			return err
		}
	}
	return nil
}

// setsByPath: a plain path and a value, nothing to match: the field is set
// (and made) directly.
func (c *config) setsByPath() bool {
	if c.byPath == "" || strings.Contains(c.byPath, "[") || c.byValue != "" || c.byValueRegex != "" || c.putValue == "" {
		return false
	}
	for _, e := range strings.Split(c.byPath, ".") {
		if e == "" || strings.Contains(e, "*") {
			return false
		}
	}
	return true
}

func (c *config) setByPath(o *yaml.RNode) error {
	path := strings.Split(c.byPath, ".")
	parent, err := o.Pipe(yaml.LookupCreate(yaml.MappingNode, path[:len(path)-1]...))
	if err != nil {
		return err
	}
	v := yaml.NewScalarRNode(c.putValue)
	v.YNode().Tag = yaml.NodeTagEmpty // the type follows the text: 3 is a number
	// OverrideStyle: kyaml would quote a string that reads as a number
	if err := parent.PipeE(yaml.FieldSetter{Name: path[len(path)-1], Value: v, OverrideStyle: true}); err != nil {
		return err
	}
	c.add(c.byPath, c.putValue)
	return nil
}

func (c *config) add(field, value string) {
	msg := fmt.Sprintf("Matched field value %q", value)
	if c.mutates() {
		msg = fmt.Sprintf("Mutated field value to %q", value)
	}
	c.results = append(c.results, &framework.Result{Message: msg, Field: &framework.Field{Path: field}, File: &framework.File{Path: c.file}})
}

// walk visits every field under n; path is n's, dotted, with a list
// entry's index on its list's element (`containers[0]`).
func (c *config) walk(n *yaml.Node, path string) error {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, child := range n.Content {
			if err := c.walk(child, path); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := c.commentList(n.Content[i], n.Content[i+1], path); err != nil {
				return err
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := c.walk(n.Content[i+1], path+"."+n.Content[i].Value); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, child := range n.Content {
			if err := c.walk(child, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		return c.scalar(n, path)
	}
	return nil
}

// commentList puts the comment on the key of a non-empty list that by-path
// matches, the list shown in flow style in its result.
func (c *config) commentList(key, value *yaml.Node, path string) error {
	if c.putComment == "" || value.Kind != yaml.SequenceNode || len(value.Content) == 0 {
		return nil
	}
	text, err := yaml.String(key)
	if err != nil {
		return err
	}
	if !c.pathMatches(strings.TrimPrefix(path+"."+strings.TrimSpace(text), ".")) {
		return nil
	}
	key.LineComment = c.putComment
	value.Style = yaml.FlowStyle
	shown, err := yaml.String(value)
	if err != nil {
		return err
	}
	value.Style = yaml.FoldedStyle
	c.results = append(c.results, &framework.Result{Message: fmt.Sprintf("Mutated field value to %q", strings.TrimSpace(shown)),
		Field: &framework.Field{Path: c.byPath + " # " + c.putComment}, File: &framework.File{Path: c.file}})
	return nil
}

func (c *config) scalar(n *yaml.Node, path string) error {
	pathOK := c.pathMatches(path)
	valueOK := c.byValue != "" && c.byValue == n.Value || c.re != nil && c.re.MatchString(n.Value)
	if !(valueOK && (pathOK || c.byPath == "") || pathOK && c.byValue == "" && c.byValueRegex == "") {
		return nil
	}
	if c.putComment != "" {
		comment, err := c.resolve(n.Value, c.putComment)
		if err != nil {
			return err
		}
		n.LineComment = comment
	}
	if c.putValue != "" {
		v, err := c.resolve(n.Value, c.putValue)
		if err != nil {
			return err
		}
		n.Value, n.Tag = v, yaml.NodeTagEmpty
	}
	if c.file == "" {
		return nil
	}
	shown, err := yaml.String(n)
	if err != nil {
		return err
	}
	c.add(strings.TrimPrefix(path, "."), strings.TrimSpace(shown))
	return nil
}

var group = regexp.MustCompile(`\$\{([0-9]+)\}`)

// resolve fills a pattern's ${N} with by-value-regex's groups in value.
func (c *config) resolve(value, pattern string) (string, error) {
	if c.re == nil {
		return pattern, nil
	}
	groups := c.re.FindStringSubmatch(value)
	for i := 1; i < len(groups); i++ {
		pattern = strings.ReplaceAll(pattern, fmt.Sprintf("${%d}", i), groups[i])
	}
	if group.MatchString(pattern) {
		return "", fmt.Errorf("unable to resolve capture groups")
	}
	return pattern, nil
}

// pathMatches says whether a field's dotted path matches by-path.
func (c *config) pathMatches(path string) bool {
	if c.byPath == "" {
		return false
	}
	return globMatch(strings.Split(strings.TrimPrefix(path, "."), "."), strings.Split(c.byPath, "."))
}

// globMatch matches path elements against pattern elements: `**` is any
// number of elements, `*` one, else elementMatches. Memoised, so that a
// pattern of many `**` stays linear in each.
func globMatch(path, pattern []string) bool {
	memo := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if j == len(pattern) {
			return i == len(path)
		}
		k := [2]int{i, j}
		if v, ok := memo[k]; ok {
			return v
		}
		var ok bool
		switch {
		case pattern[j] == "**":
			ok = match(i, j+1) || i < len(path) && match(i+1, j)
		case i < len(path) && (pattern[j] == "*" || elementMatches(path[i], pattern[j])):
			ok = match(i+1, j+1)
		}
		memo[k] = ok
		return ok
	}
	return match(0, 0)
}

// elementMatches: the same element, or a list entry (`a[0]`) against
// `a[0]`, `a[*]`, `*[0]` or `*[*]`. An entry of a list in a list
// (`a[0][1]`) is compared whole (the released function compares its
// first index only).
func elementMatches(elem, pattern string) bool {
	if elem == pattern {
		return true
	}
	name, index, ok := strings.Cut(elem, "[")
	if !ok {
		return false
	}
	pname, pindex, pok := strings.Cut(pattern, "[")
	if pname != "*" && pname != name {
		return false
	}
	return pok && (pindex == "*]" || pindex == index)
}
