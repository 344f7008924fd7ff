package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api"
	pvv1 "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	pvcore "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	pvs "github.com/pvkit/pvkit/pkg/api/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// rolloutWS is examples/rollout: a set over ten repositories (fleet-07
// the canary) and a staged rollout: canary (1), early (30%, 2 at once),
// rest (2 at once); the first revision cloned and approved everywhere.
func rolloutWS(t *testing.T) *ws {
	w := newWS(t)
	for _, f := range []string{"fleet-set.yaml", "app-staging.yaml", "repositories.yaml", "cluster-objects.yaml"} {
		w.remove(f)
	}
	fntest.WriteTree(t, w.in, fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "rollout")))
	w.remove("README.md")
	out := w.run(ExitOK)
	if n := strings.Count(out, "created draft fleet-"); n != 10 {
		t.Fatalf("the first revision is not rolled out: want 10 clones, got %d:\n%s", n, out)
	}
	w.approveDrafts()
	return w
}

// rolloutSpec adds lines (indented four spaces, under spec.rollout) to
// the example's set.
func (w *ws) rolloutSpec(lines string) {
	w.t.Helper()
	set := readFile(w.t, filepath.Join(w.in, "app-set.yaml"))
	w.write("app-set.yaml", strings.Replace(set, "  rollout:\n", "  rollout:\n"+lines, 1))
}

// clusterSyncHealth is a rollout's health check on a ClusterSync named for
// the target's repository, healthy when it reports the revision's tag.
const clusterSyncHealth = `    health:
      apiVersion: example.com/v1
      kind: ClusterSync
      nameExpr: downstream.repo
      condition: has(object.status) && object.status.applied == revision.ref
`

// approveDrafts approves every draft pvctl get lists and returns them.
func (w *ws) approveDrafts() []string {
	w.t.Helper()
	drafts := w.drafts()
	if len(drafts) > 0 {
		w.mustCmd(ExitOK, "approve", drafts...)
	}
	return drafts
}

// rule staged-rollouts, through pvctl run: publish v2, only the canary
// gets a draft; once it is published the next wave opens with at most 2
// drafts in flight; pause stops new drafts, resume continues; a held
// target keeps v1 and is reported; the rollout completes.
func TestStagedRolloutLocally(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	// A fixed clock: the golden status carries when the canary moved.
	out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--now", "2026-11-28T09:00:00Z")
	if n := strings.Count(out, "created draft"); n != 1 || !strings.Contains(out, "created draft fleet-07.app.packagevariant-2 (upgrade of fleet-07.app.packagevariant-1 to blueprints.app.v2)") {
		t.Fatalf("only the canary moves first:\n%s", out)
	}
	st := w.mustCmd(ExitOK, "rollout", "status", "app")
	golden(t, "rollout-status-canary.txt", st)
	golden(t, "rollout-status-canary.json", w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "json"))
	contains(t, st, "PackageVariantSet app: Progressing, target blueprints.app.v2 from blueprints.app.v1",
		"wave canary       Open      1/1 moved, 0 done", "wave early        Pending   0/3 moved, 0 done", "wave rest         Pending   0/6 moved, 0 done")
	contains(t, w.mustCmd(ExitOK, "events"), "RolloutStarted", "WaveOpened")

	// The canary published: wave early opens, two at a time.
	if d := w.approveDrafts(); len(d) != 1 {
		t.Fatalf("drafts: %v", d)
	}
	out = w.run(ExitOK)
	if n := strings.Count(out, "created draft"); n != 2 {
		t.Fatalf("want 2 drafts of wave early (maxUpdate 2), got %d:\n%s", n, out)
	}
	// Paused: approving them moves nobody else.
	contains(t, w.mustCmd(ExitOK, "rollout", "pause", "app"), "packagevariantset/app rollout paused: the next pvctl run applies it")
	// Asked for, not applied yet: status says it is pending (issue 43 #5).
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "PackageVariantSet app: Progressing",
		`pending (the next pvctl run applies them): pvkit.dev/rollout-pause="true"`)
	w.approveDrafts()
	// Issue 43 #2 (rule rollout-conditions): a paused rollout is not green:
	// the run exits 4 (stalled: it waits for someone), the set's row says
	// why, and its RolloutPaused condition is what pvctl wait waits for.
	out = w.run(ExitStalled)
	if strings.Contains(out, "created draft") {
		t.Fatalf("a paused rollout moved a child:\n%s", out)
	}
	contains(t, out, "PackageVariantSet  app               False  RolloutPaused", "PausedByOperator: paused in wave early")
	contains(t, w.mustCmd(ExitOK, "wait", "pvs/app", "--for=condition=RolloutPaused", "--timeout", "5s"), "packagevariantset/app")
	w.mustCmd(ExitOK, "wait", "pvs/app", "--for=condition=RolloutProgressing=False", "--timeout", "5s")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "PackageVariantSet app: Paused", "paused in wave early: pvkit.dev/rollout-pause is \"true\"")
	// Issue 57 #5: not Ready everywhere: the set's own condition (status
	// -o json) and pvctl wait --for=condition=Ready, which times out.
	contains(t, w.mustCmd(ExitOK, "status", "pvs/app", "-o", "json"), `"type": "Ready"`, `"status": "False"`, `"reason": "RolloutPaused"`,
		`"message": "the staged rollout is paused (PausedByOperator): paused in wave early`)
	if code, _, errs := w.cmd("wait", "pvs/app", "--for=condition=Ready", "--timeout", "200ms"); code != ExitNotReady ||
		!strings.Contains(errs, "waiting for packagevariantset/app Ready=True; last: Ready=False RolloutPaused: the staged rollout is paused (PausedByOperator)") {
		t.Fatalf("pvctl wait for Ready on a paused rollout: exit %d: %s", code, errs)
	}
	// Hold one of rest, resume: the rollout goes on to the end without it.
	code, _, errs := w.cmd("rollout", "hold", "app", "app-fleet-9-app")
	if code != ExitNotReady || !strings.Contains(errs, `packagevariantset/app has no child "app-fleet-9-app" (pvctl status lists its PackageVariants)`) {
		t.Fatalf("hold of a typo: exit %d: %s", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "hold", "app", "app-fleet-09-app"), "rollout held app-fleet-09-app (pvkit.dev/rollout-hold: app-fleet-09-app)")
	contains(t, w.mustCmd(ExitOK, "rollout", "resume", "app"), "rollout resumed")
	for i := 0; i < 8; i++ {
		w.run(ExitOK)
		if len(w.approveDrafts()) == 0 {
			break
		}
	}
	w.run(ExitOK)
	st = w.mustCmd(ExitOK, "rollout", "status", "app")
	contains(t, st, "PackageVariantSet app: Complete, target blueprints.app.v2", "every child is at blueprints.app.v2 but the held ones (app-fleet-09-app)", "held: app-fleet-09-app")
	for _, l := range strings.Split(w.mustCmd(ExitOK, "get"), "\n") {
		if strings.HasPrefix(l, "fleet-09.app") && strings.Contains(l, "packagevariant-2") {
			t.Fatalf("the held target moved:\n%s", l)
		}
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "json"), `"phase": "Complete"`, `"held": [`)
	// Complete, but not every cluster moved: the condition's reason says so.
	contains(t, w.mustCmd(ExitOK, "status", "packagevariantset/app"), "RolloutComplete=True  NotAllAtTarget: every child is at blueprints.app.v2 but the held ones (app-fleet-09-app)")
	// Errors name what is wrong.
	code, _, errs = w.cmd("rollout", "status", "nosuch")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset nosuch: not found in the last run's state") {
		t.Fatalf("status nosuch: exit %d: %s", code, errs)
	}
	// The error names the whole command (issue 62 #2: it said "pvctl pause").
	code, _, errs = w.cmd("rollout", "pause", "nosuch")
	if code != ExitNotReady || !strings.HasPrefix(errs, "pvctl rollout pause: packagevariantset/nosuch: not found in the last run's state") {
		t.Fatalf("rollout pause nosuch: exit %d: %s", code, errs)
	}
	code, _, errs = w.cmd("rollout", "hold", "app")
	if code != ExitUsage || !strings.Contains(errs, "usage: pvctl rollout hold SET CHILD...") {
		t.Fatalf("hold without a child: exit %d: %s", code, errs)
	}
}

