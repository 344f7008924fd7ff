package api_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
			// pkg/health reads other controllers' conditions (Flux's Ready):
			// their types, not pvkit's.
			return filepath.ToSlash(path) == "../api/v1alpha1/types.go" || filepath.ToSlash(path) == "../../pkg/health/message.go"
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Errorf("%s: a condition type as a literal (use pvapi.Condition*)", f)
		}
	}
}

// Issue 20 #1 (rule: typed-spec-path): from Reconcile to the store write, a
// variant's or a set's
// spec stays typed: nothing in orchestrator/ encodes a spec to YAML and
// decodes it back (krm.Encode, krm.Decode), and the reconcilers do not
// round-trip objects through JSON either. YAML is met only as package
// content (pkg/variant, the stores) and at pvctl's input edge.
func TestNoSpecRoundTrip(t *testing.T) {
	// The two edges: pvctl reads the user's files (YAML in), and the
	// objects config-inject copies into a package are listed as YAML
	// (package content out).
	edge := map[string]bool{"../local/load.go": true, "../reconcilers/kit/list.go": true}
	for _, c := range []struct {
		root string
		re   *regexp.Regexp
	}{
		{"..", regexp.MustCompile(`krm\.(Encode|Decode)\(`)},
		{"../reconcilers", regexp.MustCompile(`json\.(Unmarshal|Marshal)\(|MarshalJSON\(`)},
	} {
		found, err := fntest.CodeMatches(c.root, c.re, func(path string) bool { return edge[filepath.ToSlash(path)] })
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Errorf("%s: a spec round trip (keep it typed)", f)
		}
	}
}

// Issue 20 #3: the stores' test doubles live in a package of their own, and
// no production code imports it (pvctl and the controller use the memory,
// git and Porch stores only).
func TestTestDoublesStayInTests(t *testing.T) {
	for _, double := range []string{"orchestrator/store/fakestore", "orchestrator/reconcilers/kit/kittest"} {
		for _, root := range []string{"..", "../../pkg", "../../functions", "../../internal"} {
			found, err := fntest.CodeMatches(root, regexp.MustCompile(`"github.com/pvkit/pvkit/`+double+`"`), func(path string) bool {
				return strings.Contains(filepath.ToSlash(path), double+"/")
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range found {
				t.Errorf("%s: production code imports the test doubles of %s", f, double)
			}
		}
	}
}

// gofmt rewrites ” in a doc comment as a typographic quote, and a
// kubebuilder marker is a doc comment: a CEL rule comparing with ” would
// reach the CRD broken. No generated CRD may hold one.
func TestCRDRulesSurviveGofmt(t *testing.T) {
	crds, err := filepath.Glob("../../config/crd/*.yaml")
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	for _, f := range crds {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.ContainsAny(line, "\u201c\u201d\u2018\u2019") {
				t.Errorf("%s:%d: a typographic quote (gofmt turned '' into one in a kubebuilder marker): %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// Issue 42 #5: every condition type and reason the controllers set is
// defined in orchestrator/api/v1alpha1 (reasons.go, types.go); elsewhere in
// orchestrator/ a Condition* or Reason* constant only names one of those.
func TestConditionsAndReasonsDefinedInTheAPI(t *testing.T) {
	literal := regexp.MustCompile(`(?m)^\s*(Condition|Reason)[A-Za-z]*\s*=\s*"`)
	found, err := fntest.CodeMatches("..", literal, func(path string) bool {
		return strings.HasPrefix(filepath.ToSlash(path), "../api/v1alpha1/")
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s: a condition type or reason defined outside orchestrator/api/v1alpha1 (define it there and name it)", f)
	}
}
