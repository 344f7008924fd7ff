package fntest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Functions are the suite's functions, in the order the chain runs them.
var Functions = []string{"package-context", "pipeline-prepend", "config-inject", "pvs-expand"}

// RepoRoot is the repository root, found from this source file, so tests
// work from any package directory; built with -trimpath (make sets it for
// every command, so that vet, build and test share one build cache), the
// source file's path is module-relative, and the root is the directory
// above the working directory that holds pvkit's go.mod.
func RepoRoot() string {
	if _, file, _, _ := runtime.Caller(0); filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..")
	}
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && strings.HasPrefix(string(b), "module github.com/pvkit/pvkit\n") {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
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

// CatalogEnv names the function runner config of the kpt catalog
// functions pvctl renders with (orchestrator/cli.FunctionConfigEnv).
const CatalogEnv = "PVCTL_FUNCTION_CONFIG"

// EnsureCatalog makes the kpt catalog functions available to pvctl run in
// tests: when CatalogEnv is unset (go test without make), it builds them
// into bin/catalog (hack/catalog/build.sh skips those already built) and
// sets it.
func EnsureCatalog() error {
	if os.Getenv(CatalogEnv) != "" {
		return nil
	}
	out := filepath.Join(RepoRoot(), "bin", "catalog")
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "catalog", "build.sh"), out, "all")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the catalog functions: %v\n%s", err, b)
	}
	return os.Setenv(CatalogEnv, filepath.Join(out, "config.yaml"))
}

// MainWithCatalog is the TestMain of a package whose tests render with
// the catalog functions: EnsureCatalog, then the tests; it exits.
func MainWithCatalog(m interface{ Run() int }) {
	if err := EnsureCatalog(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
