package krm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// JSON is an object's JSON exactly as kyaml's RNode.MarshalJSON gives it
// (the same bytes, the same errors for what JSON cannot hold), in time
// linear in the object. kyaml writes the node as YAML and decodes it
// again with yaml.v3, which checks each mapping's keys against every
// other key of it: a mapping of 60,000 keys cost 23 s and 400,000 over
// 200 s, so a file in a pull request could hold a CI job for minutes.
// Here a mapping's keys are checked for duplicates through a map, and
// each scalar is still resolved by yaml.v3 itself (its tags, numbers,
// booleans and nulls), so the two agree (TestJSONAgreesWithKyaml,
// FuzzJSONAgreesWithKyaml). Aliases are expanded as yaml.v3 expands them
// (their size bounded by CheckAliases). A root that is not a mapping, an
// alias that contains itself or one whose anchor is outside the object,
// and a document with merge keys (`<<`, rare in KRM; yaml.v3 compares a
// merged key with the mapping's own by their decoded values) keep kyaml's
// path, the last with its mappings bounded to MaxKeysWithMerge keys so
// that its quadratic check stays small.
func JSON(n *yaml.RNode) ([]byte, error) {
	root := n.YNode()
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return n.MarshalJSON()
	}
	if _, merges := mergeKeys(root); merges {
		return kyamlJSON(n, root)
	}
	c := &jsonConv{flowAt: anchoredFlow(root), active: map[*yaml.Node]bool{}}
	m := c.rootMapping(root)
	if c.cycle {
		return kyamlJSON(n, root)
	}
	if len(c.errs) > 0 {
		return nil, &yaml.TypeError{Errors: c.errs}
	}
	if c.err != nil {
		return nil, c.err
	}
	b, err := json.Marshal(m)
	var me *json.MarshalerError
	if errors.As(err, &me) && me.Err == errAnyKeyMap {
		return nil, errAnyKeyMap
	}
	return b, err
}

// anchoredFlow says, of each anchored node below root, whether it is
// written in flow style or as a key where it is defined (an alias's value
// is written there, not where the alias stands).
func anchoredFlow(root *yaml.Node) map[*yaml.Node]bool {
	out := map[*yaml.Node]bool{}
	type at struct {
		n    *yaml.Node
		flow bool
	}
	stack := []at{{root, false}}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.n.Anchor != "" {
			out[e.n] = e.flow
		}
		if e.n.Kind == yaml.AliasNode {
			continue
		}
		flow := e.flow || e.n.Style&yaml.FlowStyle != 0
		for i, c := range e.n.Content {
			// A key is written where nothing cannot stand, as flow style is.
			stack = append(stack, at{c, flow || e.n.Kind == yaml.MappingNode && i%2 == 0})
		}
	}
	return out
}

// MaxKeysWithMerge bounds the keys of one mapping in a document that
// takes kyaml's path (merge keys, an alias as a key or one that contains
// itself): 10,000 keys cost about 0.3 s there.
const MaxKeysWithMerge = 10000

// kyamlJSON is kyaml's JSON of n, its mappings bounded first.
func kyamlJSON(n *yaml.RNode, root *yaml.Node) ([]byte, error) {
	if keys, _ := mergeKeys(root); keys > MaxKeysWithMerge {
		return nil, fmt.Errorf("a mapping of %d keys in a document with YAML merge keys (<<) or aliases as keys: pvkit reads at most %d keys in one mapping of such a document", keys, MaxKeysWithMerge)
	}
	return n.MarshalJSON()
}

// mergeKeys is the most keys of one mapping below root, and whether any
// mapping has a merge key.
func mergeKeys(root *yaml.Node) (most int, merges bool) {
	stack := []*yaml.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode {
			most = max(most, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				merges = merges || isMerge(n.Content[i])
			}
		}
		stack = append(stack, n.Content...)
	}
	return most, merges
}

// isMerge is yaml.v3's merge key (`<<`, untagged or tagged !!merge).
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.ShortTag() == "!!merge")
}

// jsonConv turns nodes into the values yaml.v3 decodes into interface{}.
type jsonConv struct {
	errs []string // yaml.v3's unmarshal errors, in document order
	err  error    // a value JSON cannot hold (as json.Marshal says it)
	// flowAt is anchoredFlow's; active the aliases being expanded, and
	// cycle set when one contains itself or names an anchor outside the
	// object (kyaml's path says what is wrong with it).
	flowAt map[*yaml.Node]bool
	active map[*yaml.Node]bool
	cycle  bool
}

