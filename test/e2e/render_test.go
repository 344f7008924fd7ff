package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	"github.com/pvkit/pvkit/pkg/render"
)

// Issue 21 #1: pvctl renders a package as `kpt fn render` does. Each case
// of testdata/render is rendered by kpt (--allow-exec, the functions as
// executables) and by pkg/render with pvctl's runtime: the files must be
// byte for byte the same; a render kpt refuses, pkg/render refuses too and
// changes nothing.
func TestRenderMatchesKpt(t *testing.T) {
	needKpt(t)
	testfn := filepath.Join(binDir, "testfn")
	if _, err := os.Stat(testfn); err != nil {
		if err := fntest.GoBuild(repoRoot, testfn, "./test/e2e/testdata/testfn"); err != nil {
			t.Fatal(err)
		}
	}
	cases, err := filepath.Glob(filepath.Join(repoRoot, "test/e2e/testdata/render/*"))
	if err != nil || len(cases) < 5 {
		t.Fatalf("render cases: %v %v", cases, err)
	}
	for _, dir := range cases {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			files := fntest.ReadTree(t, dir)
			for f, content := range files {
				files[f] = strings.ReplaceAll(content, "{{bin}}", binDir)
			}
			work := filepath.Join(t.TempDir(), name)
			fntest.WriteTree(t, work, files)
			out, kptErr := exec.Command(kptPath, "fn", "render", "--allow-exec", "--truncate-output=false", work).CombinedOutput()
			byKpt := fntest.ReadTree(t, work)

			got, st, err := render.Render(context.Background(), files, render.Options{Runtime: &fnruntime.Runtime{AllowExec: true}, AllowExec: true})
			if kptErr != nil {
				if err == nil {
					t.Fatalf("kpt refused the render (%v):\n%s\npkg/render did not", kptErr, out)
				}
				if !cmp.Equal(byKpt, files) {
					t.Fatalf("kpt changed the package although it failed")
				}
				t.Logf("both refuse; kpt: %s\npkg/render: %v", strings.TrimSpace(string(out)), err)
				if st.ExitCode() != 1 || (len(st.Runs) > 0 && st.Runs[len(st.Runs)-1].ExitCode == 0) {
					t.Fatalf("status of the failed render: %+v", st)
				}
				return
			}
			if err != nil {
				t.Fatalf("pkg/render refused what kpt rendered: %v\nkpt:\n%s", err, out)
			}
			if diff := cmp.Diff(byKpt, got); diff != "" {
				t.Fatalf("pkg/render differs from kpt fn render (-kpt +pkg/render):\n%s", diff)
			}
			if cmp.Equal(got, files) && name != "empty-pipeline" {
				t.Fatalf("the render changed nothing: the case tests nothing")
			}
		})
	}
}