// pvctl plan says which children a rollout moves in this run and which
// wait, and why.
func TestRolloutPlan(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--now", "2026-11-28T09:00:00Z")
	golden(t, "rollout-plan.txt", out)
	contains(t, out, "would create draft fleet-07.app.packagevariant-2 (upgrade of fleet-07.app.packagevariant-1 to blueprints.app.v2)",
		"PackageVariantSet app rollout to blueprints.app.v2: Progressing: wave canary: 1 of 1 children moved, 0 done; waiting for app-fleet-07-app (since 2026-11-28T09:00:00Z: draft fleet-07.app.packagevariant-2 is Draft, not yet approved); wave canary Open (1/1 moved); wave early Pending (0/3 moved); wave rest Pending (0/6 moved)")
	if strings.Count(out, "would create draft") != 1 {
		t.Fatalf("the plan moves more than the canary:\n%s", out)
	}
}

// golden compares a command's output with testdata/NAME
// (PVKIT_UPDATE_GOLDEN=1 rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv(fntest.UpdateEnv) != "" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with %s=1 to create it)", err, fntest.UpdateEnv)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output:\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// Against a cluster: the controls are annotations on the set (pause,
// resume, hold, release, skip), and status reads the set's status.rollout.
func TestRolloutAgainstACluster(t *testing.T) {
	scheme, err := pvapi.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	set := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "ops", Generation: 1},
		Spec: pvs.PackageVariantSetSpec{Rollout: &pvs.Rollout{Waves: []pvs.Wave{{Name: "all"}}}},
		Status: pvsapi.PackageVariantSetStatus{Rollout: &pvs.RolloutStatus{Target: pvs.RevisionRef{Name: "blueprints.app.v2"}, Phase: "Paused",
			Message: "paused in wave all: 1 failed child(ren)", Failed: []string{"fleet-a: Stalled"},
			Waves: []pvs.WaveStatus{{Name: "all", State: "Open", Members: []string{"fleet-a", "fleet-b"}, Moved: 1}}}}}
	set.UID = "set-uid"
	yes := true
	var objs []client.Object
	objs = append(objs, set)
	for _, n := range []string{"fleet-a", "fleet-b"} {
		objs = append(objs, &pvv1.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ops",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "config.porch.kpt.dev/v1alpha2", Kind: "PackageVariantSet", Name: "fleet", UID: "set-uid", Controller: &yes}}}})
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(set).Build()
	old := ClusterClient
	ClusterClient = func(string, string) (client.Client, error) { return c, nil }
	defer func() { ClusterClient = old }()
	w := newWS(t)
	cl := []string{"--kubeconfig", "kc", "-n", "ops"}
	run := func(args ...string) string { t.Helper(); return w.mustCmd(ExitOK, "rollout", append(args, cl...)...) }
	contains(t, run("status", "fleet"), "PackageVariantSet fleet: Paused, target blueprints.app.v2", "wave all          Open      1/2 moved, 0 done", "failed: fleet-a: Stalled")
	contains(t, run("status", "fleet", "-o", "json"), `"phase": "Paused"`)
	annotations := func() map[string]string {
		var s pvsapi.PackageVariantSet
		if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ops", Name: "fleet"}, &s); err != nil {
			t.Fatal(err)
		}
		return s.Annotations
	}
	contains(t, run("pause", "fleet"), "packagevariantset/fleet rollout paused")
	contains(t, run("hold", "fleet", "fleet-b", "fleet-a"), "rollout held fleet-b, fleet-a (pvkit.dev/rollout-hold: fleet-a,fleet-b)")
	contains(t, run("skip", "fleet", "fleet-a"), "rollout skipped fleet-a (pvkit.dev/rollout-skip: fleet-a)")
	if a := annotations(); a["pvkit.dev/rollout-pause"] != "true" || a["pvkit.dev/rollout-hold"] != "fleet-a,fleet-b" || a["pvkit.dev/rollout-skip"] != "fleet-a" {
		t.Fatalf("annotations: %v", a)
	}
	if code, _, errs := w.cmd("rollout", append([]string{"skip", "fleet", "fleet-c"}, cl...)...); code != ExitNotReady || !strings.Contains(errs, `packagevariantset/fleet has no child "fleet-c"`) {
		t.Fatalf("skip of a typo: exit %d: %s", code, errs)
	}
	// Issue 47 #5: a skip applies to failed children only.
	if code, _, errs := w.cmd("rollout", append([]string{"skip", "fleet", "fleet-b"}, cl...)...); code != ExitNotReady ||
		!strings.Contains(errs, `packagevariantset/fleet: child "fleet-b" has not failed in the rollout (status.rollout.failed; pvctl rollout status); a skip applies to failed children only: hold it to keep it back`) {
		t.Fatalf("skip of a child that has not failed: exit %d: %s", code, errs)
	}
	run("resume", "fleet")
	run("release", "fleet", "fleet-a", "fleet-b")
	if a := annotations(); a["pvkit.dev/rollout-pause"] != "" || a["pvkit.dev/rollout-hold"] != "" || a["pvkit.dev/rollout-skip"] != "fleet-a" {
		t.Fatalf("resumed and released, annotations: %v", a)
	}
	// Issue 43 #5: a skip is taken back with unskip.
	contains(t, run("unskip", "fleet", "fleet-a"), "rollout unskipped fleet-a (pvkit.dev/rollout-skip: )")
	if a := annotations(); a["pvkit.dev/rollout-skip"] != "" {
		t.Fatalf("unskipped, annotations: %v", a)
	}
	code, _, errs := w.cmd("rollout", append([]string{"status", "nosuch"}, cl...)...)
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset nosuch: not found in namespace ops of the cluster") {
		t.Fatalf("status nosuch: exit %d: %s", code, errs)
	}
}

