package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestGoldenCasesThroughKpt runs every package golden case of every function
// through `kpt fn eval --exec` and requires what the in-process run gave: the
// same package for a success, and for a failure a non-zero exit, the same
// error lines on stderr and an untouched package.
func TestGoldenCasesThroughKpt(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs every golden case through kpt (7 s)")
	}
	needKpt(t)
	for _, fn := range functions {
		dirs, _ := filepath.Glob(filepath.Join(repoRoot, "functions", fn, "testdata", "*", "input"))
		if len(dirs) == 0 {
			t.Fatalf("no golden cases for %s", fn)
		}
		for _, input := range dirs {
			caseDir := filepath.Dir(input)
			t.Run(fn+"/"+filepath.Base(caseDir), func(t *testing.T) { goldenThroughKpt(t, fn, caseDir) })
		}
	}
}

func goldenThroughKpt(t *testing.T, fn, caseDir string) {
	pkg := filepath.Join(t.TempDir(), "pkg")
	before := fntest.ReadTree(t, filepath.Join(caseDir, "input"))
	fntest.WriteTree(t, pkg, before)
	args := []string{"fn", "eval", "--truncate-output=false", "--exec", filepath.Join(binDir, fn)}
	if _, err := os.Stat(filepath.Join(caseDir, "fnconfig.yaml")); err == nil {
		args = append(args, "--fn-config", filepath.Join(caseDir, "fnconfig.yaml"))
	}
	args = append(args, pkg)
	var out bytes.Buffer
	cmd := exec.Command(kptPath, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()

	var want fntest.Outcome
	b, rerr := os.ReadFile(filepath.Join(caseDir, "expected-run.yaml"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if want.ExitCode != 0 {
		if err == nil {
			t.Fatalf("kpt succeeded; the in-process run failed with:\n%s", want.Stderr)
		}
		if !strings.Contains(out.String(), "[RUNNING]") {
			// kpt refused the input before running the function (for
			// example a functionConfig without metadata.name); the
			// in-process run covers the function's own message.
			t.Logf("kpt rejected the input itself:\n%s", out.String())
		} else {
			for _, line := range strings.Split(strings.TrimSpace(want.Stderr), "\n") {
				if !strings.Contains(out.String(), quoteForKpt(line)) {
					t.Errorf("kpt output lacks the error line %q:\n%s", line, out.String())
				}
			}
		}
		if diff := cmp.Diff(before, fntest.ReadTree(t, pkg)); diff != "" {
			t.Errorf("kpt changed the package of a failed run (-before +after):\n%s", diff)
		}
		return
	}
	if err != nil {
		t.Fatalf("kpt failed: %v\n%s", err, out.String())
	}
	wantFiles := fntest.ReadTree(t, filepath.Join(caseDir, "expected"))
	got := fntest.ReadTree(t, pkg)
	for name, content := range got {
		// kpt re-serialises every file it read; a file the function left
		// as it was need only hold the same YAML.
		if content != wantFiles[name] && wantFiles[name] == before[name] && krm.SemanticEqualFiles(content, wantFiles[name]) {
			got[name] = wantFiles[name]
		}
	}
	if diff := cmp.Diff(wantFiles, got); diff != "" {
		t.Errorf("kpt's result differs from the in-process golden output (-in-process +kpt):\n%s", diff)
	}
}

// quoteForKpt renders a stderr line the way kpt prints it: quoted, with
// inner quotes escaped.
func quoteForKpt(line string) string {
	return strings.ReplaceAll(line, `"`, `\"`)
}
