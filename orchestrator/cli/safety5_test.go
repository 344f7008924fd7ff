package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Regression cases of the sixth attack pass and Nephio's replayed
// workflows (issue 55, docs/security.md "round five"): each failed on the
// code before it.

// publishedStaging is the examples' workspace run, app-staging's draft
// approved and run again: its revision 1 is published.
func publishedStaging(t *testing.T) *ws {
	t.Helper()
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.run(ExitOK)
	return w
}

// Issue 55 #1 (rule published-drift): Nephio's flow, a person copies the
// variant's published revision, edits it, proposes and approves it; then a
// new upstream arrives and the variant asks for approval by policy. The
// variant's upgrade starts from its own older revision, so publishing it
// would put the person's edit back: approval by policy waits for a person
// and names the revision it would replace; main keeps the edit, and the
// run says why (drift, exit 5). A person who approves the upgrade by hand
// decides.
func TestPolicyApprovalDoesNotPublishOverAPersonsRevision(t *testing.T) {
	w := publishedStaging(t)

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

// publishFiles publishes examples/app changed by edit as the next
// revision of blueprints/app.
func (w *ws) publishFiles(edit func(files map[string]string)) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "app")
	files := fntest.ReadTree(w.t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	edit(files)
	fntest.WriteTree(w.t, dir, files)
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", dir)
}