// Issue 33 acceptance, through pvctl run: a draft of wave early that a
// person rejects (proposed, then rejected) exhausts the budget of 0, and
// nothing more moves until it is skipped; a target added mid-rollout says
// which wave it joins and starts at the rollout's from revision; v3
// published mid-rollout starts again from wave one, the canary alone.
func TestRolloutRejectedChildNewcomerAndRestart(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	w.run(ExitOK)
	w.approveDrafts() // the canary
	w.run(ExitOK)
	drafts := w.drafts()
	if len(drafts) != 2 {
		t.Fatalf("wave early's drafts: %v", drafts)
	}
	rejected := drafts[0]
	// Proposed and rejected with no run between (issue 62 #6: the reject
	// records itself; it needed propose, run, reject, run).
	contains(t, w.mustCmd(ExitOK, "propose", rejected), rejected)
	contains(t, w.mustCmd(ExitOK, "reject", rejected), rejected)
	contains(t, w.run(ExitStalled), "RolloutPaused  -                              ErrorBudgetExceeded: paused in wave early: 1 failed child(ren)")
	st := w.mustCmd(ExitOK, "rollout", "status", "app")
	contains(t, st, "PackageVariantSet app: Paused", "draft "+rejected+" was rejected")
	contains(t, w.mustCmd(ExitOK, "events"), "DraftRejected", "RolloutPaused")
	w.mustCmd(ExitOK, "approve", drafts[1]) // the other draft of wave early: published, and still nothing moves
	if out := w.run(ExitStalled); strings.Contains(out, "created draft") {
		t.Fatalf("a paused rollout moved a child:\n%s", out)
	}

	// A target added mid-rollout joins a wave, at the rollout's from revision.
	w.write("repositories.yaml", readFile(t, filepath.Join(w.in, "repositories.yaml"))+
		"---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: fleet-10\n  labels:\n    fleet: \"yes\"\nspec:\n  type: git\n  deployment: true\n")
	out := w.run(ExitStalled) // still paused by the budget
	contains(t, out, "wave early Open (2/4 moved, 1 failed)", "created draft fleet-10.app.packagevariant-1 (clone of blueprints.app.v1)")
	contains(t, w.mustCmd(ExitOK, "events"), "RolloutJoined", "app-fleet-10-app joins wave")

	// Issue 47 #5: the canary never failed: no skip of it ("done" before).
	if code, _, errs := w.cmd("rollout", "skip", "app", "app-fleet-07-app"); code != ExitNotReady || !strings.Contains(errs, `child "app-fleet-07-app" has not failed in the rollout`) {
		t.Fatalf("skip of the canary: exit %d: %s", code, errs)
	}
	// Skipped: the rollout goes on.
	owner := "app-" + strings.Split(rejected, ".")[0] + "-app"
	contains(t, w.mustCmd(ExitOK, "rollout", "skip", "app", owner), owner)
	out = w.run(ExitOK)
	if !strings.Contains(out, "created draft") {
		t.Fatalf("the rollout did not go on after the skip:\n%s", out)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "PackageVariantSet app: Progressing", "skipped: "+owner)

	// v3 mid-rollout: from wave one again, the canary alone.
	w.publishImage("nginx:1.29") // v3
	out = w.run(ExitOK)
	if n := strings.Count(out, "created draft"); n != 1 || !strings.Contains(out, "created draft fleet-07.app.packagevariant-3 (upgrade of fleet-07.app.packagevariant-2 to blueprints.app.v3)") {
		t.Fatalf("v3 mid-rollout: want the canary's draft alone:\n%s", out)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "PackageVariantSet app: Progressing, target blueprints.app.v3 from blueprints.app.v2", "wave canary       Open")
}

