package tasks

import (
	"maps"
	"sort"

	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/variant"
)

// Dropped is how an upgrade settles the files the new upstream dropped
// (rule upgrade-dropped-files), as `kpt pkg update` and every Porch strategy drop them,
// without Porch's kptdev/porch#1165 (a local edit to a dropped file lost).
//
// Base and Next are what the variant makes of the old and the new upstream
// (both sides taken alike); a file Base has and Next does not is dropped.
// Local is the package the upgrade starts from; Persons are its files that
// are not pvkit's build (provenance.PersonsFiles), Known whether it has a
// record to tell them by. A dropped file nobody changed is removed; one a
// person changed is kept as Local has it, and named. Without a record, a
// dropped file that differs by meaning from Base is taken for a person's
// (kept and named: never removed unsaid).
type Dropped struct {
	Base, Next, Local map[string]string
	Persons           map[string]string
	Known             bool
}

// Apply settles files (the upgrade's result) and returns them with the
// dropped files kept, sorted. files is not changed.
func (d Dropped) Apply(files map[string]string) (out map[string]string, kept []string) {
	out = maps.Clone(files)
	var base, local map[string]string // digests, computed only without a record
	for name := range d.Base {
		if _, still := d.Next[name]; still {
			continue
		}
		text, had := d.Local[name]
		if !had { // a person removed it already
			delete(out, name)
			continue
		}
		changed := d.Persons[name] != ""
		if !d.Known {
			if base == nil {
				base, local = variant.FileDigests(d.Base), variant.FileDigests(d.Local)
			}
			changed = base[name] != local[name]
		}
		if !changed {
			delete(out, name)
			continue
		}
		out[name] = text
		kept = append(kept, name)
	}
	sort.Strings(kept)
	return out, kept
}

// DroppedFileConflicts are the conflicts of an in-place upgrade for the
// files Dropped.Apply kept that are not YAML resources (Conflicts names
// each object of a kept resource file already): a whole file a person
// changed that the upstream dropped.
func DroppedFileConflicts(kept []string) []Conflict {
	var out []Conflict
	for _, name := range kept {
		if !krm.IsResourceFile(name) {
			out = append(out, Conflict{File: name, Object: "(not a resource)", Field: "(the whole file)", Old: "present", Local: "changed", Upstream: absent})
		}
	}
	return out
}
