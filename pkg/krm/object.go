package krm

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Field returns the value node of key in the mapping node m, or nil when m is
// not a mapping or has no such key. It allocates nothing.
func Field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Lookup follows a path of mapping keys from m; nil when any step is missing.
func Lookup(m *yaml.Node, path ...string) *yaml.Node {
	for _, p := range path {
		m = Field(m, p)
		if m == nil {
			return nil
		}
	}
	return m
}

// ScalarAt returns the scalar value at path, and whether a scalar was there.
func ScalarAt(m *yaml.Node, path ...string) (string, bool) {
	n := Lookup(m, path...)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

// SetField sets key in mapping m to value, replacing the value in place when
// the key exists (its comments kept) and appending it otherwise.
func SetField(m *yaml.Node, key string, value *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			keepComments(m.Content[i+1], value)
			m.Content[i+1] = value
			return
		}
	}
	m.Content = append(m.Content, KeyNode(key), value)
}

// RemoveField removes key from mapping m; it reports whether it was there.
func RemoveField(m *yaml.Node, key string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// EnsureMap returns the mapping at key in m, creating an empty one when the
// key is missing or null.
func EnsureMap(m *yaml.Node, key string) *yaml.Node {
	if v := Field(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	SetField(m, key, v)
	return v
}

// KeyNode is a mapping key: a plain string scalar (the encoder still quotes
// one that YAML 1.2 would read otherwise, "3" or "true").
func KeyNode(k string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}
}

// StringNode returns a scalar node tagged as a string, so the encoder quotes
// values such as "3" or "true" that would otherwise read back as another
// type, in YAML 1.2 and in YAML 1.1 alike (SetString).
func StringNode(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode}
	SetString(n, v)
	return n
}

// SetString makes n the string v, quoted when a YAML 1.1 reader would take
// it for something else ("yes", "on", "0x10", "1e3"): kubectl and the
// apiserver read YAML 1.1, so `enabled: yes` written plain would come back
// a boolean.
func SetString(n *yaml.Node, v string) {
	n.Kind, n.Tag, n.Value = yaml.ScalarNode, yaml.NodeTagString, v
	if !plainString(v) && yaml.IsYaml1_1NonString(n) {
		n.Style = yaml.DoubleQuotedStyle
	} else if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		// keep the quotes it was written with
	} else {
		n.Style = 0
	}
}

// plainString reports whether v is sure to read back as a string, written
// plain, in YAML 1.1 and 1.2: it starts with a letter, holds only letters,
// digits and . _ / -, and is not one of the words YAML 1.1 reads as a
// boolean or null (in any case). Most values are (names, images, paths,
// refs): they skip kyaml's check, which parses each value with a YAML 1.1
// parser (a quarter of a steady resync's time, measured).
// Anything else is left to that check.
func plainString(v string) bool {
	if v == "" || !isLetter(v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		if c := v[i]; !isLetter(c) && (c < '0' || c > '9') && c != '.' && c != '_' && c != '/' && c != '-' {
			return false
		}
	}
	switch strings.ToLower(v) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func keepComments(old, repl *yaml.Node) {
	if repl.HeadComment == "" {
		repl.HeadComment = old.HeadComment
	}
	if repl.LineComment == "" {
		repl.LineComment = old.LineComment
	}
	if repl.FootComment == "" {
		repl.FootComment = old.FootComment
	}
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagNull)
}

// KindName describes a node's YAML kind for error messages.
func KindName(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a map"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case IsNull(n):
		return "null"
	case n.Kind == yaml.ScalarNode:
		return "a scalar"
	default:
		return "an alias"
	}
}

// Annotation returns an annotation of item without building a map.
func Annotation(item *yaml.RNode, key string) string {
	v, _ := ScalarAt(item.YNode(), "metadata", "annotations", key)
	return v
}

// Path returns the package-relative file an item came from ("" if unknown),
// reading the current kpt annotation first and the legacy one second.
func Path(item *yaml.RNode) string {
	ann := Lookup(item.YNode(), "metadata", "annotations")
	if p, ok := ScalarAt(ann, kioutil.PathAnnotation); ok {
		return p
	}
	p, _ := ScalarAt(ann, kioutil.LegacyPathAnnotation)
	return p
}

// Index returns the position of an item within its file (0 if unknown).
func Index(item *yaml.RNode) int {
	ann := Lookup(item.YNode(), "metadata", "annotations")
	v, ok := ScalarAt(ann, kioutil.IndexAnnotation)
	if !ok {
		v, _ = ScalarAt(ann, kioutil.LegacyIndexAnnotation)
	}
	i, _ := strconv.Atoi(v)
	return i
}

// TypeMeta returns apiVersion and kind of an item.
func TypeMeta(n *yaml.Node) (apiVersion, kind string) {
	apiVersion, _ = ScalarAt(n, "apiVersion")
	kind, _ = ScalarAt(n, "kind")
	return apiVersion, kind
}

// Name returns metadata.name of an object node.
func Name(n *yaml.Node) string {
	v, _ := ScalarAt(n, "metadata", "name")
	return v
}

// Namespace returns metadata.namespace of an object node.
func Namespace(n *yaml.Node) string {
	v, _ := ScalarAt(n, "metadata", "namespace")
	return v
}

// Group returns the API group of an apiVersion ("" for the core group).
func Group(apiVersion string) string {
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// Version returns the version part of an apiVersion.
func Version(apiVersion string) string {
	return apiVersion[strings.IndexByte(apiVersion, '/')+1:]
}

// Describe names an object for messages: `ConfigMap "x"`, `Kptfile "pkg"`.
func Describe(n *yaml.Node) string {
	_, kind := TypeMeta(n)
	if kind == "" {
		kind = "object"
	}
	return kind + " " + strconv.Quote(Name(n))
}

// ItemsAt returns the items read from file path, in index order as given.
func ItemsAt(items []*yaml.RNode, path string) []*yaml.RNode {
	var out []*yaml.RNode
	for _, it := range items {
		if Path(it) == path {
			out = append(out, it)
		}
	}
	return out
}

// DefaultNamespace is the namespace of an object that names none, as
// kubectl and the apiserver read it.
const DefaultNamespace = "default"

// EffectiveNamespace is ns as kubectl reads it: none is "default".
func EffectiveNamespace(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}

// SameNamespace reports whether two objects' namespaces are one as
// kubectl reads them (none and "default" are the same).
func SameNamespace(a, b string) bool { return EffectiveNamespace(a) == EffectiveNamespace(b) }