// drafts lists the package revisions pvctl get shows as Draft.
func (w *ws) drafts() []string {
	w.t.Helper()
	var drafts []string
	for _, l := range strings.Split(w.mustCmd(ExitOK, "get"), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[5] == "Draft" {
			drafts = append(drafts, f[0])
		}
	}
	return drafts
}

// Issue 42 #1 (rule child-status-contract): a child whose draft at the
// rollout's target has a readiness gate False (a person's review) blocks
// the wave; the reason is in the child's status (its downstream target's
// upstream lock and Blocked), in pvctl status and in the rollout's status,
// and the set read none of the child's packages to know it.
func TestGatedChildBlocksTheWave(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	w.run(ExitOK)
	drafts := w.drafts()
	if len(drafts) != 1 {
		t.Fatalf("the canary's draft: %v", drafts)
	}
	dir := filepath.Join(t.TempDir(), "app")
	w.mustCmd(ExitOK, "pull", drafts[0], dir)
	kf := readFile(t, filepath.Join(dir, "Kptfile"))
	gated := strings.Replace(kf, "  readinessGates:\n", "  readinessGates:\n  - conditionType: example.com/reviewed\n", 1)
	if gated == kf {
		t.Fatalf("the canary's Kptfile has no readiness gates to add to:\n%s", kf)
	}
	gated = strings.Replace(gated, "  conditions:\n", "  conditions:\n  - type: example.com/reviewed\n    status: \"False\"\n    reason: NotYet\n    message: waiting for the network team\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "Kptfile"), []byte(gated), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", drafts[0], dir)
	contains(t, w.run(ExitStalled), "PackageVariant     app-fleet-07-app  False  ReadinessGate", "PackageVariantSet  app               False  RolloutPaused")

	why := `readiness gate "example.com/reviewed" is False (NotYet: waiting for the network team)`
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		drafts[0]+": ", "    upstream: blueprints app at app/v2", "    blocked: GateClosed: "+why)
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "PackageVariantSet app: Paused",
		"app-fleet-07-app: draft "+drafts[0]+" is not approvable: "+why)
	var v pvv1.PackageVariant
	if err := json.Unmarshal([]byte(w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app", "-o", "json")), &v); err != nil {
		t.Fatal(err)
	}
	if ts := v.Status.DownstreamTargets; len(ts) != 1 || ts[0].Blocked == nil || ts[0].Blocked.Reason != pvv1.ReasonGateClosed || ts[0].Blocked.Message != why ||
		ts[0].UpstreamLock == nil || ts[0].UpstreamLock.Ref != "app/v2" {
		t.Fatalf("the child's status: %+v", ts)
	}
	// The review done: the gate True, the draft approvable, and approved
	// the canary is done.
	passed := strings.Replace(gated, "    status: \"False\"\n    reason: NotYet", "    status: \"True\"\n    reason: Reviewed", 1)
	if err := os.WriteFile(filepath.Join(dir, "Kptfile"), []byte(passed), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", drafts[0], dir)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"), "    blocked: AwaitingApproval: Draft, not yet approved")
	w.approveDrafts()
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "wave canary       Complete")
}

