package local

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// plan's scratch copy links a repository's objects (git never rewrites
// one) and copies everything else (refs, packed-refs, config, the state):
// a write to the copy's refs leaves the real repository as it was.
func TestCopyTreeLinksObjectsOnly(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "repos")
	files := map[string]string{
		"a.git/objects/ab/cdef":      "object",
		"a.git/objects/pack/p.pack":  "pack",
		"a.git/objects/info/packs":   "P p.pack\n",
		"a.git/refs/heads/main":      "0123\n",
		"a.git/packed-refs":          "# pack-refs\n",
		"objects.git/config":         "[core]\n",
		"pvctl-state.yaml":           "sets: []\n",
		"a.git/refs/tags/objects/v1": "4567\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{"a.git/objects/ab/cdef": true, "a.git/objects/pack/p.pack": true}
	for p, c := range files {
		b, err := os.ReadFile(filepath.Join(dst, p))
		if err != nil || string(b) != c {
			t.Fatalf("%s: %q, %v", p, b, err)
		}
		a, _ := os.Stat(filepath.Join(src, p))
		z, _ := os.Stat(filepath.Join(dst, p))
		same := a.Sys().(*syscall.Stat_t).Ino == z.Sys().(*syscall.Stat_t).Ino
		if same != linked[p] {
			t.Errorf("%s: linked %v, want %v", p, same, linked[p])
		}
	}
	if err := os.WriteFile(filepath.Join(dst, "a.git/refs/heads/main"), []byte("89ab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "a.git/refs/heads/main")); string(b) != "0123\n" {
		t.Fatalf("a write to the copy's ref changed the real one: %q", b)
	}
}
