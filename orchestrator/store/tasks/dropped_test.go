package tasks

import (
	"fmt"
	"testing"
)

// Issue 55 #2: a file the new upstream dropped goes unless a person
// changed it (by the record, or without one by meaning against the old
// upstream as the variant makes it); a kept one is as the local package
// has it, even where the merge dropped it; a file the person removed
// stays removed.
func TestDroppedFiles(t *testing.T) {
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  a: %q\n"
	base := map[string]string{"Kptfile": "k", "a.yaml": fmt.Sprintf(cm, "a", "1"), "b.yaml": fmt.Sprintf(cm, "b", "1"), "c.md": "c\n", "d.md": "d\n", "e.yaml": fmt.Sprintf(cm, "e", "1")}
	next := map[string]string{"Kptfile": "k", "e.yaml": fmt.Sprintf(cm, "e", "2")}
	local := map[string]string{"Kptfile": "k", "a.yaml": fmt.Sprintf(cm, "a", "1") + "# a comment\n", "b.yaml": fmt.Sprintf(cm, "b", "2"), "c.md": "c, changed\n", "e.yaml": fmt.Sprintf(cm, "e", "1")}
	merged := map[string]string{"Kptfile": "k", "a.yaml": local["a.yaml"], "c.md": local["c.md"], "e.yaml": next["e.yaml"], "d.md": "d\n"}
	for _, c := range []struct {
		name    string
		d       Dropped
		files   []string
		kept    []string
		changed string
	}{
		{"by the record", Dropped{Base: base, Next: next, Local: local, Persons: map[string]string{"b.yaml": "edited by a person"}, Known: true},
			[]string{"Kptfile", "b.yaml", "e.yaml"}, []string{"b.yaml"}, "b.yaml"},
		{"without a record", Dropped{Base: base, Next: next, Local: local},
			[]string{"Kptfile", "b.yaml", "c.md", "e.yaml"}, []string{"b.yaml", "c.md"}, "b.yaml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, kept := c.d.Apply(merged)
			var names []string
			for _, n := range []string{"Kptfile", "a.yaml", "b.yaml", "c.md", "d.md", "e.yaml"} {
				if _, ok := out[n]; ok {
					names = append(names, n)
				}
			}
			if fmt.Sprint(names) != fmt.Sprint(c.files) || fmt.Sprint(kept) != fmt.Sprint(c.kept) {
				t.Fatalf("files %v kept %v; want %v kept %v", names, kept, c.files, c.kept)
			}
			if out[c.changed] != local[c.changed] {
				t.Fatalf("%s is not the local one (the merge dropped it): %q", c.changed, out[c.changed])
			}
			if _, ok := merged["b.yaml"]; ok {
				t.Fatal("Apply changed its argument")
			}
		})
	}
	if got := DroppedFileConflicts([]string{"b.yaml", "c.md"}); len(got) != 1 || got[0].String() != "c.md: (not a resource) (the whole file): the upstream changed present to <absent>, the draft has changed" {
		t.Fatalf("conflicts: %v", got)
	}
}