// Issue 43 #1 (rule health-gated-rollouts), through pvctl run: with
// rollout.health, the canary published is not done until the object its
// cluster keeps (given with -f, as pvctl reads every in-cluster object)
// reports the published revision; then the next wave opens. What waits is
// named in the rollout's status and the child's.
func TestHealthGatedWaveLocally(t *testing.T) {
	w := rolloutWS(t)
	w.rolloutSpec(clusterSyncHealth)
	w.canaryPublishedAtV2()
	w.run(ExitOK)
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("wave early opened before the canary's cluster reported: %v", d)
	}
	// No ClusterSync given: pvctl may not read the kind (it reads the
	// kinds its files give), and says so.
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "wave canary       Open      1/1 moved, 0 done",
		"waiting for app-fleet-07-app (since ", ": fleet-07.app.packagevariant-2 is published, the cluster has not reported it healthy (KindNotAllowed: spec.health names kind ClusterSync")
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		"health: Unknown KindNotAllowed: spec.health names kind ClusterSync, a kind pvkit may not read (allowed: ConfigMap, Team.example.com); pvctl run reads the kinds of the objects its files give (-f)")
	syncs := ""
	sync := func(name, applied string) {
		syncs += "---\napiVersion: example.com/v1\nkind: ClusterSync\nmetadata:\n  name: " + name + "\nstatus:\n  applied: " + applied + "\n"
		w.write("syncs.yaml", syncs)
	}
	sync("fleet-00", "app/v1")
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		`health: Unknown ObjectNotFound: no ClusterSync "fleet-07" in namespace "default": the cluster has not reported on fleet-07.app.packagevariant-2`)
	sync("fleet-07", "app/v1")
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"), "health: False NotHealthy: ClusterSync default/fleet-07 does not report fleet-07.app.packagevariant-2")
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("wave early opened while the canary's cluster runs v1: %v", d)
	}
	syncs = strings.Replace(syncs, "fleet-07\nstatus:\n  applied: app/v1", "fleet-07\nstatus:\n  applied: app/v2", 1)
	w.write("syncs.yaml", syncs)
	w.run(ExitOK)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"), "health: True Healthy: ClusterSync default/fleet-07 reports fleet-07.app.packagevariant-2")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "wave canary       Complete", "wave early        Open")
	if d := w.drafts(); len(d) != 2 {
		t.Fatalf("wave early's drafts once the canary is healthy: %v", d)
	}
}

// Issue 43 #3 (rule rollout-undo), through pvctl: mid-rollout, rollout
// undo says what it will do, and the next run moves every moved child back
// to v1 at once (drafts for all of them in one run, whatever their wave);
// the rollout is Paused RolledBack (exit 4); resumed, v2 rolls out again
// from wave one.
func TestRolloutUndoLocally(t *testing.T) {
	w := rolloutWS(t)
	code, _, errs := w.cmd("rollout", "undo", "app")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app has no rollout to undo: its status names no revision it rolled out from") {
		t.Fatalf("undo before any rollout: exit %d: %s", code, errs)
	}
	w.publishV2()
	w.run(ExitOK)
	w.approveDrafts() // the canary
	w.run(ExitOK)
	if d := w.approveDrafts(); len(d) != 2 { // wave early's first two
		t.Fatalf("wave early's drafts: %v", d)
	}
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "rollout", "undo", "app"),
		"packagevariantset/app rollout undo of blueprints.app.v2: every child goes back to blueprints.app.v1 at once (wave canary: 1 moved, wave early: 3 moved); pvctl rollout resume rolls blueprints.app.v2 out again from wave one, each wave waiting for a person's approval: the next pvctl run applies it")
	out := w.run(ExitStalled)
	// The canary and wave early's two published ones get a draft back to
	// v1; wave early's third, a draft at v2 not yet approved, is upgraded
	// in place to v1: all in this one run.
	if n, m := strings.Count(out, "to blueprints.app.v1)"), strings.Count(out, "in place from app/v2 to app/v1"); n != 3 || m != 1 {
		t.Fatalf("undo: want 3 drafts back to v1 and 1 draft upgraded in place, in one run; got %d and %d:\n%s", n, m, out)
	}
	contains(t, out, "PackageVariantSet  app               False  RolloutPaused", "RolledBack: undone: every child is pinned back to blueprints.app.v1")
	contains(t, w.mustCmd(ExitOK, "events"), "RolloutUndone")
	// Issue 57 #6: the run applied the undo: no longer pending (it read
	// pending forever, compared with the saved annotations, which never
	// carry pvctl's controls).
	st := w.mustCmd(ExitOK, "rollout", "status", "app")
	if strings.Contains(st, "pending") {
		t.Fatalf("the run applied the undo, and rollout status still says pending:\n%s", st)
	}
	// And it counts the undo's progress: the 4 moved ones wait for their
	// drafts back to v1, the 6 others are there.
	contains(t, st, "undo: 6 of 10 children back at blueprints.app.v1 (published and Ready there), 10 pinned to it, 4 on their way")
	w.approveDrafts()
	w.run(ExitStalled)
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "undo: 10 of 10 children back at blueprints.app.v1 (published and Ready there), 10 pinned to it, 0 on their way")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "json"), `"undoProgress": {`)
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("drafts after the undo's were approved: %v", d)
	}
	for _, l := range strings.Split(w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"), "\n") {
		if strings.Contains(l, "upstream: blueprints app at") && !strings.Contains(l, "app/v1") {
			t.Fatalf("the canary is not back at v1: %s", l)
		}
	}
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"), "upstream: blueprints app at app/v1")
	// Resumed: the canary alone moves again.
	contains(t, w.mustCmd(ExitOK, "rollout", "resume", "app"), "rollout resumed")
	out = w.run(ExitOK)
	if n := strings.Count(out, "created"); n != 1 || !strings.Contains(out, "fleet-07") {
		t.Fatalf("resumed after an undo: want the canary's draft alone:\n%s", out)
	}
}

