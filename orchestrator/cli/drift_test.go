package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pushToBranch does what a person with git access does behind Porch's
// back: clone the deployment repository, change one file of a package on
// its branch, commit and push.
func (w *ws) pushToBranch(repo, file, old, new string) {
	w.t.Helper()
	w.commitToBranch(repo, "hotfix: "+new, func(dir string) {
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), old) {
			w.t.Fatalf("%s: %v, no %q in:\n%s", file, err, old, b)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			w.t.Fatal(err)
		}
	})
}

// commitToBranch clones the repository, lets change change its work tree,
// commits everything with message and pushes to main.
func (w *ws) commitToBranch(repo, message string, change func(dir string)) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), repo)
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=someone", "GIT_AUTHOR_EMAIL=someone@example.com", "GIT_COMMITTER_NAME=someone", "GIT_COMMITTER_EMAIL=someone@example.com")
	git := func(args ...string) {
		w.t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	if out, err := exec.Command("git", "clone", "-q", "--branch", "main", filepath.Join(w.repos, repo+".git"), dir).CombinedOutput(); err != nil {
		w.t.Fatalf("git clone: %v: %s", err, out)
	}
	change(dir)
	git("add", "-A")
	git("commit", "-q", "-m", message)
	git("push", "-q", "origin", "main")
}

// Issue 45's acceptance (rules content-drift, drift-policy): after run and
// approve, a commit pushed with git to the deployment repository's branch
// that changes one file: the next run reports the variant drifted naming
// the file (exit 5), pvctl diff shows the change; revert and adopt each
// make a draft that does what it says, previewed by plan (which writes
// nothing); approved and run, the branch is what the policy says and the
// drift is gone.
func TestContentDriftLocally(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.run(ExitOK)

	w.pushToBranch("core-euwest1", "app/deployment.yaml", "replicas: 1", "replicas: 5")
	out := w.run(ExitDrift)
	contains(t, out, "Drift (1): a downstream package changed behind its variant's back",
		"PackageVariant app-staging: ContentChanged: the package on the branch (core-euwest1.app.main) is not the variant's published core-euwest1.app.packagevariant-1 (revision 1): deployment.yaml modified;",
		"pvctl diff core-euwest1.app.main --against core-euwest1.app.packagevariant-1")
	st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging")
	contains(t, st, "PublishedDrift=True  ContentChanged: the package on the branch", "    drift: ContentChanged: ")
	diff := w.mustCmd(ExitNotReady, "diff", "core-euwest1.app.main", "--against", "core-euwest1.app.packagevariant-1")
	contains(t, diff, "-  replicas: 1", "+  replicas: 5")
	// Reported, nothing written, the same again.
	before := w.snapshot()
	w.run(ExitDrift)
	if d := diffSnapshots(before, w.snapshot()); d != "" {
		t.Fatalf("a run reporting the drift wrote:\n%s", d)
	}

	// revert: previewed, then made; approved, the branch is pvkit's again.
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "  name: app-staging\n", "  name: app-staging\n  annotations:\n    pvkit.dev/drift-policy: revert\n", 1))
	plan := w.mustCmd(ExitChanges, "plan", "-f", w.in)
	contains(t, plan, "would create draft core-euwest1.app.packagevariant-2 (edit of core-euwest1.app.packagevariant-1; the drift policy's revert of core-euwest1.app.main)")
	if d := diffSnapshots(before, w.snapshot()); d != "" {
		t.Fatalf("plan wrote:\n%s", d)
	}
	out = w.run(ExitDrift) // the draft waits for approval; the drift stays until it is published
	contains(t, out, "created draft core-euwest1.app.packagevariant-2 (edit of core-euwest1.app.packagevariant-1; the drift policy's revert of core-euwest1.app.main)")
	contains(t, w.files("core-euwest1.app.packagevariant-2")["deployment.yaml"], "replicas: 1")
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-2")
	out = w.run(ExitOK)
	if strings.Contains(out, "Drift (") {
		t.Fatalf("drift after the revert was published:\n%s", out)
	}
	contains(t, w.files("core-euwest1.app.main")["deployment.yaml"], "replicas: 1")

	// adopt: the person's change becomes the variant's base.
	w.pushToBranch("core-euwest1", "app/deployment.yaml", "replicas: 1", "replicas: 7")
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "drift-policy: revert", "drift-policy: adopt", 1))
	plan = w.mustCmd(ExitChanges, "plan", "-f", w.in)
	contains(t, plan, "would create draft core-euwest1.app.packagevariant-3 (edit of core-euwest1.app.packagevariant-2; the drift policy's adopt of core-euwest1.app.main)")
	w.run(ExitDrift)
	contains(t, w.files("core-euwest1.app.packagevariant-3")["deployment.yaml"], "replicas: 7")
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-3")
	out = w.run(ExitOK)
	if strings.Contains(out, "Drift (") {
		t.Fatalf("drift after the adoption was published:\n%s", out)
	}
	contains(t, w.files("core-euwest1.app.main")["deployment.yaml"], "replicas: 7")
}

// diffSnapshots names the files of two snapshots that differ, leaving out
// pvctl's state file.
func diffSnapshots(a, b map[string]string) string {
	var out []string
	for k, v := range b {
		if a[k] != v && !strings.Contains(k, "state") {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok && !strings.Contains(k, "state") {
			out = append(out, k)
		}
	}
	return strings.Join(out, "\n")
}
