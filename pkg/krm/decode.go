package krm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Decode reads obj into v, a struct with JSON tags (the Kubernetes API
// convention), and reports problems in kpt style: a value of the wrong type is
// an error naming its field path with list indexes; a field v does not know is
// a warning (the API server would drop it silently, which hides typos).
func Decode(obj *yaml.RNode, v any) []Problem {
	b, err := JSON(obj)
	if err != nil {
		return []Problem{Errorf(obj, "", "cannot read the object: %v", err)}
	}
	// Every value of the wrong type at once (the JSON decoder stops at the
	// first, so a spec with three took three runs to fix).
	if mismatches := typeMismatches(obj.YNode(), reflect.TypeOf(v), ""); len(mismatches) > 0 {
		problems := make([]Problem, 0, len(mismatches))
		for _, m := range mismatches {
			problems = append(problems, Errorf(obj, m.field, "`%s` must be %s, found %s", m.field, jsonKindName(m.want), jsonValueName(m.found)))
		}
		return append(problems, unknownFieldProblems(obj, v)...)
	}
	if err := json.Unmarshal(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := locate(obj.YNode(), strings.Split(te.Field, "."), "", te.Value)
			if field == "" {
				field = te.Field
			}
			return []Problem{Errorf(obj, field, "`%s` must be %s, found %s", field, jsonKindName(te.Type), jsonValueName(te.Value))}
		}
		return []Problem{Errorf(obj, "", "cannot read the object: %v", err)}
	}
	return unknownFieldProblems(obj, v)
}

// Ignored ends the warning for an unknown field: what a function does with
// it. A caller that refuses unknown fields instead (pvctl run, as kubectl's
// strict validation) says so in its place.
const Ignored = "; it is ignored"

// unknownFieldProblems are warnings for the fields of obj v's type does
// not declare (the API server would drop them silently, hiding typos).
func unknownFieldProblems(obj *yaml.RNode, v any) []Problem {
	var problems []Problem
	root := reflect.TypeOf(v)
	for _, u := range unknownFields(obj.YNode(), root, "", root) {
		hint := ""
		if u.suggest != "" {
			hint = " (did you mean `" + u.suggest + "`?)"
		}
		problems = append(problems, Warningf(obj, u.field, "`%s` is not a field of %s%s"+Ignored, u.field, root.Elem().Name(), hint))
	}
	return problems
}

// locate returns the path, with list indexes, of the first node along path
// (keys, stepping through lists) whose JSON kind is found: the value the JSON
// decoder complained about.
func locate(n *yaml.Node, path []string, prefix, found string) string {
	if n.Kind == yaml.SequenceNode && (len(path) > 0 || found != "array") {
		for i, c := range n.Content {
			if f := locate(c, path, fmt.Sprintf("%s[%d]", prefix, i), found); f != "" {
				return f
			}
		}
		return ""
	}
	if len(path) == 0 {
		if jsonKind(n) == found {
			return prefix
		}
		if n.Kind == yaml.MappingNode { // a map's value: the decoder names the map, not the key
			for i := 0; i+1 < len(n.Content); i += 2 {
				if jsonKind(n.Content[i+1]) == found {
					return JoinField(prefix, n.Content[i].Value)
				}
			}
		}
		return ""
	}
	if c := Field(n, path[0]); c != nil {
		return locate(c, path[1:], JoinField(prefix, path[0]), found)
	}
	// An inlined struct appears in the decoder's path under its Go type name.
	return locate(n, path[1:], prefix, found)
}

func jsonKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "array"
	}
	switch n.ShortTag() {
	case yaml.NodeTagInt, yaml.NodeTagFloat:
		return "number"
	case yaml.NodeTagBool:
		return "bool"
	case yaml.NodeTagNull:
		return "null"
	}
	return "string"
}

// mismatch is a value whose JSON kind its Go type cannot take.
type mismatch struct {
	field string
	want  reflect.Type
	found string // its JSON kind
}

var (
	jsonUnmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()
	textUnmarshaler = reflect.TypeOf((*interface{ UnmarshalText([]byte) error })(nil)).Elem()
)

// typeMismatches lists, in document order, every value of n whose JSON kind
// t's field cannot take, as encoding/json would refuse it. Types with
// their own decoding (json.Unmarshaler, TextUnmarshaler: times, quantities,
// int-or-string) and interfaces take anything; null is always taken.
func typeMismatches(n *yaml.Node, t reflect.Type, prefix string) []mismatch {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	kind := jsonKind(n)
	if kind == "null" {
		return nil
	}
	ok := true
	switch t.Kind() {
	case reflect.String:
		ok = kind == "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		ok = kind == "number"
	case reflect.Bool:
		ok = kind == "bool"
	case reflect.Slice, reflect.Array:
		ok = kind == "array" || (t.Elem().Kind() == reflect.Uint8 && kind == "string")
	case reflect.Map, reflect.Struct:
		ok = kind == "object"
	}
	if !ok {
		return []mismatch{{field: prefix, want: t, found: kind}}
	}
	var out []mismatch
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if ft, ok := fields[n.Content[i].Value]; ok {
				out = append(out, typeMismatches(n.Content[i+1], ft, JoinField(prefix, n.Content[i].Value))...)
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, typeMismatches(n.Content[i+1], t.Elem(), JoinField(prefix, n.Content[i].Value))...)
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			out = append(out, typeMismatches(c, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i))...)
		}
	}
	return out
}

