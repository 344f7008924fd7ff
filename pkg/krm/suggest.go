package krm

import (
	"reflect"
	"sort"
	"strings"
	"sync"
)

// suggest is the "did you mean" of an unknown field (as kubectl's and
// cobra's suggestions): the known field beside it nearest in spelling (`repositorySelecter` -> `repositorySelector`), else the place
// in root where a field of exactly that name is (`waves[1].spreadBy` ->
// `spec.rollout.spreadBy`); "" when neither.
func suggest(key string, siblings map[string]reflect.Type, root reflect.Type) string {
	best, bestD := "", 0
	for _, k := range sortedKeys(siblings) {
		if diff := len(key) - len(k); diff > maxTypos(key) || -diff > maxTypos(key) {
			continue // farther than the typos allowed, whatever the letters
		}
		d := EditDistance(strings.ToLower(key), strings.ToLower(k))
		if d <= maxTypos(key) && (best == "" || d < bestD) {
			best, bestD = k, d
		}
	}
	if best != "" {
		return best
	}
	if p := findField(root, key); p != "" {
		return p
	}
	return ""
}

// maxTypos is how far a field name may be from a known one to be taken
// for it: a third of its length, at least one, at most three.
func maxTypos(s string) int {
	return min(max(len(s)/3, 1), 3)
}

// findField is the shortest path in t to a field named key ("" when none),
// looked for breadth first, a few levels deep; list and map levels are
// shown as [*] and .*. The paths of every name in t are found once per
// type and kept (fieldIndex): a document of many unknown fields costs a
// look-up each, not a search of t each.
func findField(t reflect.Type, key string) string {
	idx, ok := fieldIndexes.Load(t)
	if !ok {
		idx, _ = fieldIndexes.LoadOrStore(t, fieldIndex(t))
	}
	return idx.(map[string]string)[key]
}

// fieldIndexes are the fieldIndex of each type asked for (the API types:
// a handful).
var fieldIndexes sync.Map

// fieldIndex maps each field name in t, a few levels deep, to its
// shortest path, breadth first and in name order at each level (the
// first found wins).
func fieldIndex(t reflect.Type) map[string]string {
	type node struct {
		t    reflect.Type
		path string
	}
	out := map[string]string{}
	seen := map[reflect.Type]bool{}
	level := []node{{t, ""}}
	for depth := 0; depth < 6 && len(level) > 0; depth++ {
		var next []node
		for _, n := range level {
			ft := n.t
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				if ft.Kind() == reflect.Slice {
					n.path += "[*]"
				} else if ft.Kind() == reflect.Map {
					n.path = JoinField(n.path, "*")
				}
				ft = ft.Elem()
			}
			if ft.Kind() != reflect.Struct || seen[ft] {
				continue
			}
			seen[ft] = true
			fields := jsonFields(ft)
			for _, k := range sortedKeys(fields) {
				if _, found := out[k]; !found {
					out[k] = JoinField(n.path, k)
				}
				next = append(next, node{fields[k], JoinField(n.path, k)})
			}
		}
		level = next
	}
	return out
}

func sortedKeys(m map[string]reflect.Type) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// EditDistance is Levenshtein's distance between a and b (bytes: for
// names, which are ASCII).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
