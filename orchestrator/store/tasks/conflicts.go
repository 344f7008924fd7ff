package tasks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Conflict is a field that both sides of an upgrade changed, to different
// values: the local package (a person's edit) and the move from the old
// upstream to the new one. kpt's resource merge (kyaml merge3) lets the
// upstream win there and drops the local value silently; pvkit's in-place
// draft upgrade stops instead and names it (rule: draft-upgrade).
type Conflict struct {
	File   string // the package file
	Object string // kind/name (namespace/name when namespaced)
	Field  string // the field's path, list entries by name when they have one: spec.template.spec.containers[name=app].image
	// Old, Local and Upstream are the field's values (YAML, one line, "<absent>" when not set).
	Old, Local, Upstream string
}

func (c Conflict) String() string {
	return fmt.Sprintf("%s: %s %s: the upstream changed %s to %s, the draft has %s", c.File, c.Object, c.Field, c.Old, c.Upstream, c.Local)
}

const absent = "<absent>"

// Conflicts lists the fields both sides changed differently in an upgrade
// of local from oldUp to newUp, sorted by file, object and field. An object
// the upstream removed and the local package changed is one conflict on
// the whole object; an object the local package removed is left removed,
// as kpt leaves it. The Kptfile's upstream, upstreamLock and status are
// the upgrade's own business and never conflict.
func Conflicts(oldUp, newUp, local map[string]string) ([]Conflict, error) {
	o, err := index(oldUp)
	if err != nil {
		return nil, fmt.Errorf("the old upstream: %w", err)
	}
	u, err := index(newUp)
	if err != nil {
		return nil, fmt.Errorf("the new upstream: %w", err)
	}
	l, err := index(local)
	if err != nil {
		return nil, fmt.Errorf("the draft: %w", err)
	}
	var out []Conflict
	for _, id := range l.order {
		dest, orig, upd := l.byID[id], o.byID[id], u.byID[id]
		if orig == nil {
			continue // the draft's own, or added on both sides: the draft's is kept
		}
		file, what := krm.Path(dest), objectName(dest)
		if upd == nil {
			if !krm.SemanticEqual(dest.YNode(), orig.YNode()) {
				out = append(out, Conflict{File: file, Object: what, Field: "(the whole object)", Old: "present", Local: "changed", Upstream: absent})
			}
			continue
		}
		fo, fl, fu := flatten(orig), flatten(dest), flatten(upd)
		skip := func(string) bool { return false }
		if dest.GetKind() == kptfile.Kind {
			skip = func(p string) bool {
				for _, pre := range []string{"upstream", "upstreamLock", "status"} {
					if p == pre || strings.HasPrefix(p, pre+".") || strings.HasPrefix(p, pre+"[") {
						return true
					}
				}
				return false
			}
		}
		for _, p := range unionKeys(fo, fl, fu) {
			ov, lv, uv := valueOr(fo, p), valueOr(fl, p), valueOr(fu, p)
			if lv != ov && uv != ov && lv != uv && !skip(p) {
				out = append(out, Conflict{File: file, Object: what, Field: p, Old: ov, Local: lv, Upstream: uv})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Field < b.Field
	})
	return out, nil
}

func objectName(it *yaml.RNode) string {
	ns, name := mergeIdentity(it)
	if ns != "" {
		name = ns + "/" + name
	}
	return it.GetKind() + "/" + name
}

func valueOr(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return absent
}

func unionKeys(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// flatten maps an object's leaves to their values: mappings by key, lists
// of mappings that all have a name by that name (as kpt merges them), any
// other list as one value. Comments and key order do not count.
func flatten(it *yaml.RNode) map[string]string { return flattenWith(it, false) }

// flattenWith is flatten; byIndex: a list whose entries are not all named
// is walked entry by entry, by index ([0]), so that a difference is named
// as narrowly as it can be (FieldChanges).
func flattenWith(it *yaml.RNode, byIndex bool) map[string]string {
	out := map[string]string{}
	var walk func(n *yaml.Node, p string)
	walk = func(n *yaml.Node, p string) {
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch n.Kind {
		case yaml.MappingNode:
			if len(n.Content) == 0 {
				out[p] = "{}"
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if p != "" {
					k = p + "." + k
				}
				walk(n.Content[i+1], k)
			}
		case yaml.SequenceNode:
			key := listKey(p)
			if names, ok := namedEntries(n, key); ok {
				for i, e := range n.Content {
					walk(e, p+"["+key+"="+names[i]+"]")
				}
				return
			}
			if byIndex && len(n.Content) > 0 {
				for i, e := range n.Content {
					walk(e, p+"["+strconv.Itoa(i)+"]")
				}
				return
			}
			out[p] = oneLine(n)
		default:
			out[p] = oneLine(n)
		}
	}
	walk(it.YNode(), "")
	return out
}

// listKey is the field that identifies the entries of the list at path p:
// a Kptfile's readiness gates by condition type (they merge so,
// MergeReadinessGates), any other list by name, as kpt merges them.
func listKey(p string) string {
	if p == "info.readinessGates" {
		return "conditionType"
	}
	return "name"
}

// namedEntries: the keys of a list's entries when every entry is a mapping
// with a distinct scalar key field.
func namedEntries(n *yaml.Node, key string) ([]string, bool) {
	if len(n.Content) == 0 {
		return nil, false
	}
	seen := map[string]bool{}
	names := make([]string, len(n.Content))
	for i, e := range n.Content {
		if e.Kind != yaml.MappingNode {
			return nil, false
		}
		name := ""
		for j := 0; j+1 < len(e.Content); j += 2 {
			if e.Content[j].Value == key && e.Content[j+1].Kind == yaml.ScalarNode {
				name = e.Content[j+1].Value
			}
		}
		if name == "" || seen[name] {
			return nil, false
		}
		seen[name], names[i] = true, name
	}
	return names, true
}

// oneLine is a node as one line of flow YAML, without comments.
func oneLine(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		if n.Value == "" || strings.ContainsAny(n.Value, " \n\t") {
			return strconv.Quote(n.Value)
		}
		return n.Value
	}
	c := *n
	c.Style = yaml.FlowStyle
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	b, err := yaml.Marshal(&c)
	if err != nil {
		return fmt.Sprintf("%v", n.Value)
	}
	return strings.TrimSpace(string(b))
}
