package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Issue 46 #3: Nephio's scaling flow (free5gc's 008 e2e, exercise 1) as
// porchctl chains it: copy a published variant revision (an edit draft, in
// the same repository and package), pull, edit, push, propose, approve.
// The variant that owns the package treats the person's published edit as
// Porch's controller does: not its own (adoptNone), so a run writes
// nothing and keeps its downstream; with adoptExisting it adopts it.
func TestCopyThenTheLifecycleAsNephioChainsIt(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1"), "approved core-euwest1.app.packagevariant-1: package app revision 1 in core-euwest1")
	w.run(ExitOK)

	contains(t, w.mustCmd(ExitOK, "copy", "core-euwest1.app.packagevariant-1", "--workspace", "scale-up"), "core-euwest1.app.scale-up created\n")
	if got := w.files("core-euwest1.app.scale-up"); !cmp.Equal(got, w.files("core-euwest1.app.packagevariant-1")) {
		t.Fatalf("the copy's files differ from its source:\n%s", cmp.Diff(w.files("core-euwest1.app.packagevariant-1"), got))
	}
	dir := filepath.Join(t.TempDir(), "scale-up")
	w.mustCmd(ExitOK, "pull", "core-euwest1.app.scale-up", dir)
	deploy := readFile(t, filepath.Join(dir, "deployment.yaml"))
	if !strings.Contains(deploy, "replicas: 1") {
		t.Fatalf("examples/app changed: deployment.yaml:\n%s", deploy)
	}
	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(strings.Replace(deploy, "replicas: 1", "replicas: 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", "core-euwest1.app.scale-up", dir)
	contains(t, w.mustCmd(ExitOK, "propose", "core-euwest1.app.scale-up"), "proposed core-euwest1.app.scale-up")
	contains(t, w.mustCmd(ExitOK, "approve", "core-euwest1.app.scale-up"), "approved core-euwest1.app.scale-up: package app revision 2 in core-euwest1")

	// Not the variant's: nothing written, its downstream still its own;
	// the run says it drifted (exit 5).
	before := w.snapshot()
	out := w.run(ExitDrift)
	contains(t, out, "Drift (1): ", "PackageVariant app-staging: NewerRevision: core-euwest1.app.scale-up (revision 2 of app in core-euwest1) is newer")
	contains(t, out, "app-staging           True   NoErrors    core-euwest1.app.packagevariant-1")
	if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
		t.Fatalf("a run after a person's published edit wrote:\n%s", d)
	}
	contains(t, w.files("core-euwest1.app.scale-up")["deployment.yaml"], "replicas: 3")
	// Issue 45 #1 (rule published-drift): but it is reported, on the
	// variant's target, as a condition, and in pvctl status.
	st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging")
	contains(t, st, "PublishedDrift=True  NewerRevision: core-euwest1.app.scale-up (revision 2 of app in core-euwest1) is newer than the variant's core-euwest1.app.packagevariant-1 (revision 1) and was not made by it",
		"    drift: NewerRevision: core-euwest1.app.scale-up (revision 2")

	// adoptExisting: the variant adopts it, as Porch's does, and keeps the
	// person's edit (its mutations do not touch the replicas).
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "spec:\n", "spec:\n  adoptionPolicy: adoptExisting\n", 1))
	out = w.run(ExitOK)
	contains(t, out, "updated core-euwest1.app.scale-up (Published)", "app-staging           True   NoErrors    core-euwest1.app.scale-up")
	contains(t, w.files("core-euwest1.app.scale-up")["deployment.yaml"], "replicas: 3")
	if st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging"); strings.Contains(st, "PublishedDrift=") || strings.Contains(st, "    drift:") {
		t.Fatalf("the adopted revision still reads as drift:\n%s", st)
	}

	// What Porch refuses, refused with Porch's words.
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"copy", "core-euwest1.app.scale-up"}, ExitUsage, "--workspace is required to specify workspace name"},
		{[]string{"copy", "edge-useast1.app.packagevariant-1", "--workspace", "x"}, ExitNotReady, "package revision edge-useast1.app.packagevariant-1 is Draft: source revision must be published"},
		{[]string{"copy", "core-euwest1.app.scale-up", "--workspace", "scale-up"}, ExitNotReady, "package revision core-euwest1.app.scale-up already exists: choose another --workspace"},
		{[]string{"copy", "core-euwest1.app.scale-up", "--workspace", "Not_A_Label"}, ExitUsage, "--workspace "},
		{[]string{"copy", "nowhere.app.v1", "--workspace", "x"}, ExitNotReady, "nowhere.app.v1"},
		{[]string{"clone", "blueprints.app.v1", "app", "--repository", "core-euwest1"}, ExitNotReady, "`clone` cannot create a new revision for package \"app\" that already exists in repo \"core-euwest1\"; make subsequent revisions using `copy`"},
		{[]string{"clone", "blueprints.app.v1", "app"}, ExitUsage, "--repository is required to specify downstream repository"},
	} {
		if code, _, errs := w.cmd(c.args[0], c.args[1:]...); code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("pvctl %v: exit %d, want %d and %q:\n%s", c.args, code, c.code, c.want, errs)
		}
	}
	// clone: a new package in another repository, from a published revision.
	contains(t, w.mustCmd(ExitOK, "clone", "blueprints.app.v1", "app-by-hand", "--repository", "edge-useast1"), "edge-useast1.app-by-hand.v1 created\n")
	contains(t, w.files("edge-useast1.app-by-hand.v1")["Kptfile"], "name: app-by-hand")
}