// Issue 55 #2: a file the new upstream dropped is dropped by the upgrade of
// a published package, as kpt pkg update and Porch's strategies drop it;
// a file a person edited is kept, and the upgrade names it (never Porch's
// kptdev/porch#1165, a local edit to a deleted file dropped).
func TestUpgradeDropsWhatTheUpstreamDropped(t *testing.T) {
	w := newWS(t)
	const service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"
	const notes = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  owner: nobody\n"
	w.publishFiles(func(f map[string]string) {
		f["service.yaml"], f["notes.yaml"], f["README.md"], f["docs/usage.md"] = service, notes, "# app\n", "how to\n"
	})
	w.run(ExitOK)
	// A person edits notes.yaml and docs/usage.md in the staging draft,
	// then approves it.
	dir := filepath.Join(t.TempDir(), "draft")
	w.mustCmd(ExitOK, "pull", "core-euwest1.app.packagevariant-1", dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte(strings.Replace(notes, "owner: nobody", "owner: web-team", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "docs", "usage.md"), []byte("how to, with our own notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", "core-euwest1.app.packagevariant-1", dir)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.run(ExitOK)

	// The next upstream drops all four.
	w.publishFiles(func(map[string]string) {})
	out := w.run(ExitOK)
	contains(t, out, "created draft core-euwest1.app.packagevariant-2 (upgrade of core-euwest1.app.packagevariant-1 to blueprints.app.v3)")
	got := w.files("core-euwest1.app.packagevariant-2")
	for _, gone := range []string{"service.yaml", "README.md"} {
		if _, ok := got[gone]; ok {
			t.Errorf("the upgrade kept %s, which the upstream dropped and nobody edited", gone)
		}
	}
	if !strings.Contains(got["notes.yaml"], "owner: web-team") || got["docs/usage.md"] != "how to, with our own notes\n" {
		t.Fatalf("the upgrade lost the person's edits of files the upstream dropped:\n%v", got)
	}
	st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging")
	contains(t, st, "    kept: kept docs/usage.md, notes.yaml: the upstream blueprints.app.v3 dropped them, a person changed them (in core-euwest1.app.packagevariant-1); delete them from core-euwest1.app.packagevariant-2 if they should go")
	// The edge variants (nobody edited them) upgraded in place drop all four.
	for _, name := range []string{"edge-useast1.app.packagevariant-1", "edge-uswest1.app.packagevariant-1"} {
		files := w.files(name)
		for _, gone := range []string{"service.yaml", "README.md", "notes.yaml", "docs/usage.md"} {
			if _, ok := files[gone]; ok {
				t.Errorf("%s kept %s, which the upstream dropped", name, gone)
			}
		}
	}
}

// Issue 55 #3: with drift-policy adopt, require-provenance and policy
// always, a ClusterRoleBinding pushed with plain git was adopted, published
// by policy in the same run, under a record signed with pvkit's key. Now
// the adoption's record marks the adopted file (from where, at which
// commit; not pvkit's build), approval by policy leaves it to a person
// naming the file, and verify says what it does not vouch for.
func TestAdoptionIsNotSignedAsABuild(t *testing.T) {
	key, allowed := newSSHKey(t, "pvkit@example.com")
	w := newWS(t)
	w.mustCmd(ExitOK, "run", "-f", w.in, "--provenance-key", key)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.mustCmd(ExitOK, "run", "-f", w.in, "--provenance-key", key)

	const crb = "\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: everyone-admin\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n- kind: Group\n  name: system:authenticated\n  apiGroup: rbac.authorization.k8s.io\n"
	w.pushToBranch("core-euwest1", "app/deployment.yaml", "image: nginx:1.27", "image: nginx:1.27"+crb)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "  name: app-staging\n",
		"  name: app-staging\n  annotations:\n    pvkit.dev/drift-policy: adopt\n    pvkit.dev/require-provenance: \"true\"\n", 1)+
		"  annotations:\n    approval.nephio.org/policy: always\n")
	code, out, errs := w.cmd("run", "-f", w.in, "--provenance-key", key)
	if code != ExitDrift || strings.Contains(out, "approved ") {
		t.Fatalf("the adoption: exit %d, want %d and no approval\n%s%s", code, ExitDrift, out, errs)
	}
	contains(t, out, "created draft core-euwest1.app.packagevariant-2 (edit of core-euwest1.app.packagevariant-1; the drift policy's adopt of core-euwest1.app.main)")
	draft := w.files("core-euwest1.app.packagevariant-2")
	contains(t, draft["deployment.yaml"], "everyone-admin")
	contains(t, draft["pvkit-provenance.yaml"], `"pvkit.dev/origin": "adopted from core-euwest1.app.main at commit `, "(pvkit.dev/drift-policy: adopt); not built by pvkit, approved by a person when provenance is required")
	st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging")
	contains(t, st, "core-euwest1.app.packagevariant-2 is not approved: pvkit.dev/require-provenance: the record says pvkit did not build deployment.yaml (adopted from core-euwest1.app.main at commit ")
	if get := w.mustCmd(ExitOK, "get", "--repo", "core-euwest1"); strings.Contains(get, "packagevariant-2  ") && strings.Contains(get, "Published") && !strings.Contains(get, "packagevariant-1") {
		t.Fatalf("published:\n%s", get)
	}
	out = w.mustCmd(ExitOK, "verify", "core-euwest1.app.packagevariant-2", "--allowed-signers", allowed)
	contains(t, out, "ok   core-euwest1.app.packagevariant-2: ", "; not built by pvkit: deployment.yaml (adopted from core-euwest1.app.main at commit ")

	// A person approves it: their decision.
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-2")
	w.mustCmd(ExitOK, "run", "-f", w.in, "--provenance-key", key)
}

