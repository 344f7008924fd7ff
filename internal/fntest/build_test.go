package fntest

import (
	"os"
	"path/filepath"
	"testing"
)

// Issue 20 #8: under make test the functions are built once (into bin/)
// and linked into each test package's directory, not built again.
func TestBuildFunctionsLinksPrebuilt(t *testing.T) {
	pre := t.TempDir()
	if err := os.WriteFile(filepath.Join(pre, "package-context"), []byte("prebuilt"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PVKIT_FUNCTION_BIN", pre)
	dir := filepath.Join(t.TempDir(), "bin")
	if err := BuildFunctions(dir, "package-context"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "package-context"))
	if err != nil || string(b) != "prebuilt" {
		t.Fatalf("the prebuilt binary was not used: %q, %v", b, err)
	}
}
