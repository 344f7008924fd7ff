package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// FuzzRunInput: any bytes as a pvctl run input file. Reading it must never
// panic: every problem is a message naming the file. Seeds: the examples,
// the alias bomb, a mistyped ConfigMap, names that would be paths.
func FuzzRunInput(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fntest.RepoRoot(), "examples", "local", "*.yaml"))
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  x: 1\n"))
	f.Add([]byte("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ../../x\n"))
	f.Add([]byte("a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &input{files: map[string]string{}}
		for _, msg := range in.readBytes("in.yaml", b, "default") {
			if !strings.HasPrefix(msg, "in.yaml: ") {
				t.Fatalf("a message does not name the file: %q", msg)
			}
		}
	})
}
