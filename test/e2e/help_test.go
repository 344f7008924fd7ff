package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fnmain"
)

// wantHelp is a function's --help as its README says it.
func wantHelp(t *testing.T, fn string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "functions", fn, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := fnmain.Help(fn, string(readme))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// Every function binary answers --help with its README's usage (the
// mdtogo sections: what it does, its config kinds and every field, the
// examples), reading no stdin, exit 0: the text it carries is the README's.
func TestFunctionsAnswerHelp(t *testing.T) {
	for _, fn := range functions {
		t.Run(fn, func(t *testing.T) {
			want := wantHelp(t, fn)
			for _, flag := range []string{"--help", "-h"} {
				cmd := exec.Command(filepath.Join(binDir, fn), flag)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb // no stdin: it must not be read
				if err := cmd.Run(); err != nil || out.String() != want || errb.Len() != 0 {
					t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", fn, flag, err, out.String(), errb.String(), want)
				}
			}
			for _, section := range []string{"FunctionConfig", "Examples:", "kpt fn eval"} {
				if !strings.Contains(want, section) {
					t.Errorf("%s's help has no %q", fn, section)
				}
			}
		})
	}
}

// kpt fn doc runs each image with --help and prints what it says: the
// README's usage (needs Docker and fresh images: make test).
func TestKptFnDocOnImages(t *testing.T) {
	needKpt(t)
	imagesEnabled(t)
	for _, fn := range functions {
		t.Run(fn, func(t *testing.T) {
			out, err := exec.Command("kpt", "fn", "doc", "--image", "pvkit/"+fn+":dev").CombinedOutput()
			if err != nil {
				t.Fatalf("kpt fn doc --image pvkit/%s:dev: %v\n%s", fn, err, out)
			}
			if want := wantHelp(t, fn); !strings.Contains(string(out), want) {
				t.Fatalf("kpt fn doc printed:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}