// Issue 43 #4 (rule wave-approval), through pvctl: a person approves a
// wave once; the next run approves its children's finished drafts
// (in-process approval by policy), those that move later in the wave too;
// a wave not approved still waits for pvctl approve; a typo of a wave is
// refused naming the waves.
func TestWaveApprovalLocally(t *testing.T) {
	w := rolloutWS(t)
	w.publishV2()
	// Published, not yet run: the rollout of v2 has not started.
	code, _, errs := w.cmd("rollout", "approve", "app")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app: its upstream resolves to blueprints.app.v2, whose rollout has not started (the status shows none): pvctl run first, then approve its waves") {
		t.Fatalf("before the run: exit %d: %s", code, errs)
	}
	w.run(ExitOK)
	code, _, errs = w.cmd("rollout", "approve", "app", "carany")
	if code != ExitNotReady || !strings.Contains(errs, `packagevariantset app has no wave "carany" (its waves: canary, early, rest)`) {
		t.Fatalf("a typo: exit %d: %s", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "approve", "app"),
		"rollout approve of wave canary at blueprints.app.v2: the finished drafts of its 1 children (1 moved so far, and those that move later) are approved")
	out := w.run(ExitOK)
	// Named as a wave's approval, and no approval.nephio.org/policy, which
	// nobody set, is written onto the draft.
	contains(t, out, "approved fleet-07.app.packagevariant-2: revision 2 of app (a wave's approval, spec.approval)")
	if y := w.mustCmd(ExitOK, "get", "fleet-07.app.packagevariant-2", "-o", "yaml"); strings.Contains(y, "approval.nephio.org/policy") {
		t.Fatalf("a wave's approval wrote a policy onto the revision:\n%s", y)
	}
	contains(t, w.mustCmd(ExitOK, "events"), "approved fleet-07.app.packagevariant-2 (wave canary of PackageVariantSet app, pvkit.dev/rollout-a")
	w.run(ExitOK)
	if d := w.drafts(); len(d) != 2 {
		t.Fatalf("wave early's first drafts wait for a person: %v", d)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "approve", "app", "early"), "approve of wave early at blueprints.app.v2: the finished drafts of its 3 children (2 moved so far")
	for i := 0; i < 4; i++ {
		w.run(ExitOK)
	}
	st := w.mustCmd(ExitOK, "rollout", "status", "app")
	contains(t, st, "wave canary       Complete", "wave early        Complete  3/3 moved, 3 done", "wave rest         Open")
	if d := w.drafts(); len(d) != 2 {
		t.Fatalf("wave rest's first drafts, not approved, wait for a person: %v\n%s", d, st)
	}

	// v3 published, no run since: an approval names the rollout it
	// approves. Without a target it is refused naming both revisions; the
	// one the status shows can be named; the new one has not started.
	w.publishImage("nginx:1.29")
	code, _, errs = w.cmd("rollout", "approve", "app", "rest")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app: its upstream resolves to blueprints.app.v3, whose rollout has not started (the status shows blueprints.app.v2): pvctl run first, then approve its waves; or approve blueprints.app.v2's explicitly: pvctl rollout approve app WAVE@blueprints.app.v2") {
		t.Fatalf("v3 published: exit %d: %s", code, errs)
	}
	code, _, errs = w.cmd("rollout", "approve", "app", "rest@blueprints.app.v3")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app: the rollout of blueprints.app.v3 has not started (the status shows blueprints.app.v2): pvctl run first") {
		t.Fatalf("v3 named: exit %d: %s", code, errs)
	}
	code, _, errs = w.cmd("rollout", "approve", "app", "rest@blueprints.app.v9")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app has no rollout of blueprints.app.v9 (the status shows blueprints.app.v2; its upstream resolves to blueprints.app.v3)") {
		t.Fatalf("a revision that is not there: exit %d: %s", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", "approve", "app", "rest@blueprints.app.v2"), "rollout approve of wave rest at blueprints.app.v2: ")
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "target blueprints.app.v3 from blueprints.app.v2")
	contains(t, w.mustCmd(ExitOK, "rollout", "approve", "app"), "rollout approve of wave canary at blueprints.app.v3: ")
}

// Issue 43 #5 through pvctl: spreadBy takes a sized wave's children in
// turn from each region, where name order (fleet-00 to fleet-09, the
// first five in eu) put the whole 20% wave in eu.
func TestSpreadByLocally(t *testing.T) {
	w := rolloutWS(t)
	repos := readFile(t, filepath.Join(w.in, "repositories.yaml"))
	for i := 0; i < 10; i++ {
		region := "eu"
		if i >= 5 {
			region = "us"
		}
		name := fmt.Sprintf("fleet-%02d", i)
		repos = strings.Replace(repos, "  name: "+name+"\n  labels:\n", "  name: "+name+"\n  labels:\n    region: "+region+"\n", 1)
	}
	if strings.Count(repos, "region: ") != 10 {
		t.Fatalf("the repositories' labels were not set:\n%s", repos)
	}
	w.write("repositories.yaml", repos)
	set := readFile(t, filepath.Join(w.in, "app-set.yaml"))
	set = strings.Replace(set, "  rollout:\n", "  rollout:\n    spreadBy: region\n", 1)
	set = strings.Replace(set, "      size: 30%\n", "      size: 20%\n", 1)
	w.write("app-set.yaml", set)
	w.run(ExitOK)
	w.publishV2()
	w.run(ExitOK)
	var st pvs.RolloutStatus
	if err := json.Unmarshal([]byte(w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "json")), &st); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.Waves[1].Members, ","); got != "app-fleet-00-app,app-fleet-05-app" {
		t.Fatalf("wave early spread by region: %s", got)
	}
}

