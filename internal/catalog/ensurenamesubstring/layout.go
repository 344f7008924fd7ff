package ensurenamesubstring

import (
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// layout is how an object's annotations were written: where in its
// metadata, in which order and style. kustomize (on kyaml v0.20) rewrites
// an object's annotations whenever it records a name it changed, moving
// them to the end of the metadata, sorted and restyled; the catalog's
// builds (kyaml v0.10 and v0.13) edited them in place. restore puts the
// annotations the object ends with back as they were written.
type layout struct {
	at   int        // the annotations' place among metadata's fields; -1: none
	key  *yaml.Node // the annotations key (its comments)
	node *yaml.Node // a copy of the annotations as they were
}

// metadataOf is an object's metadata mapping, or nil.
func metadataOf(n *yaml.RNode) *yaml.Node {
	if f := n.Field(yaml.MetadataField); f != nil && f.Value.YNode().Kind == yaml.MappingNode {
		return f.Value.YNode()
	}
	return nil
}

// annotationsAt is the place of the annotations among a metadata mapping's
// fields, or -1.
func annotationsAt(meta *yaml.Node) int {
	for i := 0; i+1 < len(meta.Content); i += 2 {
		if meta.Content[i].Value == yaml.AnnotationsField {
			return i / 2
		}
	}
	return -1
}

func snapshot(n *yaml.RNode) layout {
	meta := metadataOf(n)
	if meta == nil {
		return layout{at: -1}
	}
	at := annotationsAt(meta)
	if at < 0 || meta.Content[2*at+1].Kind != yaml.MappingNode {
		return layout{at: -1}
	}
	return layout{at: at, key: yaml.CopyYNode(meta.Content[2*at]), node: yaml.CopyYNode(meta.Content[2*at+1])}
}

// restore writes the annotations n has now in the layout they had: kept
// entries in their order and style, changed values in place, new ones
// after them (sorted), and the field where it was. An object that had no
// annotations is left as it is.
func (l layout) restore(n *yaml.RNode) {
	meta := metadataOf(n)
	if l.at < 0 || meta == nil {
		return
	}
	now := n.GetAnnotations()
	out := &yaml.Node{Kind: yaml.MappingNode, Style: l.node.Style, Tag: l.node.Tag}
	for i := 0; i+1 < len(l.node.Content); i += 2 {
		k, v := l.node.Content[i], l.node.Content[i+1]
		value, ok := now[k.Value]
		if !ok {
			continue
		}
		delete(now, k.Value)
		if v.Kind != yaml.ScalarNode || v.Value != value {
			v = yaml.NewStringRNode(value).YNode()
		}
		out.Content = append(out.Content, k, v)
	}
	for _, k := range slices.Sorted(maps.Keys(now)) {
		out.Content = append(out.Content, yaml.NewStringRNode(k).YNode(), yaml.NewStringRNode(now[k]).YNode())
	}
	if at := annotationsAt(meta); at >= 0 {
		meta.Content = slices.Delete(meta.Content, 2*at, 2*at+2)
	}
	if len(out.Content) > 0 {
		at := min(l.at, len(meta.Content)/2)
		meta.Content = slices.Insert(meta.Content, 2*at, l.key, out)
	}
}
