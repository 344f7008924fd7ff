package local

import (
	"strings"
	"testing"
)

// Issue 29 #5: a diff names each side by its revision, and a new file's
// header names both (git diff --no-index writes "b/f b/f"); content lines
// that look like headers stay as they are.
func TestUnifiedDiffLabels(t *testing.T) {
	a := map[string]string{"f.yaml": "x: 1\n-- keep: me\ny: 2\n", "gone.yaml": "g: 1\n"}
	b := map[string]string{"f.yaml": "x: 1\ny: 3\n", "new.yaml": "n: 1\n"}
	d, err := UnifiedDiff(t.TempDir(), "deploy.app.v1", "deploy.app.packagevariant-2", a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"diff --git deploy.app.v1/f.yaml deploy.app.packagevariant-2/f.yaml\n",
		"--- deploy.app.v1/f.yaml\n+++ deploy.app.packagevariant-2/f.yaml\n",
		"--- keep: me\n", // a removed line "-- keep: me", not a header
		"diff --git deploy.app.v1/new.yaml deploy.app.packagevariant-2/new.yaml\nnew file mode 100644\n",
		"--- /dev/null\n+++ deploy.app.packagevariant-2/new.yaml\n",
		"diff --git deploy.app.v1/gone.yaml deploy.app.packagevariant-2/gone.yaml\ndeleted file mode 100644\n",
		"--- deploy.app.v1/gone.yaml\n+++ /dev/null\n",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("no %q in:\n%s", want, d)
		}
	}
	if same, err := UnifiedDiff(t.TempDir(), "x", "y", a, a); err != nil || same != "" {
		t.Fatalf("the same files: %q, %v", same, err)
	}
}
