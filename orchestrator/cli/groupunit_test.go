package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// groupWaveWS is groupRolloutWS with no approval policy: the canary of
// each group revision waits for a wave approval; the group's v1 is
// published in every target, its v2 (every member's v2) is out, and
// edge00's three v2 drafts wait for the canary's approval.
func groupWaveWS(t *testing.T) *ws {
	t.Helper()
	w := groupRolloutWS(t)
	set := filepath.Join(w.in, "set.yaml")
	b, err := os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(set, []byte(strings.Replace(string(b), "      annotations: {approval.nephio.org/policy: always}\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"upf", "smf", "amf"} {
		w.publishMember(m, "v2")
	}
	w.publishGroup3(2)
	w.run(ExitOK)
	for _, m := range []string{"upf", "smf", "amf"} {
		contains(t, w.files("edge00." + m + ".packagevariant-2")["nf.yaml"], "version: v2")
	}
	return w
}

// lifecycleOf is a revision's lifecycle as pvctl get lists it ("" when it
// is not listed).
func (w *ws) lifecycleOf(name string) string {
	w.t.Helper()
	for _, l := range strings.Split(w.mustCmd(ExitOK, "get"), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[0] == name {
			return f[5]
		}
	}
	return ""
}

// A group's target is one unit for a person too (rule package-groups):
// while one member's draft holds a person's edit, or a person rejected
// it, a wave approval publishes no member of that target; the rollout
// names the member that holds it and what would release it; once the
// edited draft is approved by hand, the others follow, together.
func TestGroupTargetIsOneUnitForAPerson(t *testing.T) {
	t.Run("an edited member", func(t *testing.T) {
		w := groupWaveWS(t)
		edited := filepath.Join(t.TempDir(), "upf")
		w.mustCmd(ExitOK, "pull", "edge00.upf.packagevariant-2", edited)
		nf := filepath.Join(edited, "nf.yaml")
		b, _ := os.ReadFile(nf)
		if err := os.WriteFile(nf, []byte(string(b)+"  tuned: \"yes\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		w.mustCmd(ExitOK, "push", "edge00.upf.packagevariant-2", edited)
		w.mustCmd(ExitOK, "rollout", "approve", "free5gc", "canary")
		w.run(ExitOK)
		for _, m := range []string{"upf", "smf", "amf"} {
			if lc := w.lifecycleOf("edge00." + m + ".packagevariant-2"); lc == "Published" {
				t.Fatalf("edge00's %s was published while its upf holds a person's edit", m)
			}
		}
		st := w.mustCmd(ExitOK, "rollout", "status", "free5gc")
		contains(t, st, "member upf (free5gc-edge00-upf): its draft edge00.upf.packagevariant-2 holds a person's edit: approve it by hand (pvctl approve edge00.upf.packagevariant-2)")
		contains(t, w.mustCmd(ExitOK, "status", "packagevariantset/free5gc"), "  edge00 moving to blueprints.free5gc.v2 (no member published there yet):\n", "  edge01 at blueprints.free5gc.v1:\n")
		// By hand, a person publishes smf alone: the target is mixed, and
		// status says which members are not there.
		w.mustCmd(ExitOK, "approve", "edge00.smf.packagevariant-2")
		w.run(ExitOK)
		contains(t, w.mustCmd(ExitOK, "status", "packagevariantset/free5gc"), "  edge00 mixed: at blueprints.free5gc.v2 but amf, upf (not published there yet):\n")
		w.mustCmd(ExitOK, "approve", "edge00.upf.packagevariant-2")
		w.run(ExitOK)
		for _, m := range []string{"upf", "smf", "amf"} {
			if lc := w.lifecycleOf("edge00." + m + ".packagevariant-2"); lc != "Published" {
				t.Fatalf("after the edited upf was approved, edge00's %s is %q", m, lc)
			}
		}
		contains(t, w.files("edge00.upf.packagevariant-2")["nf.yaml"], "tuned: \"yes\"")
		contains(t, w.mustCmd(ExitOK, "status", "packagevariantset/free5gc"), "  edge00 at blueprints.free5gc.v2:\n")
	})
	t.Run("a rejected member", func(t *testing.T) {
		w := groupWaveWS(t)
		w.mustCmd(ExitOK, "propose", "edge00.smf.packagevariant-2")
		w.mustCmd(ExitOK, "reject", "edge00.smf.packagevariant-2")
		w.mustCmd(ExitOK, "rollout", "approve", "free5gc", "canary")
		code, out, errs := w.cmd("run", "-f", w.in)
		for _, m := range []string{"upf", "smf", "amf"} {
			if lc := w.lifecycleOf("edge00." + m + ".packagevariant-2"); lc == "Published" {
				t.Fatalf("edge00's %s was published while its smf is rejected (run exit %d)\n%s%s", m, code, out, errs)
			}
		}
		contains(t, w.mustCmd(ExitOK, "rollout", "status", "free5gc"), "member smf (free5gc-edge00-smf): Rejected: ")
	})
}

// An upgrade draft shows its upgrade task as Porch's PackageRevision does
// (spec.tasks: the old upstream, the new one, the local revision, and
// resource-merge), and a clone its clone task; read back from the
// repositories, as every pvctl run reads them.
func TestGetShowsTheDraftsTask(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	w.run(ExitOK)
	out := w.mustCmd(ExitOK, "get", "fleet-07.app.packagevariant-2", "-o", "yaml")
	contains(t, out, "  tasks:\n  - type: upgrade\n    upgrade:\n      localPackageRevisionRef:\n        name: fleet-07.app.packagevariant-1\n"+
		"      newUpstreamRef:\n        name: blueprints.app.v2\n      oldUpstreamRef:\n        name: blueprints.app.v1\n      strategy: resource-merge\n")
	contains(t, w.mustCmd(ExitOK, "get", "fleet-07.app.packagevariant-1", "-o", "yaml"),
		"  tasks:\n  - clone:\n      upstreamRef:\n        upstreamRef:\n          name: blueprints.app.v1\n    type: clone\n")
}

// A downstream whose upstream's repository is no longer registered (the
// repository renamed) names its upstream by the lock's git URL in
// get -o wide, not as ":app/v1".
func TestLockOfAnUnregisteredRepository(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	if err := os.Rename(filepath.Join(w.repos, "blueprints.git"), filepath.Join(w.repos, "catalog.git")); err != nil {
		t.Fatal(err)
	}
	out := w.mustCmd(ExitOK, "get", "--repo", "core-euwest1", "-o", "wide")
	if strings.Contains(out, " :app/v1") || !strings.Contains(out, "file://") || !strings.Contains(out, "blueprints.git:app/v1") {
		t.Fatalf("get -o wide names the upstream of an unregistered repository:\n%s", out)
	}
	// The files still register blueprints, whose repository is gone: the
	// run refuses, naming it, before anything is written.
	if code, _, errs := w.cmd("run", "-f", w.in); code != ExitUsage || !strings.Contains(errs, `Repository "blueprints": its bare repository `) {
		t.Fatalf("run after the rename: exit %d\n%s", code, errs)
	}
}
