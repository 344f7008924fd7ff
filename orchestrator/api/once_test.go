package api_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 20 #2: condition types are defined once, in
// orchestrator/api/v1alpha1; every other file names them by constant. (A
// kubebuilder printcolumn marker, a comment, is not code.)
func TestConditionTypesDefinedOnce(t *testing.T) {
	literal := regexp.MustCompile(`"(Ready|Stalled|Reconciling)"`)
	for _, root := range []string{"..", "../../pkg"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			if filepath.ToSlash(path) == "../api/v1alpha1/types.go" {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for i, line := range strings.Split(string(b), "\n") {
				if code, _, _ := strings.Cut(line, "//"); literal.MatchString(code) {
					t.Errorf("%s:%d: a condition type as a literal (use pvapi.Condition*): %s", path, i+1, strings.TrimSpace(line))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
