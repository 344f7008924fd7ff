package fntest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// CodeMatches walks root's non-test Go files and returns "path:line: text"
// for each line whose code (what precedes a `//` comment) matches re; skip
// leaves files out. The checks that keep a rule in the code (a condition
// type defined once, no wall clock in pkg/) use it.
func CodeMatches(root string, re *regexp.Regexp, skip func(path string) bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || (skip != nil && skip(path)) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if code, _, _ := strings.Cut(line, "//"); re.MatchString(code) {
				out = append(out, fmt.Sprintf("%s:%d: %s", path, i+1, strings.TrimSpace(line)))
			}
		}
		return nil
	})
	return out, err
}