// Issue 57 #1 and #2, through pvctl run: the canary's cluster reports the
// revision failed (the health check's failed expression): the canary
// fails at once, well inside its progress deadline, and with onFailure:
// undo the rollout undoes itself, no person involved: the canary back at
// v1 (its draft approved by the person who approves every draft here),
// Paused RolledBack; it stays so run after run; rollout resume retries it
// once, from wave one.
func TestOnFailureUndoLocally(t *testing.T) {
	w := failingCanary(t, "    onFailure: undo\n")
	out := w.run(ExitStalled) // published, its health read HealthFailed, the rollout undone: one run
	contains(t, out, "RolledBack: undone on failure (spec.rollout.onFailure: undo): 1 failed child(ren), more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise): app-fleet-07-app: fleet-07.app.packagevariant-2 failed on the cluster: ClusterSync default/fleet-07 reports fleet-07.app.packagevariant-2 failed")
	contains(t, w.mustCmd(ExitOK, "events"), "rollout of blueprints.app.v2 undone on failure (1 failed, more than wave canary's error budget of")
	if d := w.approveDrafts(); len(d) != 1 || !strings.HasPrefix(d[0], "fleet-07.") {
		t.Fatalf("the undo's draft, the canary back to v1: %v", d)
	}
	for i := 0; i < 2; i++ {
		w.run(ExitStalled)
	}
	// No wave approval while the undo stands.
	code, _, errs := w.cmd("rollout", "approve", "app", "canary")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset app: the rollout of blueprints.app.v2 undid itself on failure (spec.rollout.onFailure: undo): a wave's approval is never given to an undone release; pvctl rollout resume retries it from wave one") {
		t.Fatalf("approve during the undo: exit %d: %s", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"), "upstream: blueprints app at app/v1")
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("undone on failure, yet drafts: %v", d)
	}
	// A person retries it: from wave one, the canary alone, once.
	contains(t, w.mustCmd(ExitOK, "rollout", "resume", "app"), "retried: blueprints.app.v2, undone on failure, rolls out again from wave one")
	out = w.run(ExitOK)
	if n := strings.Count(out, "created"); n != 1 || !strings.Contains(out, "fleet-07") {
		t.Fatalf("retried: want the canary's draft alone:\n%s", out)
	}
}

// failingCanary is examples/rollout with extra lines in spec.rollout, a
// health check whose failed expression the canary's cluster (fleet-07)
// meets at v2, v2 published and the canary's draft approved: the next run
// reads its health.
func failingCanary(t *testing.T, extra string) *ws {
	t.Helper()
	w := rolloutWS(t)
	set := readFile(t, filepath.Join(w.in, "app-set.yaml"))
	w.write("app-set.yaml", strings.Replace(set, "    errorBudget: 0\n", "", 1))
	w.rolloutSpec(extra + `    progressDeadlineSeconds: 3600
    health:
      apiVersion: example.com/v1
      kind: ClusterSync
      nameExpr: downstream.repo
      condition: has(object.status.applied) && object.status.applied == revision.ref
      failed: has(object.status.failed) && object.status.failed == revision.ref
`)
	w.write("syncs.yaml", "apiVersion: example.com/v1\nkind: ClusterSync\nmetadata:\n  name: fleet-07\nstatus:\n  applied: app/v1\n  failed: app/v2\n")
	w.run(ExitOK)
	w.publishV2()
	w.run(ExitOK)
	if d := w.approveDrafts(); len(d) != 1 {
		t.Fatalf("the canary's draft: %v", d)
	}
	return w
}

// Issue 62 #4: `pvctl __complete` answers for every rollout verb's
// arguments: the sets with a rollout, then the set's waves (approve) or
// its children not given yet (hold, release, skip, unskip); nothing past
// what a verb takes.
func TestRolloutCompletion(t *testing.T) {
	w := rolloutWS(t)
	verbs := []string{"status"}
	for _, c := range rolloutControls() {
		verbs = append(verbs, strings.Fields(c.use)[0])
	}
	for _, verb := range verbs {
		if got := w.complete("rollout", verb, ""); !slices.Equal(got, []string{"app"}) {
			t.Errorf("rollout %s: %v, want the set", verb, got)
		}
	}
	if got := w.complete("rollout", "approve", "app", ""); !slices.Equal(got, []string{"canary", "early", "rest"}) {
		t.Errorf("rollout approve app: %v, want its waves", got)
	}
	for _, verb := range []string{"hold", "release", "skip", "unskip"} {
		got := w.complete("rollout", verb, "app", "app-fleet-07-app", "app-fleet-0")
		if len(got) != 9 || slices.Contains(got, "app-fleet-07-app") || !slices.Contains(got, "app-fleet-00-app") {
			t.Errorf("rollout %s app app-fleet-07-app: %v, want the nine other children", verb, got)
		}
	}
	// Flag values: --prune=, --sync, wait --for=.
	if got := w.complete("run", "--prune="); !slices.Equal(got, []string{"true", "false", "all"}) {
		t.Errorf("run --prune: %v", got)
	}
	if got := w.complete("run", "--sync", "fleet-0"); len(got) != 10 || !slices.Contains(got, "fleet-07") {
		t.Errorf("run --sync fleet-0: %v, want the ten fleet repositories", got)
	}
	if got := w.complete("wait", "pvs/app", "--for", "condition=R"); !slices.Contains(got, "condition=Ready") || !slices.Contains(got, "condition=Reconciling=False") {
		t.Errorf("wait --for condition=R: %v", got)
	}
	for _, args := range [][]string{{"pause", "app", ""}, {"approve", "app", "canary", ""}, {"status", "app", ""}, {"hold", "nosuch", ""}} {
		if got := w.complete(append([]string{"rollout"}, args...)...); len(got) != 0 {
			t.Errorf("rollout %v: %v, want nothing", args, got)
		}
	}
}

