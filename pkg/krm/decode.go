package krm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Decode reads obj into v, a struct with JSON tags (the Kubernetes API
// convention), and reports problems in kpt style: a value of the wrong type is
// an error naming its field path with list indexes; a field v does not know is
// a warning (the API server would drop it silently, which hides typos).
func Decode(obj *yaml.RNode, v any) []Problem {
	b, err := obj.MarshalJSON()
	if err != nil {
		return []Problem{Errorf(obj, "", "cannot read the object: %v", err)}
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
	var problems []Problem
	for _, f := range unknownFields(obj.YNode(), reflect.TypeOf(v), "") {
		problems = append(problems, Warningf(obj, f, "`%s` is not a field of %s; it is ignored", f, reflect.TypeOf(v).Elem().Name()))
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

// unknownFields lists the keys of n, recursively, that t does not declare.
func unknownFields(n *yaml.Node, t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch {
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := jsonFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			ft, ok := fields[k]
			if !ok {
				out = append(out, JoinField(prefix, k))
				continue
			}
			out = append(out, unknownFields(n.Content[i+1], ft, JoinField(prefix, k))...)
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, unknownFields(n.Content[i+1], t.Elem(), JoinField(prefix, n.Content[i].Value))...)
		}
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, c := range n.Content {
			out = append(out, unknownFields(c, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i))...)
		}
	}
	sort.Strings(out)
	return out
}

// jsonFields maps the JSON names of t's fields (inlined structs included) to
// their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
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

// Encode turns v, a value with JSON tags, into a block-style YAML node whose
// fields keep the order of v's type (JSON is YAML; only the styles change).
func Encode(v any) (*yaml.Node, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, err
	}
	blockStyle(n.YNode())
	return n.YNode(), nil
}

func blockStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		blockStyle(c)
	}
}
