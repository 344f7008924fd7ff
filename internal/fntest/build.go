package fntest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Functions are the suite's functions, in the order the chain runs them.
var Functions = []string{"package-context", "pipeline-prepend", "config-inject", "pvs-expand"}

// RepoRoot is the repository root, found from this source file, so tests
// work from any package directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// GoBuild builds pkg (a package path as `go build` takes it, resolved in
// dir) into out: static, with the local toolchain, and without VCS stamping
// (tests run in clones and temporary copies).
func GoBuild(dir, out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// BuildFunctions builds the named functions' binaries into dir, each named
// after its function.
//
// Under make test, which builds them once into bin/ first, PVKIT_FUNCTION_BIN
// names that directory and its binaries are linked instead of built again
// in every test package that needs them.
func BuildFunctions(dir string, names ...string) error {
	prebuilt := os.Getenv("PVKIT_FUNCTION_BIN")
	for _, fn := range names {
		if prebuilt != "" {
			src := filepath.Join(prebuilt, fn)
			if st, err := os.Stat(src); err == nil && st.Mode().IsRegular() {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if err := os.Symlink(src, filepath.Join(dir, fn)); err != nil {
					return err
				}
				continue
			}
		}
		if err := GoBuild(RepoRoot(), filepath.Join(dir, fn), "./functions/"+fn); err != nil {
			return err
		}
	}
	return nil
}
