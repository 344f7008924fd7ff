package api_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Issue 20 #2: condition types are defined once, in
// orchestrator/api/v1alpha1; every other file names them by constant. (A
// kubebuilder printcolumn marker, a comment, is not code.)
func TestConditionTypesDefinedOnce(t *testing.T) {
	literal := regexp.MustCompile(`"(Ready|Stalled|Reconciling)"`)
	for _, root := range []string{"..", "../../pkg"} {
		found, err := fntest.CodeMatches(root, literal, func(path string) bool {
			return filepath.ToSlash(path) == "../api/v1alpha1/types.go"
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Errorf("%s: a condition type as a literal (use pvapi.Condition*)", f)
		}
	}
}
