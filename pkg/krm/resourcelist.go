package krm

import (
	"bytes"
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceList is the KRM function wire format: items, the functionConfig
// and results.
type ResourceList struct {
	Items []*yaml.RNode
	// FunctionConfig is nil when the input has none.
	FunctionConfig *yaml.RNode
	Results        fn.Results
}

// Processor is a KRM function body: it edits rl.Items in place (or replaces
// the slice, for generators) and appends results. A run failed when any result
// has error severity; a Processor must then leave rl.Items as it found them.
type Processor func(rl *ResourceList)

// ParseResourceList decodes a ResourceList. Items are the nodes of the input
// document itself, so nothing is copied.
func ParseResourceList(in []byte) (*ResourceList, error) {
	if len(bytes.TrimSpace(in)) == 0 {
		return nil, fmt.Errorf("the input is empty: a KRM function reads a ResourceList on stdin (run it with kpt fn eval or kpt fn render)")
	}
	doc, err := yaml.Parse(string(in))
	if err != nil {
		return nil, fmt.Errorf("failed to parse the input ResourceList: %w", err)
	}
	root := doc.YNode()
	aliases, err := checkAliases(root)
	if err != nil {
		return nil, fmt.Errorf("the input ResourceList: %w", err)
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the input must be a ResourceList, found %s", KindName(root))
	}
	if _, kind := TypeMeta(root); kind != kio.ResourceListKind {
		return nil, fmt.Errorf("the input must be a ResourceList, found kind %q", kind)
	}
	rl := &ResourceList{}
	if items := Field(root, "items"); !IsNull(items) {
		if items.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("`items` of the input ResourceList must be a list, found %s", KindName(items))
		}
		rl.Items = make([]*yaml.RNode, 0, len(items.Content))
		for i, it := range items.Content {
			if it.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("`items[%d]` of the input ResourceList must be an object, found %s", i, KindName(it))
			}
			if aliases { // a document without any alias has none to check
				if err := CheckAnchorsWithin(it); err != nil {
					_, kind := TypeMeta(it)
					return nil, fmt.Errorf("`items[%d]` (%s %q) of the input ResourceList: %w", i, kind, Name(it), err)
				}
			}
			rl.Items = append(rl.Items, yaml.NewRNode(it))
		}
	}
	if fc := Field(root, "functionConfig"); !IsNull(fc) {
		if fc.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("`functionConfig` of the input ResourceList must be an object, found %s", KindName(fc))
		}
		rl.FunctionConfig = yaml.NewRNode(fc)
	}
	if res := Field(root, "results"); !IsNull(res) {
		if err := res.Decode(&rl.Results); err != nil {
			return nil, fmt.Errorf("`results` of the input ResourceList: %w", err)
		}
	}
	return rl, nil
}

// Bytes encodes the ResourceList.
func (rl *ResourceList) Bytes() ([]byte, error) {
	items := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: make([]*yaml.Node, 0, len(rl.Items))}
	for _, it := range rl.Items {
		items.Content = append(items.Content, it.YNode())
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	SetField(root, "apiVersion", StringNode(kio.ResourceListAPIVersion))
	SetField(root, "kind", StringNode(kio.ResourceListKind))
	SetField(root, "items", items)
	if rl.FunctionConfig != nil {
		SetField(root, "functionConfig", rl.FunctionConfig.YNode())
	}
	if len(rl.Results) > 0 {
		res := &yaml.Node{}
		if err := res.Encode(rl.Results); err != nil {
			return nil, fmt.Errorf("failed to encode results: %w", err)
		}
		SetField(root, "results", res)
	}
	s, err := yaml.String(root)
	return []byte(s), err
}