// rootMapping is the root decoded into map[string]interface{}, as kyaml
// decodes it: every scalar key is taken as its text, a null key dropped.
func (c *jsonConv) rootMapping(root *yaml.Node) map[string]any {
	n := root
	if c.duplicates(n) {
		return nil
	}
	out := make(map[string]any, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			c.cycle = true // an alias as a key: kyaml's path
			return nil
		}
		if k.Kind != yaml.ScalarNode {
			c.errs = append(c.errs, fmt.Sprintf("line %d: cannot unmarshal %s into string", k.Line, k.ShortTag()))
			continue
		}
		key := k.Value
		switch {
		case emptyNull(k): // written again as '': a string
		case k.ShortTag() == "!!null":
			continue
		case k.ShortTag() == "!!binary":
			var s string
			if err := k.Decode(&s); err != nil {
				c.addErr(err)
				continue
			}
			key = s
		}
		out[key] = c.value(v, root.Style&yaml.FlowStyle != 0)
	}
	return out
}

// maxDuplicateErrors bounds the errors said of one mapping's duplicate
// keys: yaml.v3 says one per pair, which a key given n times makes n²/2.
const maxDuplicateErrors = 100

// duplicates records yaml.v3's errors for keys defined twice in mapping n
// (same kind and text), one per pair in yaml.v3's order, and reports
// whether there was one: yaml.v3 then decodes nothing below n. The lines
// are the node's own (kyaml's count those of the document it writes
// again).
func (c *jsonConv) duplicates(n *yaml.Node) bool {
	type pair struct{ i, j int }
	var pairs []pair
	seen := make(map[string][]int, len(n.Content)/2)
	for j := 0; j+1 < len(n.Content); j += 2 {
		k := n.Content[j]
		id := fmt.Sprint(int(k.Kind)) + "\x00" + k.Value
		for _, i := range seen[id] {
			if len(pairs) < maxDuplicateErrors {
				pairs = append(pairs, pair{i, j})
			}
		}
		if len(seen[id]) < maxDuplicateErrors {
			seen[id] = append(seen[id], j)
		}
	}
	sort.Slice(pairs, func(a, b int) bool {
		if pairs[a].i != pairs[b].i {
			return pairs[a].i < pairs[b].i
		}
		return pairs[a].j < pairs[b].j
	})
	for _, p := range pairs {
		ni, nj := n.Content[p.i], n.Content[p.j]
		c.errs = append(c.errs, fmt.Sprintf("line %d: mapping key %#v already defined at line %d", nj.Line, nj.Value, ni.Line))
	}
	return len(pairs) > 0
}

// value is a node as yaml.v3 decodes it into interface{} once kyaml has
// written it again; flow says whether a collection around it is written
// in flow style.
func (c *jsonConv) value(n *yaml.Node, flow bool) any {
	if n.Kind == yaml.AliasNode {
		target := n.Alias
		if _, inside := c.flowAt[target]; !inside || c.active[target] {
			c.cycle = true // an anchor outside the object, or an alias that contains itself
			return nil
		}
		c.active[target] = true
		defer delete(c.active, target)
		return c.value(target, c.flowAt[target])
	}
	flow = flow || n.Style&yaml.FlowStyle != 0
	switch n.Kind {
	case yaml.MappingNode:
		return c.mapping(n, flow)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			out[i] = c.value(e, flow)
		}
		return out
	}
	if n.ShortTag() == "!!str" || flow && emptyNull(n) {
		return n.Value
	}
	var v any
	if err := n.Decode(&v); err != nil {
		c.addErr(err)
		return nil
	}
	return v
}

// mapping is a nested mapping: map[string]interface{} when every key is a
// string, as yaml.v3 makes it; else JSON cannot hold it, as json.Marshal
// says of yaml.v3's map[interface{}]interface{}.
func (c *jsonConv) mapping(n *yaml.Node, flow bool) any {
	if c.duplicates(n) {
		return nil
	}
	out := make(map[string]any, len(n.Content)/2)
	stringKeys := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind == yaml.AliasNode {
			c.cycle = true // an alias as a key: kyaml's path
			return nil
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" && !emptyNull(k) {
			stringKeys = false
		}
		v := c.value(n.Content[i+1], flow)
		if k.Kind == yaml.ScalarNode {
			out[k.Value] = v
		}
	}
	if !stringKeys {
		return anyKeyMap{}
	}
	return out
}

// anyKeyMap stands for a mapping yaml.v3 decodes into
// map[interface{}]interface{} (a key that is not a string): JSON cannot
// hold it, and json.Marshal says so when it reaches it (a merge may have
// replaced it first).
type anyKeyMap struct{}

var errAnyKeyMap = &json.UnsupportedTypeError{Type: mapAnyAnyType}

func (anyKeyMap) MarshalJSON() ([]byte, error) { return nil, errAnyKeyMap }

// emptyNull is a null written as nothing, which yaml.v3's encoder writes
// as a quoted empty string where nothing cannot stand: in flow style and
// as a key.
func emptyNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.ShortTag() == "!!null"
}

func (c *jsonConv) addErr(err error) {
	if te, ok := err.(*yaml.TypeError); ok {
		c.errs = append(c.errs, te.Errors...)
		return
	}
	if c.err == nil {
		c.err = err
	}
}

var mapAnyAnyType = reflect.TypeOf(map[any]any{})
