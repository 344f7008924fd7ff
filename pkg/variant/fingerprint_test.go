package variant

import (
	"slices"
	"testing"
)

// ChangedFiles names added, removed and modified files, by path, and not
// a file only reformatted (a comment, another indentation).
func TestChangedFiles(t *testing.T) {
	from := map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"c.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
	}
	to := map[string]string{
		"a.yaml": "# a comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a\ndata:\n    k: v\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b2\n",
		"d.txt":  "new\n",
	}
	got := ChangedFiles(FileDigests(from), FileDigests(to))
	want := []FileChange{{"b.yaml", FileModified}, {"c.yaml", FileRemoved}, {"d.txt", FileAdded}}
	if !slices.Equal(got, want) {
		t.Fatalf("ChangedFiles = %v, want %v", got, want)
	}
}
