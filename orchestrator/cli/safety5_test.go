package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Regression cases of the sixth attack pass and Nephio's replayed
// workflows (issue 55, docs/security.md "round five"): each failed on the
// code before it.

// Issue 55 #1 (rule published-drift): Nephio's flow, a person copies the
// variant's published revision, edits it, proposes and approves it; then a
// new upstream arrives and the variant asks for approval by policy. The
// variant's upgrade starts from its own older revision, so publishing it
// would put the person's edit back: approval by policy waits for a person
// and names the revision it would replace; main keeps the edit, and the
// run says why (drift, exit 5). A person who approves the upgrade by hand
// decides.
func TestPolicyApprovalDoesNotPublishOverAPersonsRevision(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.run(ExitOK)

	w.mustCmd(ExitOK, "copy", "core-euwest1.app.packagevariant-1", "--workspace", "scale-up")
	dir := filepath.Join(t.TempDir(), "scale-up")
	w.mustCmd(ExitOK, "pull", "core-euwest1.app.scale-up", dir)
	deploy := readFile(t, filepath.Join(dir, "deployment.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(strings.Replace(deploy, "replicas: 1", "replicas: 25", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", "core-euwest1.app.scale-up", dir)
	w.mustCmd(ExitOK, "propose", "core-euwest1.app.scale-up")
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.scale-up")
	w.run(ExitDrift)

	w.write("app-staging.yaml", readFile(t, filepath.Join(w.in, "app-staging.yaml"))+"  annotations:\n    approval.nephio.org/policy: always\n")
	w.publishV2()
	out := w.run(ExitDrift)
	contains(t, out, "NewerRevision: core-euwest1.app.scale-up (revision 2 of app in core-euwest1) is newer")
	if strings.Contains(out, "approved ") {
		t.Fatalf("approval by policy published over the person's revision:\n%s", out)
	}
	if got := w.files("core-euwest1.app.main")["deployment.yaml"]; !strings.Contains(got, "replicas: 25") {
		t.Fatalf("main lost the person's edit:\n%s", got)
	}
	st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging")
	contains(t, st, "ApprovalWaiting=True",
		"core-euwest1.app.packagevariant-2 is not approved: a person decides whose content wins: publishing it would replace core-euwest1.app.scale-up (revision 2), newer than the variant's core-euwest1.app.packagevariant-1 and not made by it")
	// The same again: still waiting, nothing written.
	before := w.snapshot()
	w.run(ExitDrift)
	if d := diffSnapshots(before, w.snapshot()); d != "" {
		t.Fatalf("a waiting run wrote:\n%s", d)
	}

	// A person decides: approved by hand, the upgrade is published.
	contains(t, w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-2"), "approved core-euwest1.app.packagevariant-2: package app revision 3 in core-euwest1")
	w.run(ExitOK)
}
