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
	return &Kptfile{Item: atRoot[0]}, nil
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
