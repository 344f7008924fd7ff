package porch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 32 #4 on a real Porch: pvctl plan --kubeconfig -f previews what the
// controller would do. On a set the controller converged, the same file
// plans no change (exit 0); the set widened to a third repository plans its
// child and its clone (exit 3) and Porch gets no revision from the plan.
func TestPlanAgainstPorch(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "plan")
	e.upstream(blueprint(t))
	for _, r := range []string{"east", "west"} {
		e.repository(r, e.bareRepo(r), true, map[string]string{"fleet": "yes"})
	}
	e.repository("north", e.bareRepo("north"), true, map[string]string{"fleet": "later"})
	set := setOver("", `fleet: "yes"`, "")
	e.apply(set)
	e.eventually(converge, "the set's children Ready with a draft each", func() (bool, string) {
		for _, r := range []string{"east", "west"} {
			if _, ok, msg := e.onlyOwned(r, "app"); !ok {
				return false, r + ": " + msg
			}
		}
		return e.allReady(2)
	})
	plan := func(text string) (int, string) {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "set.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(filepath.Join(repoRoot, "bin/pvctl"), "plan", "-o", "wide", "-f", dir, "--kubeconfig", adminKC, "-n", e.ns,
			"--function-config", filepath.Join(repoRoot, "bin/catalog/config.yaml"))
		out, err := cmd.CombinedOutput()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	if code, out := plan(set); code != 0 || !strings.Contains(out, "Plan: no changes (dry run: nothing was written).") {
		t.Errorf("the converged set planned again: exit %d\n%s", code, out)
	}
	widened := strings.Replace(set, "      matchLabels: {fleet: \"yes\"}\n", "      matchExpressions:\n      - {key: fleet, operator: In, values: [\"yes\", later]}\n", 1)
	if widened == set {
		t.Fatalf("setOver's selector changed shape:\n%s", set)
	}
	code, out := plan(widened)
	if code != 3 || !strings.Contains(out, "would create PackageVariant app-north-app") || !strings.Contains(out, "would create draft north.app.packagevariant-1 (clone of blueprints.app.v1)") {
		t.Errorf("the set widened to north: exit %d\n%s", code, out)
	}
	if revs := e.revisions("north", "app"); len(revs) != 0 {
		t.Errorf("the plan made %d revisions in Porch", len(revs))
	}
}
