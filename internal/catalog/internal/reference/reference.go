// Package reference runs a reference build of a catalog function, one the
// Go module proxy serves that make catalog-functions builds into
// bin/catalog, for the tests that compare pvkit's build with it.
package reference

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Run runs bin/catalog/<name> on in and returns its exit code, stdout and
// stderr. Without the build the test is skipped (failed when $CI is set).
func Run(t testing.TB, name, in string) (int, string, string) {
	t.Helper()
	exe := filepath.Join(fntest.RepoRoot(), "bin", "catalog", name)
	if _, err := os.Stat(exe); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not built (make catalog-functions): %v", exe, err)
		}
		t.Skipf("%s is not built (make catalog-functions)", exe)
	}
	cmd := exec.Command(exe)
	cmd.Stdin = strings.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		code = ee.ExitCode()
	}
	return code, out.String(), stderr.String()
}
