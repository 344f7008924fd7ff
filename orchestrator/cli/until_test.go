package cli

import (
	"fmt"
	"strings"
	"testing"
)

// Issue 57 #8 through pvctl: a waiting child carries when it moved (the
// rollout status's waiting line and the wave's message); run says when the
// next gate falls due (a soak, a progress deadline), and run --until waits
// for it and goes on (with --now its clock jumps there); a bad --until is
// refused, named, and a dry run refuses it.
func TestNextGateLocally(t *testing.T) {
	w := rolloutWS(t)
	w.rolloutSpec("    minSuccessSeconds: 600\n" + clusterSyncHealth)
	sync := func(applied string) {
		w.write("syncs.yaml", "apiVersion: example.com/v1\nkind: ClusterSync\nmetadata:\n  name: fleet-07\nstatus:\n  applied: "+applied+"\n")
	}
	sync("app/v1")
	const t0 = "2026-11-28T09:00:00Z"
	w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t0)
	w.publishV2()
	w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t0)
	if d := w.approveDrafts(); len(d) != 1 {
		t.Fatalf("the canary's draft: %v", d)
	}
	out := w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t0)
	contains(t, out, "Next gate: PackageVariantSet app: app-fleet-07-app: fails unless reported healthy by then (progressDeadlineSeconds) at 2026-11-28T09:10:00Z (pvctl run --until waits for it).")
	st := w.mustCmd(ExitOK, "rollout", "status", "app")
	contains(t, st, "waiting for app-fleet-07-app (since 2026-11-28T09:00:00Z: fleet-07.app.packagevariant-2 is published, the cluster has not reported it healthy",
		"    waiting: app-fleet-07-app (since 2026-11-28T09:00:00Z)",
		"  next gate: app-fleet-07-app: fails unless reported healthy by then (progressDeadlineSeconds) at 2026-11-28T09:10:00Z")

	// The cluster runs v2 a minute later: the soak ends ten minutes on.
	sync("app/v2")
	const t1 = "2026-11-28T09:01:00Z"
	out = w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t1)
	contains(t, out, "Next gate: PackageVariantSet app: app-fleet-07-app: done if still healthy then (minSuccessSeconds) at 2026-11-28T09:11:00Z")
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("wave early opened during the canary's soak: %v", d)
	}
	// --until short of the gate: one run, the gate still ahead.
	code, out, errs := w.cmd("run", "-f", w.in, "--now", t1, "--until", "5m")
	if code != ExitOK || strings.Contains(errs, "waiting for") || !strings.Contains(out, "Next gate:") {
		t.Fatalf("--until before the gate: exit %d\n%s\n%s", code, out, errs)
	}
	// --until past it: the run waits for the soak (its clock jumps) and
	// wave early opens, its two drafts stamped with the gate's time.
	code, out, errs = w.cmd("run", "-f", w.in, "--now", t1, "--until", "30m")
	if code != ExitOK {
		t.Fatalf("--until 30m: exit %d\n%s\n%s", code, out, errs)
	}
	contains(t, errs, "pvctl run: waiting for PackageVariantSet app: app-fleet-07-app: done if still healthy then (minSuccessSeconds) at 2026-11-28T09:11:00Z (--until 2026-11-28T09:31:00Z)")
	if n := strings.Count(out, "created draft"); n != 2 {
		t.Fatalf("--until 30m: want wave early's two drafts:\n%s", out)
	}
	if strings.Contains(out, "Next gate:") {
		t.Fatalf("wave early waits for approval, no gate with a time:\n%s", out)
	}
	st = w.mustCmd(ExitOK, "rollout", "status", "app")
	contains(t, st, "wave canary       Complete", "(since 2026-11-28T09:11:00Z)")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--until", "tomorrow"}, `--until "tomorrow" is neither an RFC 3339 instant such as 2026-11-27T18:00:00Z nor a positive duration such as 2h`},
		{[]string{"--until", "-1h"}, `--until "-1h" is neither`},
		{[]string{"--until", "1h", "--dry-run"}, "--until goes with a run that writes"},
	} {
		code, _, errs := w.cmd("run", append([]string{"-f", w.in}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %s; want %d and %q", tc.args, code, errs, ExitUsage, tc.want)
		}
	}
}

// run --until waits for an undo's soak as for a wave's: the canary
// undone and back at v1, its cluster running v1 again, the next gate is a
// soak at v1 ("on its way back"), and --until past it waits until every
// child is back.
func TestNextGateOfAnUndo(t *testing.T) {
	w := rolloutWS(t)
	w.rolloutSpec("    minSuccessSeconds: 600\n" + clusterSyncHealth)
	sync := func(canary string) {
		var b strings.Builder
		for i := 0; i < 10; i++ {
			applied := "app/v1"
			if i == 7 {
				applied = canary
			}
			fmt.Fprintf(&b, "---\napiVersion: example.com/v1\nkind: ClusterSync\nmetadata:\n  name: fleet-%02d\nstatus:\n  applied: %s\n", i, applied)
		}
		w.write("syncs.yaml", b.String())
	}
	sync("app/v1")
	const t0 = "2026-11-28T09:00:00Z"
	w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t0)
	w.publishV2()
	w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t0)
	w.approveDrafts() // the canary's, at v2
	sync("app/v2")
	w.mustCmd(ExitOK, "run", "-f", w.in, "--now", t0)
	w.mustCmd(ExitOK, "rollout", "undo", "app")
	w.cmd("run", "-f", w.in, "--now", t0)
	if d := w.approveDrafts(); len(d) != 1 {
		t.Fatalf("the undo's draft, the canary back to v1: %v", d)
	}
	sync("app/v3") // the canary's third revision: v1's content again
	const t1 = "2026-11-28T09:01:00Z"
	_, out, _ := w.cmd("run", "-f", w.in, "--now", t1) // published at v1, its cluster running it: soaking
	contains(t, out, "Next gate: PackageVariantSet app: app-fleet-00-app: done if still healthy then (minSuccessSeconds) (on its way back to blueprints.app.v1) at 2026-11-28T09:10:00Z")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "undo: 0 of 10 children back at blueprints.app.v1")
	_, _, errs := w.cmd("run", "-f", w.in, "--now", t1, "--until", "30m")
	contains(t, errs, "pvctl run: waiting for PackageVariantSet app: app-fleet-07-app: done if still healthy then (minSuccessSeconds) (on its way back to blueprints.app.v1) at 2026-11-28T09:11:00Z")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "undo: 10 of 10 children back at blueprints.app.v1")
}