// unknownFields lists the keys of n, recursively, that t does not declare.
func unknownFields(n *yaml.Node, t reflect.Type, prefix string, root reflect.Type) []unknownField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []unknownField
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			ft, ok := fields[k]
			if !ok {
				out = append(out, unknownField{field: JoinField(prefix, k), suggest: suggest(k, fields, root)})
				continue
			}
			out = append(out, unknownFields(n.Content[i+1], ft, JoinField(prefix, k), root)...)
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, unknownFields(n.Content[i+1], t.Elem(), JoinField(prefix, n.Content[i].Value), root)...)
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			out = append(out, unknownFields(c, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i), root)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].field < out[j].field })
	return out
}

// unknownField is a field its type does not declare, and what it may
// have meant.
type unknownField struct{ field, suggest string }

// jsonFields maps the JSON names of t's fields (inlined structs included) to
// their types; made once per type and shared (callers only read it).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if m, ok := jsonFieldsOf.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m, _ := jsonFieldsOf.LoadOrStore(t, makeJSONFields(t))
	return m.(map[string]reflect.Type)
}

var jsonFieldsOf sync.Map

func makeJSONFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func jsonKindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a map"
	}
	return "a " + t.String()
}

func jsonValueName(v string) string {
	switch v {
	case "object":
		return "a map"
	case "array":
		return "a list"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "a " + v
}

// Encode turns v, a value with JSON tags, into a block-style YAML node with
// the fields in the order of v's type, as encoding/json would write them
// (omitempty honoured, inlined structs flattened, map keys sorted). It builds
// the nodes directly; only values with their own JSON marshaller go through
// encoding/json.
func Encode(v any) (*yaml.Node, error) {
	n, err := encodeValue(reflect.ValueOf(v))
	if err != nil {
		return nil, err
	}
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}, nil
	}
	return n, nil
}

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func encodeValue(v reflect.Value) (*yaml.Node, error) {
	if !v.IsValid() {
		return nil, nil
	}
	if v.Type().Implements(jsonMarshaler) && (v.Kind() != reflect.Pointer || !v.IsNil()) {
		return encodeViaJSON(v.Interface())
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return encodeValue(v.Elem())
	case reflect.Struct:
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		return m, encodeFields(m, v)
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, k := range keys {
			c, err := encodeValue(v.MapIndex(k))
			if err != nil {
				return nil, err
			}
			m.Content = append(m.Content, KeyNode(k.String()), orNull(c))
		}
		return m, nil
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return nil, nil
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for i := 0; i < v.Len(); i++ {
			c, err := encodeValue(v.Index(i))
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, orNull(c))
		}
		return seq, nil
	case reflect.String:
		return StringNode(v.String()), nil
	case reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: fmt.Sprint(v.Bool())}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: fmt.Sprint(v.Interface())}, nil
	}
	return encodeViaJSON(v.Interface())
}

// encodeFields appends v's fields to mapping m.
func encodeFields(m *yaml.Node, v reflect.Value) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			for fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					break
				}
				fv = fv.Elem()
			}
			if fv.Kind() == reflect.Struct {
				if err := encodeFields(m, fv); err != nil {
					return err
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "omitempty") && fv.IsZero() || isEmptyCollection(fv, opts) {
			continue
		}
		c, err := encodeValue(fv)
		if err != nil {
			return err
		}
		m.Content = append(m.Content, KeyNode(name), orNull(c))
	}
	return nil
}

func isEmptyCollection(v reflect.Value, opts string) bool {
	if !strings.Contains(opts, "omitempty") {
		return false
	}
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.String, reflect.Array:
		return v.Len() == 0
	}
	return false
}

func orNull(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}
	}
	return n
}

func encodeViaJSON(v any) (*yaml.Node, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	n, err := ParseJSON(b)
	if err != nil {
		return nil, err
	}
	return n.YNode(), nil
}

// ParseJSON parses JSON (an object read from the cluster) into a block-style
// YAML node, so that it writes like the rest of a package.
func ParseJSON(b []byte) (*yaml.RNode, error) {
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	blockStyle(n.YNode())
	return n, nil
}

func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}