// examples/rollout with errorBudget: 1 on the rollout: the canary's
// cluster reports v2 failed, and the canary, whose budget is 0 (a first
// wave's), pauses the rollout at once: run exits 4, its notes, the
// rollout's status (the wave's failed count) and an Event say it.
func TestFailedCanaryPausesLocally(t *testing.T) {
	w := failingCanary(t, "    errorBudget: 1\n")
	out := w.run(ExitStalled)
	contains(t, out, "ErrorBudgetExceeded: paused in wave canary: 1 failed child(ren), more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise): app-fleet-07-app",
		"wave canary Open (1/1 moved, 1 failed)")
	contains(t, w.mustCmd(ExitOK, "events"), "RolloutPaused")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "yaml"), "  failed: 1\n")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "1/1 moved, 0 done, 1 failed")
	w.run(ExitStalled) // and it stays paused, nothing more moves
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("a child moved past the failed canary: %v", d)
	}
}

// An approval without a target whose set's upstream cannot be read is
// refused, naming the error and how to name the rollout; with the target
// named it goes through.
func TestApproveWaveWhenTheUpstreamCannotBeRead(t *testing.T) {
	set := &pvsapi.PackageVariantSet{}
	set.Name = "app"
	set.Status.Rollout = &pvs.RolloutStatus{Target: pvs.RevisionRef{Name: "blueprints.app.v2"}, From: &pvs.RevisionRef{Name: "blueprints.app.v1"},
		Waves: []pvs.WaveStatus{{Name: "canary", State: pvs.WaveOpen, Members: []string{"c"}}}}
	_, _, err := approveWaveChange(map[string]string{}, nil, set, "", errors.New("connection refused"))
	if err == nil || err.Error() != "packagevariantset app: what its upstream resolves to could not be read (connection refused), so the rollout to approve is not known; name it: pvctl rollout approve app WAVE@blueprints.app.v2" {
		t.Fatalf("unread upstream: %v", err)
	}
	next, what, err := approveWaveChange(map[string]string{}, []string{"canary@blueprints.app.v2"}, set, "", errors.New("connection refused"))
	if err != nil || next[packagevariantset.RolloutApproveAnnotation] != "canary@blueprints.app.v2" || !strings.HasPrefix(what, "approve of wave canary at blueprints.app.v2:") {
		t.Fatalf("named: %v %v %q", next, err, what)
	}
}

// rollout approve against a cluster reads what the set's upstream resolves
// to from Porch's PackageRevisions, as the local side reads the
// repositories: v3 published and the status at v2's rollout, an approval
// without a target is refused naming both; WAVE@TARGET is written as the
// annotation the controller reads.
func TestApproveWaveAgainstACluster(t *testing.T) {
	scheme, err := pvapi.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	set := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "ops", Generation: 1},
		Spec: pvs.PackageVariantSetSpec{Upstream: &pvcore.Upstream{Repo: "blueprints", Package: "app"}, Rollout: &pvs.Rollout{Waves: []pvs.Wave{{Name: "all"}}}},
		Status: pvsapi.PackageVariantSetStatus{Rollout: &pvs.RolloutStatus{Target: pvs.RevisionRef{Name: "blueprints.app.v2", Workspace: "v2", Revision: 2},
			From: &pvs.RevisionRef{Name: "blueprints.app.v1"}, Phase: "Progressing",
			Waves: []pvs.WaveStatus{{Name: "all", State: "Open", Members: []string{"fleet-a"}}}}}}
	objs := []client.Object{set}
	for i := 1; i <= 3; i++ {
		pr := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("blueprints.app.v%d", i), Namespace: "ops"},
			Spec: porchapi.PackageRevisionSpec{RepositoryName: "blueprints", PackageName: "app", WorkspaceName: fmt.Sprintf("v%d", i), Revision: i,
				Lifecycle: porchapi.PackageRevisionLifecyclePublished}}
		objs = append(objs, pr)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(set).Build()
	old := ClusterClient
	ClusterClient = func(string, string) (client.Client, error) { return c, nil }
	defer func() { ClusterClient = old }()
	w := newWS(t)
	cl := []string{"--kubeconfig", "kc", "-n", "ops"}
	code, _, errs := w.cmd("rollout", append([]string{"approve", "fleet"}, cl...)...)
	if code != ExitNotReady || !strings.Contains(errs, "packagevariantset fleet: its upstream resolves to blueprints.app.v3, whose rollout has not started (the status shows blueprints.app.v2)") {
		t.Fatalf("v3 published: exit %d: %s", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "rollout", append([]string{"approve", "fleet", "all@blueprints.app.v2"}, cl...)...), "rollout approve of wave all at blueprints.app.v2")
	got := &pvsapi.PackageVariantSet{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ops", Name: "fleet"}, got); err != nil || got.Annotations["pvkit.dev/rollout-approve"] != "all@blueprints.app.v2" {
		t.Fatalf("annotations %v, %v", got.Annotations, err)
	}
}
