package pvsexpand

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 20 #6: pkg/ reads no wall clock and sets no deadline: the callers
// (the controller, the binaries) set them, so what a function computes does
// not depend on how fast the machine is, only on its input and the
// caller's context.
func TestNoWallClockInPkg(t *testing.T) {
	clock := regexp.MustCompile(`time\.(Now|Since|Until|After|Tick|NewTimer|NewTicker)\(|context\.With(Timeout|Deadline)\(`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if code, _, _ := strings.Cut(line, "//"); clock.MatchString(code) {
				t.Errorf("%s:%d: a wall clock or deadline in pkg/: %s", path, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
