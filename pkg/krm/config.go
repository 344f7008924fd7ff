package krm

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// GVK names an accepted functionConfig kind.
type GVK struct {
	APIVersion string
	Kind       string
}

func (g GVK) String() string { return g.APIVersion + " " + g.Kind }

// Is reports whether obj has this apiVersion and kind.
func (g GVK) Is(obj *yaml.RNode) bool {
	apiVersion, kind := TypeMeta(obj.YNode())
	return apiVersion == g.APIVersion && kind == g.Kind
}

// Well-known kinds shared by several functions.
var (
	ConfigMapGVK      = GVK{APIVersion: "v1", Kind: "ConfigMap"}
	PackageVariantGVK = GVK{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "PackageVariant"}
)

// PvkitGroupVersion is the apiVersion of pvkit's own function config kinds.
const PvkitGroupVersion = "fn.pvkit.dev/v1alpha1"

func acceptedList(accepted []GVK) string {
	names := make([]string, len(accepted))
	for i, g := range accepted {
		names[i] = fmt.Sprintf("%q", g.String())
	}
	return strings.Join(names, ", ")
}

// MissingConfig is the problem of a run without a functionConfig.
func MissingConfig(accepted []GVK) Problem {
	return Errorf(nil, "", "a functionConfig is required; it must be one of: %s", acceptedList(accepted))
}

// UnsupportedConfig is the problem of a functionConfig of another kind.
func UnsupportedConfig(fc *yaml.RNode, accepted []GVK) Problem {
	apiVersion, kind := TypeMeta(fc.YNode())
	return Errorf(fc, "kind", "functionConfig kind %q is not supported; it must be one of: %s",
		GVK{apiVersion, kind}.String(), acceptedList(accepted))
}

// IsKptPlaceholder reports whether fc is the empty ConfigMap "function-input"
// kpt sends when a function is run with no config at all.
func IsKptPlaceholder(fc *yaml.RNode) bool {
	if fc == nil || !ConfigMapGVK.Is(fc) || Name(fc.YNode()) != "function-input" {
		return false
	}
	data := Field(fc.YNode(), "data")
	return IsNull(data) || (data.Kind == yaml.MappingNode && len(data.Content) == 0)
}

// KnownFields reports every key of the map at field that is not in allowed,
// for pvkit's own config kinds (a typo must not be silently ignored).
func KnownFields(obj *yaml.RNode, m *yaml.Node, field string, allowed ...string) []Problem {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var problems []Problem
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if !contains(allowed, k) {
			quoted := make([]string, len(allowed))
			for j, a := range allowed {
				quoted[j] = "`" + a + "`"
			}
			problems = append(problems, Errorf(obj, JoinField(field, k), "`%s` is not a known field; known fields: %s",
				JoinField(field, k), strings.Join(quoted, ", ")))
		}
	}
	return problems
}

// MapAt returns the mapping at field (nil when absent or null), or a problem
// when something else is there.
func MapAt(obj *yaml.RNode, n *yaml.Node, field string) (*yaml.Node, []Problem) {
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, []Problem{Errorf(obj, field, "`%s` must be a map, found %s", field, KindName(n))}
	}
	return n, nil
}

// StringMap reads a map of strings at field. Scalars of any type are taken as
// their text (a ConfigMap's data is text); maps and lists are problems.
func StringMap(obj *yaml.RNode, n *yaml.Node, field string) (map[string]string, []Problem) {
	m, problems := MapAt(obj, n, field)
	if m == nil {
		return nil, problems
	}
	out := make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i].Value, m.Content[i+1]
		if v.Kind != yaml.ScalarNode {
			problems = append(problems, Errorf(obj, JoinField(field, k), "`%s` must be a string, found %s", JoinField(field, k), KindName(v)))
			continue
		}
		out[k] = v.Value
	}
	return out, problems
}

// StringItem is an entry of a list of strings and its position in the list.
type StringItem struct {
	Index int
	Value string
}

// StringList reads a list of strings at field. Entries that are not strings
// are problems and are left out; the others keep their index, so later
// checks name the right entry.
func StringList(obj *yaml.RNode, n *yaml.Node, field string) ([]StringItem, []Problem) {
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, []Problem{Errorf(obj, field, "`%s` must be a list of strings, found %s", field, KindName(n))}
	}
	var out []StringItem
	var problems []Problem
	for i, v := range n.Content {
		if v.Kind != yaml.ScalarNode || IsNull(v) {
			problems = append(problems, Errorf(obj, fmt.Sprintf("%s[%d]", field, i), "`%s[%d]` must be a string, found %s", field, i, KindName(v)))
			continue
		}
		out = append(out, StringItem{Index: i, Value: v.Value})
	}
	return out, problems
}

var configMapKey = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// ConfigMapKeyProblem checks a ConfigMap data key the way the apiserver does;
// it returns "" when the key is valid.
func ConfigMapKeyProblem(key string) string {
	switch {
	case key == "":
		return "must not be empty"
	case len(key) > 253:
		return "must be no more than 253 characters"
	case !configMapKey.MatchString(key):
		return "must consist of alphanumeric characters, '-', '_' or '.'"
	case key == "." || key == "..":
		return "must not be '.' or '..'"
	}
	return ""
}

// SortedKeys returns the keys of m in order.
func SortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// JoinField appends a key to a dotted field path.
func JoinField(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}