// Issue 55 #4: nothing hides from drift and verify. A commit that adds an
// object and breaks the Kptfile made the branch unreadable, and run said
// nothing (exit 0), verify skipped it (exit 0); a symbolic link committed
// into a published package was seen by neither. Now the unreadable branch
// is a drift (BranchUnreadable, exit 5) and a verify failure, and the link
// is a file added, as Porch serves it.
func TestNothingHidesFromDriftAndVerify(t *testing.T) {
	t.Run("unreadable branch", func(t *testing.T) {
		w := publishedStaging(t)
		w.commitToBranch("core-euwest1", "an object, and a broken Kptfile", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "app", "extra.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			kf := readFile(t, filepath.Join(dir, "app", "Kptfile"))
			if err := os.WriteFile(filepath.Join(dir, "app", "Kptfile"), []byte(kf+"pipeline: [unclosed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		})
		code, out, _ := w.cmd("run", "-o", "wide", "-f", w.in)
		if code != ExitDrift {
			t.Fatalf("run: exit %d, want %d (drift)\n%s", code, ExitDrift, out)
		}
		contains(t, out, "PackageVariant app-staging: BranchUnreadable: the package on the branch (core-euwest1.app.main) cannot be read: ")
		code, out, _ = w.cmd("verify")
		if code != ExitNotReady || !strings.Contains(out, "FAIL core-euwest1.app.main: cannot be read: ") {
			t.Fatalf("verify: exit %d, want %d naming the branch\n%s", code, ExitNotReady, out)
		}
		code, out, _ = w.cmd("verify", "core-euwest1.app.main")
		if code != ExitNotReady || !strings.Contains(out, "FAIL core-euwest1.app.main: cannot be read: ") {
			t.Fatalf("verify NAME: exit %d\n%s", code, out)
		}
	})
	t.Run("symbolic link", func(t *testing.T) {
		w := publishedStaging(t)
		w.commitToBranch("core-euwest1", "a link", func(dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "app", "passwd.yaml")); err != nil {
				t.Fatal(err)
			}
		})
		out := w.run(ExitDrift)
		contains(t, out, "ContentChanged: the package on the branch (core-euwest1.app.main) is not the variant's published core-euwest1.app.packagevariant-1 (revision 1): passwd.yaml added")
		code, out, _ := w.cmd("verify")
		if code != ExitNotReady || !strings.Contains(out, "FAIL core-euwest1.app.main: the package differs from its provenance statement (pvkit-provenance.yaml): passwd.yaml (added)") {
			t.Fatalf("verify: exit %d\n%s", code, out)
		}
	})
	t.Run("another package's record", func(t *testing.T) {
		w := newWS(t)
		w.run(ExitOK)
		// prod's package, record and all, pushed into staging's draft.
		dir := filepath.Join(t.TempDir(), "prod")
		w.mustCmd(ExitOK, "pull", "edge-useast1.app.packagevariant-1", dir)
		w.mustCmd(ExitOK, "push", "core-euwest1.app.packagevariant-1", dir)
		code, out, _ := w.cmd("verify", "core-euwest1.app.packagevariant-1")
		if code != ExitNotReady || !strings.Contains(out, "FAIL core-euwest1.app.packagevariant-1: pvkit-provenance.yaml: the record was written for package revision edge-useast1.app.packagevariant-1 (repository edge-useast1, package app), not core-euwest1.app.packagevariant-1") {
			t.Fatalf("verify: exit %d\n%s", code, out)
		}
		w.mustCmd(ExitOK, "verify", "edge-useast1.app.packagevariant-1")
	})
}

// Issue 55 #5: after rollout undo and resume, the wave approvals of the
// undone target stood, and the next runs approved the canary's new v2
// draft and the next wave's by policy: the release rolled back went out
// again with nobody deciding. Now undo withdraws them (and says so),
// approve is refused during an undo, resume says the waves wait for a
// person again, and the canary's new draft waits.
func TestUndoneReleaseDoesNotGoOutAgainByItself(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	w.run(ExitOK)
	w.mustCmd(ExitOK, "rollout", "approve", "app")
	contains(t, w.run(ExitOK), "approved fleet-07.app.packagevariant-2")
	w.run(ExitOK)
	w.mustCmd(ExitOK, "rollout", "approve", "app", "early")
	w.run(ExitOK)
	w.run(ExitOK)

	contains(t, w.mustCmd(ExitOK, "rollout", "undo", "app"), "; the approvals of waves canary, early at blueprints.app.v2 are withdrawn;")
	code, _, errs := w.cmd("rollout", "approve", "app", "canary")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app: the rollout of blueprints.app.v2 is undone (pvkit.dev/rollout-undo): a wave's approval is never given to an undone release") {
		t.Fatalf("approve during an undo: exit %d: %s", code, errs)
	}
	w.run(ExitStalled)
	w.approveDrafts() // the undo's drafts, by a person
	w.run(ExitStalled)
	contains(t, w.mustCmd(ExitOK, "rollout", "resume", "app"), "resumed: blueprints.app.v2 rolls out again from wave one, each wave waiting for a person's approval again")
	for i := 0; i < 3; i++ {
		if out := w.run(ExitOK); strings.Contains(out, "approved ") {
			t.Fatalf("run %d after the resume approved by itself:\n%s", i, out)
		}
	}
	if d := w.drafts(); len(d) != 1 || !strings.HasPrefix(d[0], "fleet-07.") {
		t.Fatalf("want the canary's draft alone, waiting: %v", d)
	}
}
