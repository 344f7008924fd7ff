package tasks

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/pkg/variant"
)

// FieldChange is a difference between two versions of a package, as
// narrow as it can be named: a field of an object, a whole object, or a
// whole file (one that is not YAML objects, or one present on one side
// only).
type FieldChange struct {
	File   string
	Object string // kind/name (namespace/name when namespaced); "" for a whole file
	Field  string // as Conflict's; "" for a whole object or file
	// From and To are the values (YAML, one line, "<absent>" when not
	// there; "present" or "changed" for a whole object or file).
	From, To string
	// Note, when set, is the whole change in words (a file that is not
	// YAML objects: "published and rebuilt differ").
	Note string
}

func (c FieldChange) String() string {
	switch {
	case c.Note != "":
		return c.File + ": " + c.Note
	case c.Object == "":
		return fmt.Sprintf("%s: %s, %s", c.File, c.From, c.To)
	case c.Field == "":
		return fmt.Sprintf("%s: %s: %s, %s", c.File, c.Object, c.From, c.To)
	}
	return fmt.Sprintf("%s: %s %s: %s, %s", c.File, c.Object, c.Field, c.From, c.To)
}

// FieldChanges compares two packages by meaning (comments, formatting and
// key order do not count), file by file, then object by object and field
// by field in a file of YAML objects; sorted by file, object and field.
// fromName and toName are the words for each side in From and To
// ("published 3", "rebuilt 1").
func FieldChanges(from, to map[string]string, fromName, toName string) []FieldChange {
	var out []FieldChange
	for _, c := range variant.ChangedFiles(variant.FileDigests(from), variant.FileDigests(to)) {
		a, inFrom := from[c.Path]
		b, inTo := to[c.Path]
		if !inFrom || !inTo {
			out = append(out, FieldChange{File: c.Path, From: fromName + " " + presence(inFrom), To: toName + " " + presence(inTo)})
			continue
		}
		fields, ok := objectChanges(c.Path, a, b, fromName, toName)
		if !ok || len(fields) == 0 { // not objects (a README), or nothing kyaml reads as one
			out = append(out, FieldChange{File: c.Path, Note: fmt.Sprintf("%s and %s differ (not YAML objects)", fromName, toName)})
			continue
		}
		out = append(out, fields...)
	}
	return out
}

// objectChanges compares one file's objects; ok is false when either side
// does not parse as objects.
func objectChanges(path, a, b, fromName, toName string) ([]FieldChange, bool) {
	ia, err := index(map[string]string{path: a})
	if err != nil {
		return nil, false
	}
	ib, err := index(map[string]string{path: b})
	if err != nil {
		return nil, false
	}
	var out []FieldChange
	for _, id := range unionKeys(keysOf(ia), keysOf(ib)) {
		oa, ob := ia.byID[id], ib.byID[id]
		if oa == nil || ob == nil {
			it := oa
			if it == nil {
				it = ob
			}
			out = append(out, FieldChange{File: path, Object: objectName(it), From: fromName + " " + presence(oa != nil), To: toName + " " + presence(ob != nil)})
			continue
		}
		fa, fb := flattenWith(oa, true), flattenWith(ob, true)
		for _, p := range unionKeys(fa, fb) {
			if bookkeeping(p) {
				continue
			}
			if va, vb := valueOr(fa, p), valueOr(fb, p); va != vb {
				out = append(out, FieldChange{File: path, Object: objectName(oa), Field: p, From: fromName + " " + va, To: toName + " " + vb})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Object != out[j].Object {
			return out[i].Object < out[j].Object
		}
		return out[i].Field < out[j].Field
	})
	return out, true
}

// bookkeeping reports whether a field is kyaml's own record of where an
// object was read from (its file, its index there), not the object's.
func bookkeeping(p string) bool {
	const ann = "metadata.annotations."
	if !strings.HasPrefix(p, ann) {
		return false
	}
	k := strings.TrimPrefix(p, ann)
	return k == "config.kubernetes.io/path" || k == "config.kubernetes.io/index" || k == "config.k8s.io/id" || strings.HasPrefix(k, "internal.config.kubernetes.io/")
}

func keysOf(ix *indexed) map[string]string {
	m := make(map[string]string, len(ix.byID))
	for id := range ix.byID {
		m[id] = id
	}
	return m
}

func presence(there bool) string {
	if there {
		return "present"
	}
	return absent
}
