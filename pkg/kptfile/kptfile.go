package kptfile

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	// FileName is the Kptfile's name at the package root.
	FileName = "Kptfile"
	// Kind is the Kptfile's kind.
	Kind = "Kptfile"
	// Mutators and Validators name the two pipeline lists.
	Mutators   = "mutators"
	Validators = "validators"
)

// Kptfile is the root Kptfile item of a package.
type Kptfile struct {
	Item *yaml.RNode
}

// Find returns the package's root Kptfile, or nil when there is none. The root
// Kptfile is the item read from file "Kptfile"; when no item carries a path
// (a ResourceList written by hand), a single Kptfile item is taken.
func Find(items []*yaml.RNode) (*Kptfile, error) {
	var atRoot, unplaced []*yaml.RNode
	for _, it := range items {
		p := krm.Path(it)
		_, kind := krm.TypeMeta(it.YNode())
		switch {
		case p == FileName:
			atRoot = append(atRoot, it)
		case p == "" && kind == Kind:
			unplaced = append(unplaced, it)
		}
	}
	if len(atRoot) == 0 && len(unplaced) == 1 && !anyPath(items) {
		atRoot = unplaced
	}
	switch {
	case len(atRoot) == 0:
		return nil, nil
	case len(atRoot) > 1:
		return nil, fmt.Errorf("the root Kptfile must hold exactly one object, found %d", len(atRoot))
	}
	if _, kind := krm.TypeMeta(atRoot[0].YNode()); kind != Kind {
		return nil, fmt.Errorf("the root Kptfile must be of kind %q, found kind %q", Kind, kind)
	}
	expandAliases(atRoot[0].YNode())
	return &Kptfile{Item: atRoot[0]}, nil
}

// expandAliases rewrites the Kptfile without YAML aliases and merge keys
// (`<<`), each replaced by a copy of what it stands for, with YAML's merge
// rules (a key of the mapping wins over a merged one; of several merged
// mappings, the first wins). kpt and Porch decode the Kptfile with those
// rules, so pvkit must read what they read: a readiness gate behind a
// merge key is a gate. A Kptfile without aliases is left as it is. The
// expansion is bounded: every document was checked by krm.CheckAliases.
func expandAliases(n *yaml.Node) {
	if hasAliases(n, map[*yaml.Node]bool{}) {
		expand(n)
	}
}

func hasAliases(n *yaml.Node, seen map[*yaml.Node]bool) bool {
	if n == nil || seen[n] {
		return false
	}
	seen[n] = true
	if n.Kind == yaml.AliasNode || n.Anchor != "" || isMergeKey(n) {
		return true
	}
	for _, c := range n.Content {
		if hasAliases(c, seen) {
			return true
		}
	}
	return false
}

func isMergeKey(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!!merge" || n.Tag == "tag:yaml.org,2002:merge")
}

// expand replaces, below n, every alias with a copy of its anchor and
// every merge key with the keys it merges, and drops the anchors.
func expand(n *yaml.Node) {
	n.Anchor = ""
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode && c.Alias != nil {
			n.Content[i] = deepCopy(c.Alias)
		}
		expand(n.Content[i])
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	var own []*yaml.Node
	var merged [][]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) || k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			own = append(own, k, v)
			continue
		}
		switch v.Kind {
		case yaml.MappingNode:
			merged = append(merged, v.Content)
		case yaml.SequenceNode:
			for _, m := range v.Content {
				if m.Kind == yaml.MappingNode {
					merged = append(merged, m.Content)
				}
			}
		}
	}
	if merged == nil {
		return
	}
	have := map[string]bool{}
	for i := 0; i+1 < len(own); i += 2 {
		have[own[i].Value] = true
	}
	for _, m := range merged {
		for i := 0; i+1 < len(m); i += 2 {
			if !have[m[i].Value] {
				have[m[i].Value] = true
				own = append(own, m[i], m[i+1])
			}
		}
	}
	n.Content = own
}

func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = deepCopy(k)
	}
	return &c
}

func anyPath(items []*yaml.RNode) bool {
	for _, it := range items {
		if krm.Annotation(it, kioutil.PathAnnotation) != "" || krm.Annotation(it, kioutil.LegacyPathAnnotation) != "" {
			return true
		}
	}
	return false
}

// FieldError is a problem with a field of the Kptfile; its message names the
// field, and Problem adds the file and object.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("`%s` %s", e.Field, e.Message)
}

// Problem converts an error from this package into a krm.Problem on the Kptfile.
func (k *Kptfile) Problem(err error) krm.Problem {
	field := ""
	if fe, ok := err.(*FieldError); ok {
		field = fe.Field
	}
	return krm.Errorf(k.Item, field, "%s", err.Error())
}

// sequence returns the list at path (nil when absent or null), or an error
// when something other than a list is there.
func (k *Kptfile) sequence(path ...string) (*yaml.Node, error) {
	parent := k.Item.YNode()
	field := ""
	for i, p := range path {
		if field != "" {
			field += "."
		}
		field += p
		n := krm.Field(parent, p)
		if krm.IsNull(n) {
			return nil, nil
		}
		want := yaml.MappingNode
		if i == len(path)-1 {
			want = yaml.SequenceNode
		}
		if n.Kind != want {
			what := "a map"
			if want == yaml.SequenceNode {
				what = "a list"
			}
			return nil, &FieldError{Field: field, Message: fmt.Sprintf("must be %s, found %s", what, krm.KindName(n))}
		}
		parent = n
	}
	return parent, nil
}

// entries returns the mapping entries of the list at path, checking each is a map.
func (k *Kptfile) entries(path ...string) ([]*yaml.Node, error) {
	seq, err := k.sequence(path...)
	if seq == nil || err != nil {
		return nil, err
	}
	for i, e := range seq.Content {
		if e.Kind != yaml.MappingNode {
			return nil, &FieldError{Field: fmt.Sprintf("%s[%d]", joinPath(path), i), Message: fmt.Sprintf("must be a map, found %s", krm.KindName(e))}
		}
	}
	return seq.Content, nil
}

// setSequence replaces the list at path; an empty list removes the field and
// then every parent mapping left empty (never the object itself).
func (k *Kptfile) setSequence(entries []*yaml.Node, path ...string) {
	root := k.Item.YNode()
	if len(entries) == 0 {
		removeAndPrune(root, path)
		return
	}
	parent := root
	for _, p := range path[:len(path)-1] {
		parent = krm.EnsureMap(parent, p)
	}
	last := path[len(path)-1]
	if seq := krm.Field(parent, last); seq != nil && seq.Kind == yaml.SequenceNode {
		seq.Content = entries
		return
	}
	krm.SetField(parent, last, &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: entries})
}

func removeAndPrune(m *yaml.Node, path []string) {
	if len(path) == 1 {
		krm.RemoveField(m, path[0])
		return
	}
	child := krm.Field(m, path[0])
	if child == nil || child.Kind != yaml.MappingNode {
		return
	}
	removeAndPrune(child, path[1:])
	if len(child.Content) == 0 {
		krm.RemoveField(m, path[0])
	}
}

func joinPath(path []string) string {
	s := ""
	for i, p := range path {
		if i > 0 {
			s += "."
		}
		s += p
	}
	return s
}
