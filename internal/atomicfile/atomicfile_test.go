package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// A link planted under the path, or under the name a temporary file used
// to have, is never written through.
func TestWriteNeverFollowsALink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.yaml")
	for _, link := range []string{path, path + ".tmp", filepath.Join(dir, ".state.yaml.tmp")} {
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(path, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 {
		t.Fatalf("path is %v (%v), want a regular file of mode 0644", st.Mode(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new\n" {
		t.Fatalf("content %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 { // the file and the two links left alone
		t.Fatalf("left behind: %v", entries)
	}
}

func TestWriteFailsWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("x"), 0o644); err == nil {
		t.Fatal("a rename over a non-empty directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("the temporary file stayed: %v", entries)
	}
}
