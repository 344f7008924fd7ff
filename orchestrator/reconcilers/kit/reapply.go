package kit

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Rebase re-applies one reconcile's own changes to a status, from what it
// read (before) to what it made (after), onto the status as it is now
// (fresh), field by field, as Flux's patch helper does on a conflict: a
// field the reconcile did not change keeps fresh's value; one it set,
// cleared or removed is set, cleared or removed in fresh too. A list whose
// entries are keyed (KeyedLists: conditions by type, downstream targets by
// name) is merged entry by entry; any other list, and any value of a type
// with unexported fields (a time), the reconcile changed is replaced
// whole. The result is written to out, a pointer to the status type;
// before, after and fresh are pointers to it. Typed throughout (rule
// typed-spec-path: no JSON round trip).
func Rebase(before, after, fresh, out any) error {
	b, a, f, o := reflect.ValueOf(before), reflect.ValueOf(after), reflect.ValueOf(fresh), reflect.ValueOf(out)
	if o.Kind() != reflect.Pointer || b.Type() != o.Type() || a.Type() != o.Type() || f.Type() != o.Type() {
		return fmt.Errorf("rebasing a status: want four pointers to one type, got %s, %s, %s, %s", b.Type(), a.Type(), f.Type(), o.Type())
	}
	o.Elem().Set(rebase(b.Elem(), a.Elem(), f.Elem(), ""))
	return nil
}

// KeyedLists are the status lists merged entry by entry, by field name
// (JSON), with the field that keys their entries (the CRDs declare them
// +listType=map with that key). A condition this reconcile changed is
// replaced whole (its status, reason and message go together); a
// downstream target is merged field by field (what another reconcile
// recorded of it, a digest, stays).
var KeyedLists = map[string]string{"conditions": "type", "downstreamTargets": "name"}

func rebase(b, a, f reflect.Value, name string) reflect.Value {
	if reflect.DeepEqual(b.Interface(), a.Interface()) {
		return f // not this reconcile's change
	}
	switch a.Kind() {
	case reflect.Struct:
		t := a.Type()
		for i := 0; i < t.NumField(); i++ {
			if !t.Field(i).IsExported() {
				return a // a time, a quantity: whole
			}
		}
		out := reflect.New(t).Elem()
		for i := 0; i < t.NumField(); i++ {
			out.Field(i).Set(rebase(b.Field(i), a.Field(i), f.Field(i), jsonName(t.Field(i))))
		}
		return out
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || f.IsNil() {
			return a // set, cleared, or gone from fresh: this reconcile's
		}
		p := reflect.New(a.Type().Elem())
		p.Elem().Set(rebase(b.Elem(), a.Elem(), f.Elem(), name))
		return p
	case reflect.Map:
		if f.IsNil() {
			return a
		}
		out := reflect.MakeMapWithSize(a.Type(), f.Len())
		iter := f.MapRange()
		for iter.Next() {
			out.SetMapIndex(iter.Key(), iter.Value())
		}
		zero := reflect.Zero(a.Type().Elem())
		iter = b.MapRange()
		for iter.Next() {
			if !a.MapIndex(iter.Key()).IsValid() {
				out.SetMapIndex(iter.Key(), reflect.Value{}) // removed by this reconcile
			}
		}
		iter = a.MapRange()
		for iter.Next() {
			k := iter.Key()
			bv, fv := b.MapIndex(k), f.MapIndex(k)
			if !bv.IsValid() {
				bv = zero
			}
			if !fv.IsValid() {
				fv = zero
			}
			out.SetMapIndex(k, rebase(bv, iter.Value(), fv, ""))
		}
		return out
	case reflect.Slice:
		if key := KeyedLists[name]; key != "" {
			if merged, ok := rebaseKeyed(b, a, f, key); ok {
				return merged
			}
		}
	}
	return a
}

// jsonName is a struct field's name in JSON.
func jsonName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
		return tag
	}
	return f.Name
}

// rebaseKeyed merges a keyed list: fresh's entries in fresh's order, each
// merged with this reconcile's change of it (a condition whole); those it
// removed left out; those it added appended in its order; downstream
// targets kept sorted by name. ok is false when the entries have no
// string field of that key (then the list is replaced whole).
func rebaseKeyed(b, a, f reflect.Value, key string) (reflect.Value, bool) {
	t := a.Type().Elem()
	field := -1
	if t.Kind() == reflect.Struct {
		for i := 0; i < t.NumField(); i++ {
			if jsonName(t.Field(i)) == key && t.Field(i).Type.Kind() == reflect.String {
				field = i
			}
		}
	}
	if field < 0 {
		return reflect.Value{}, false
	}
	index := func(l reflect.Value) (map[string]reflect.Value, []string) {
		m := make(map[string]reflect.Value, l.Len())
		order := make([]string, 0, l.Len())
		for i := 0; i < l.Len(); i++ {
			k := l.Index(i).Field(field).String()
			m[k] = l.Index(i)
			order = append(order, k)
		}
		return m, order
	}
	bm, _ := index(b)
	am, aorder := index(a)
	fm, forder := index(f)
	out := reflect.MakeSlice(a.Type(), 0, len(forder)+len(aorder))
	for _, k := range forder {
		bv, had := bm[k]
		av, has := am[k]
		switch {
		case had && !has: // removed by this reconcile
		case has && key == "type": // a condition: whole
			if had && reflect.DeepEqual(bv.Interface(), av.Interface()) {
				out = reflect.Append(out, fm[k])
			} else {
				out = reflect.Append(out, av)
			}
		case has:
			if !had {
				bv = reflect.Zero(t)
			}
			out = reflect.Append(out, rebase(bv, av, fm[k], ""))
		default:
			out = reflect.Append(out, fm[k])
		}
	}
	for _, k := range aorder {
		if _, inFresh := fm[k]; inFresh {
			continue
		}
		if bv, had := bm[k]; had && reflect.DeepEqual(bv.Interface(), am[k].Interface()) {
			continue // gone from fresh, and this reconcile did not touch it
		}
		out = reflect.Append(out, am[k])
	}
	if key == "name" {
		sort.SliceStable(out.Interface(), func(i, j int) bool { return out.Index(i).Field(field).String() < out.Index(j).Field(field).String() })
	}
	return out, true
}
