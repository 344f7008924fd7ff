package krm

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// YAML aliases let a few hundred bytes stand for gigabytes ("billion
// laughs"). pvkit never expands them while parsing, but anything that walks a
// document (semantic comparison, conversion to objects) follows them. So
// every document pvkit reads from a package, a ResourceList or a pvctl input
// file is checked first: its expanded size may be at most
// aliasSlack + aliasRatio x its size as written, else it is refused with the
// file named. Legitimate anchors (shared labels reused a few times) stay far
// below that.
const (
	aliasRatio = 10
	aliasSlack = 10_000
)

// CheckAliases refuses a document whose aliases expand beyond the bound.
// It runs in time linear in the document as written.
func CheckAliases(n *yaml.Node) error {
	written := countWritten(n)
	memo := map[*yaml.Node]uint64{}
	expanded := countExpanded(n, memo)
	if limit := uint64(aliasSlack + aliasRatio*written); expanded > limit {
		return fmt.Errorf("its YAML aliases expand its %d nodes to more than %d; pvkit refuses alias expansion beyond %dx (+%d)", written, limit, aliasRatio, aliasSlack)
	}
	return nil
}

func countWritten(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countWritten(k)
	}
	return c
}

// countExpanded counts n's nodes with every alias replaced by its anchor's
// content, each anchor counted once (memo), saturating instead of
// overflowing.
func countExpanded(n *yaml.Node, memo map[*yaml.Node]uint64) uint64 {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1
		}
		n = n.Alias
	}
	if c, ok := memo[n]; ok {
		return c
	}
	memo[n] = 1 // an alias to an ancestor (the parser refuses those) counts once
	c := uint64(1)
	for _, k := range n.Content {
		if c += countExpanded(k, memo); c > 1<<62 {
			c = 1 << 62
		}
	}
	memo[n] = c
	return c
}

// CheckAnchorsWithin refuses an item holding an alias whose anchor is
// outside it (elsewhere in the ResourceList): written on its own, the item
// would hold an undefined alias, which is invalid YAML.
func CheckAnchorsWithin(item *yaml.Node) error {
	inside := map[*yaml.Node]bool{}
	var mark func(*yaml.Node)
	mark = func(n *yaml.Node) {
		if n == nil || inside[n] {
			return
		}
		inside[n] = true
		for _, k := range n.Content {
			mark(k)
		}
	}
	mark(item)
	for n := range inside {
		if n.Kind == yaml.AliasNode && n.Alias != nil && !inside[n.Alias] {
			return fmt.Errorf("the alias *%s refers to an anchor outside this object; written alone, the object would be invalid YAML", n.Value)
		}
	}
	return nil
}
