package krm

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// YAML aliases let a few hundred bytes stand for gigabytes ("billion
// laughs"). pvkit never expands them while parsing, but anything that walks a
// document (semantic comparison, conversion to JSON or objects) follows them.
// So every document pvkit reads from a package, a ResourceList, a pvctl input
// or state file is checked first: its size with every alias expanded may be
// at most aliasSlack + aliasRatio x its size as written, else it is refused
// with the file named. Sizes are bytes (each scalar's value, plus nodeBytes
// per node for the syntax around it), not nodes: an anchor on one 10 KB
// scalar, nested 100 x 100, is 10^4 nodes but 100 MB. Legitimate anchors
// (shared labels reused a few times) stay far below the bound.
const (
	aliasRatio = 10
	aliasSlack = 64 << 10 // bytes
	nodeBytes  = 4        // what a node costs in the output besides its value ("- ", ": ", a newline)
)

// CheckAliases refuses a document whose aliases expand beyond the bound
// (rule: bounded-input).
// It runs in time linear in the document as written.
func CheckAliases(n *yaml.Node) error {
	_, err := checkAliases(n)
	return err
}

// checkAliases is CheckAliases, and whether the document holds an alias at
// all. Most documents hold none: they expand to themselves, and one walk
// that allocates nothing tells so.
func checkAliases(n *yaml.Node) (bool, error) {
	written, aliases := scan(n)
	if !aliases {
		return false, nil
	}
	expanded := expandedBytes(n, map[*yaml.Node]uint64{})
	if limit := uint64(aliasSlack + aliasRatio*written); expanded > limit {
		return true, fmt.Errorf("its YAML aliases expand its %d bytes to more than %d; pvkit refuses alias expansion beyond %dx (+%d bytes)", written, limit, aliasRatio, aliasSlack)
	}
	return true, nil
}

// scan is n's size as written (aliases are their names), and whether it
// holds an alias.
func scan(n *yaml.Node) (int, bool) {
	if n == nil {
		return 0, false
	}
	c, aliases := nodeBytes+len(n.Value), n.Kind == yaml.AliasNode
	for _, k := range n.Content {
		kc, ka := scan(k)
		c, aliases = c+kc, aliases || ka
	}
	return c, aliases
}

// expandedBytes is n's size with every alias replaced by its anchor's
// content, each anchor computed once (memo), saturating instead of
// overflowing. Only an anchored node can be reached twice (through its
// aliases), so only those are remembered.
func expandedBytes(n *yaml.Node, memo map[*yaml.Node]uint64) uint64 {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nodeBytes + uint64(len(n.Value))
		}
		n = n.Alias
	}
	if n.Anchor != "" {
		if c, ok := memo[n]; ok {
			return c
		}
		memo[n] = nodeBytes // an alias to an ancestor (the parser refuses those) counts once
	}
	c := uint64(nodeBytes + len(n.Value))
	for _, k := range n.Content {
		if c += expandedBytes(k, memo); c > 1<<62 {
			c = 1 << 62
		}
	}
	if n.Anchor != "" {
		memo[n] = c
	}
	return c
}

// CheckAnchorsWithin refuses an item holding an alias whose anchor is
// outside it (elsewhere in the ResourceList): written on its own, the item
// would hold an undefined alias, which is invalid YAML.
func CheckAnchorsWithin(item *yaml.Node) error {
	anchors := map[*yaml.Node]bool{}
	var aliases []*yaml.Node
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.Anchor != "" {
			anchors[n] = true
		}
		if n.Kind == yaml.AliasNode {
			aliases = append(aliases, n)
		}
		for _, k := range n.Content {
			walk(k)
		}
	}
	walk(item)
	for _, n := range aliases {
		if n.Alias != nil && !anchors[n.Alias] {
			return fmt.Errorf("the alias *%s refers to an anchor outside this object; written alone, the object would be invalid YAML", n.Value)
		}
	}
	return nil
}
