package state

import (
	"strings"
	"testing"
)

// FuzzStateFile: any bytes as pvctl's state file: a clear error or a state,
// never a panic.
func FuzzStateFile(f *testing.F) {
	f.Add([]byte("packageVariants: 3\n"))
	f.Add([]byte("packageVariants:\n- metadata: {name: a}\n  spec: {upstream: {repo: r, package: p}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Parse("state.yaml", b); err != nil && !strings.HasPrefix(err.Error(), "state.yaml: ") {
			t.Fatalf("the error does not name the file: %v", err)
		}
	})
}
