package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	sigsyaml "sigs.k8s.io/yaml"
)

// ws is a laptop workspace: a repositories directory and input files.
type ws struct {
	t     *testing.T
	repos string
	in    string
}

func newWS(t *testing.T) *ws {
	t.Helper()
	dir := t.TempDir()
	w := &ws{t: t, repos: filepath.Join(dir, "repos"), in: filepath.Join(dir, "in")}
	fntest.WriteTree(t, w.in, fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "local")))
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	return w
}

// cmd runs a command and returns its exit code, stdout and stderr.
func (w *ws) cmd(name string, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Command(context.Background(), name, append([]string{"--repos", w.repos}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func (w *ws) mustCmd(want int, name string, args ...string) string {
	w.t.Helper()
	code, out, errs := w.cmd(name, args...)
	if code != want {
		w.t.Fatalf("pvctl %s %v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, args, code, want, out, errs)
	}
	return out
}

func (w *ws) run(want int) string {
	w.t.Helper()
	return w.mustCmd(want, "run", "-o", "wide", "-f", w.in)
}

// store opens the repositories as they are on disk.
func (w *ws) store() *gitstore.Store {
	w.t.Helper()
	repos, err := gitstore.Discover(w.repos)
	if err != nil {
		w.t.Fatal(err)
	}
	s, err := gitstore.Open("default", repos)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

// revisions lists "<name> <lifecycle> <lock ref>" of every revision.
func (w *ws) revisions() []string {
	var out []string
	for _, r := range w.store().All("default") {
		ref := "-"
		if r.Lock != nil {
			ref = r.Lock.Ref
		}
		out = append(out, r.Name+" "+string(r.Lifecycle)+" "+ref)
	}
	sort.Strings(out)
	return out
}

func (w *ws) files(name string) map[string]string {
	w.t.Helper()
	res, err := w.store().GetResources(context.Background(), "default", name)
	if err != nil {
		w.t.Fatal(err)
	}
	return res.Files
}

// snapshot is every file under the repositories directory, by path: what
// "nothing written" and "zero writes" compare.
func (w *ws) snapshot() map[string]string {
	w.t.Helper()
	if _, err := os.Stat(w.repos); os.IsNotExist(err) {
		return nil
	}
	files := fntest.ReadTree(w.t, w.repos)
	delete(files, local.LockFile) // the writers' lock is no write to the repositories
	return files
}

func (w *ws) write(name, content string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.in, name), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *ws) remove(name string) {
	w.t.Helper()
	if err := os.Remove(filepath.Join(w.in, name)); err != nil {
		w.t.Fatal(err)
	}
}

func contains(t *testing.T, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
}

// The fleet example: a set fans the blueprint out to the two production
// repositories, a hand-written variant adds staging; each draft is cloned,
// specialised and injected; a second run changes nothing on disk.
func TestRunFleet(t *testing.T) {
	w := newWS(t)
	out := w.run(ExitOK)
	contains(t, out,
		"Changes (11):\n  created repository edge-useast1\n  created repository edge-uswest1\n  created repository core-euwest1\n"+
			"  created PackageVariant app-edge-useast1-app\n  created PackageVariant app-edge-uswest1-app\n"+
			"  created draft edge-useast1.app.packagevariant-1 (clone of blueprints.app.v1)\n"+
			"  updated the resources of edge-useast1.app.packagevariant-1\n",
		"PackageVariantSet  app ", "PackageVariant     app-edge-useast1-app  True   NoErrors    edge-useast1.app.packagevariant-1")
	want := []string{
		"blueprints.app.main Published -", // Porch's branch placeholder of the published package
		"blueprints.app.v1 Published -",
		"core-euwest1.app.packagevariant-1 Draft app/v1",
		"edge-useast1.app.packagevariant-1 Draft app/v1",
		"edge-uswest1.app.packagevariant-1 Draft app/v1",
	}
	if got := w.revisions(); !cmp.Equal(got, want) {
		t.Fatalf("revisions:\n%s", cmp.Diff(want, got))
	}
	east := w.files("edge-useast1.app.packagevariant-1")
	contains(t, east["package-context.yaml"], "region: us-east1", "tier: edge")
	contains(t, east["endpoints.yaml"], "db: db.us-east1.internal:5432", "kpt.dev/injected-resource: us-east1-endpoints")
	contains(t, east["Kptfile"], "name: PackageVariant.app-edge-useast1-app.set-ns.0", "namespace: app-edge", "ref: app/v1")
	contains(t, w.files("core-euwest1.app.packagevariant-1")["package-context.yaml"], "env: staging", "region: eu-west1")

	before := w.snapshot()
	out = w.run(ExitOK)
	contains(t, out, "No changes: every downstream package is up to date.")
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("a second run wrote to the repositories:\n%s", d)
	}
}

// Approving a draft and publishing a new blueprint revision: the next run
// upgrades the published downstream in a new draft, and upgrades in place
// the drafts that were never approved (rule: draft-upgrade).
func TestUpgradeAfterPublish(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "approve", "edge-useast1.app.packagevariant-1"), "approved edge-useast1.app.packagevariant-1: package app revision 1 in edge-useast1")
	v2 := filepath.Join(t.TempDir(), "app")
	files := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: nginx:1.28", 1)
	fntest.WriteTree(t, v2, files)
	contains(t, w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", v2), "published blueprints.app.v2: package app revision 2 in blueprints")
	out := w.run(ExitOK)
	// Two writes for the published one: the upgrade draft is created with
	// its mutation gate False, and the chain's run sets it True (nothing
	// else changes: the merge kept the variant's mutations). One write for
	// each unapproved draft: merge and chain together.
	contains(t, out, "Changes (4):\n  created draft edge-useast1.app.packagevariant-2 (upgrade of edge-useast1.app.packagevariant-1 to blueprints.app.v2)\n"+
		"  updated the resources of edge-useast1.app.packagevariant-2\n",
		"  upgraded edge-uswest1.app.packagevariant-1 in place from app/v1 to app/v2\n",
		"  upgraded core-euwest1.app.packagevariant-1 in place from app/v1 to app/v2\n",
		"app-edge-uswest1-app  True   NoErrors    edge-uswest1.app.packagevariant-1")
	for _, name := range []string{"edge-useast1.app.packagevariant-2", "edge-uswest1.app.packagevariant-1"} {
		up := w.files(name)
		contains(t, up["Kptfile"], "ref: app/v2", "set-ns.0")
		contains(t, up["deployment.yaml"], "image: nginx:1.28")
	}
	contains(t, w.files("edge-useast1.app.packagevariant-2")["package-context.yaml"], "region: us-east1")
	contains(t, w.files("edge-uswest1.app.packagevariant-1")["package-context.yaml"], "region: us-west1")
	// pvkit.dev/draft-upgrade: stall keeps Porch's behaviour.
	before := w.snapshot()
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "metadata:\n", "metadata:\n  annotations:\n    pvkit.dev/draft-upgrade: stall\n", 1))
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.28", "image: nginx:1.29", 1)
	fntest.WriteTree(t, v2, files)
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", v2)
	out = w.run(ExitStalled)
	contains(t, out, "app-staging           False  StaleDraft", "upgraded edge-uswest1.app.packagevariant-1 in place from app/v2 to app/v3")
	if strings.Contains(out, "core-euwest1.app.packagevariant-1 in place") || len(before) == 0 {
		t.Fatalf("a draft whose variant asks to stall was upgraded:\n%s", out)
	}
}

// A variant the files no longer give is deleted, and its deletion policy
// applies: the default deletes its draft; orphan keeps it.
func TestVariantRemoved(t *testing.T) {
	w := newWS(t)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "spec:\n", "spec:\n  deletionPolicy: orphan\n", 1))
	w.write("app-dev.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-dev\nspec:\n  upstream: {repo: blueprints, package: app}\n  downstream: {repo: core-euwest1, package: app-dev}\n")
	// app-dev injects nothing, so its required point stays empty: not ready.
	contains(t, w.run(ExitNotReady), "app-dev               False  ReadinessGate")
	w.remove("app-staging.yaml")
	w.remove("app-dev.yaml")
	// Without --prune nothing is removed: the run says what it would remove.
	before := w.snapshot()
	out := w.run(ExitNotReady)
	contains(t, out, "Not removed (2): run again with --prune to remove them:\n  PackageVariant app-dev\n  PackageVariant app-staging\n")
	contains(t, out, "No changes")
	if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
		t.Fatalf("a run without --prune removed something:\n%s", d)
	}
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune")
	// app-dev's draft goes; app-staging's stays, without its owner.
	contains(t, out, "Changes (4):\n  deleted PackageVariant app-dev\n  deleted PackageVariant app-staging\n"+
		"  deleted core-euwest1.app-dev.packagevariant-1\n  released core-euwest1.app.packagevariant-1 (Draft; no longer owned)\n")
	got := w.revisions()
	contains(t, strings.Join(got, "\n"), "core-euwest1.app.packagevariant-1 Draft app/v1")
	if strings.Contains(strings.Join(got, "\n"), "app-dev") {
		t.Fatalf("app-dev's draft stays: %v", got)
	}
	for _, r := range w.store().All("default") {
		if r.Name == "core-euwest1.app.packagevariant-1" && len(r.Owners) != 0 {
			t.Fatalf("an orphaned draft keeps its owner: %+v", r.Owners)
		}
	}
	if st := readFile(t, filepath.Join(w.repos, state.File)); strings.Contains(st, "app-staging") || strings.Contains(st, "app-dev") {
		t.Fatalf("deleted variants stay in the state:\n%s", st)
	}
}

// A repository that loses the label the set selects loses its child, and
// the child's draft goes with it. Without --prune the removal waits: the
// set says RemovalHeld (not an error), and the run exits 3, as the help
// says (issue 29 #5).
func TestSetTargetRemoved(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.write("repositories.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "repositories.yaml")), "    env: prod\n    region: us-west1", "    env: retired\n    region: us-west1", 1))
	out := w.run(ExitChanges)
	contains(t, out, "Not removed (1): run again with --prune to remove them:\n  PackageVariant app-edge-uswest1-app\n",
		"PackageVariantSet  app                   False  RemovalHeld",
		"the set no longer wants 1 PackageVariant (app-edge-uswest1-app): not removed: pvctl run removes only with --prune")
	if strings.Contains(out, "UnexpectedError") {
		t.Fatalf("a held removal is not an error:\n%s", out)
	}
	contains(t, w.mustCmd(ExitOK, "run", "--help"), "the run exits 3")
	contains(t, w.revisions()[0]+strings.Join(w.revisions(), "\n"), "edge-uswest1.app.packagevariant-1")
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune")
	contains(t, out, "Changes (2):\n  deleted PackageVariant app-edge-uswest1-app\n  deleted edge-uswest1.app.packagevariant-1\n")
	if strings.Contains(out, "PackageVariant     app-edge-uswest1-app") {
		t.Fatalf("the removed child is still listed:\n%s", out)
	}
}

// Editing a variant's spec moves its generation on and updates its draft in
// place.
func TestVariantEdited(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "region: eu-west1", "region: eu-west1\n      tier: canary", 1))
	out := w.run(ExitOK)
	contains(t, out, "Changes (1):\n  updated the resources of core-euwest1.app.packagevariant-1\n")
	contains(t, w.files("core-euwest1.app.packagevariant-1")["package-context.yaml"], "tier: canary")
	var st state.State
	if err := sigsyaml.Unmarshal([]byte(readFile(t, filepath.Join(w.repos, state.File))), &st); err != nil {
		t.Fatal(err)
	}
	for _, v := range st.Variants {
		if v.Name == "app-staging" && (v.Generation != 2 || v.Status.ObservedGeneration != 2) {
			t.Fatalf("app-staging: generation %d, observed %d; want 2, 2", v.Generation, v.Status.ObservedGeneration)
		}
	}
}

// An injected object that changes in the files updates the drafts that
// inject it.
func TestInjectedObjectChanged(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.write("cluster-objects.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "cluster-objects.yaml")), "db.us-east1.internal", "db2.us-east1.internal", 1))
	out := w.run(ExitOK)
	contains(t, out, "Changes (1):\n  updated the resources of edge-useast1.app.packagevariant-1\n")
	contains(t, w.files("edge-useast1.app.packagevariant-1")["endpoints.yaml"], "db: db2.us-east1.internal:5432")
}

// pvctl run reads only the default readable kinds: a variant that names a
// Secret is not ready, with the reason, and nothing of it is written.
func TestReadableKindsApplyToRun(t *testing.T) {
	w := newWS(t)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "  - kind: ConfigMap\n    name: eu-west1-endpoints\n", "  - kind: Secret\n    name: db-password\n", 1))
	out := w.run(ExitStalled)
	contains(t, out, "`spec.injectors[0]` names kind \"Secret\", a kind pvkit may not read (allowed: ConfigMap, Team.example.com)")
	// Its downstream, core-euwest1/app, gets no revision (the clone needs
	// the injector check to pass first).
	for _, r := range w.revisions() {
		if strings.HasPrefix(r, "core-euwest1.app.") {
			t.Fatalf("a refused variant wrote %s", r)
		}
	}
	if len(w.revisions()) < 3 {
		t.Fatalf("the other variants must still be reconciled: %v", w.revisions())
	}
}

// cmpIgnoreState leaves the state file out of a before/after comparison of
// the repositories directory (it records the objects' status).
var cmpIgnoreState = cmp.FilterPath(func(p cmp.Path) bool {
	if mi, ok := p.Last().(cmp.MapIndex); ok {
		return mi.Key().String() == state.File
	}
	return false
}, cmp.Ignore())

// pvctl plan (run --dry-run) prints every change a run would make, with
// --diff the package diffs, and writes nothing: the repositories directory,
// state file included, is byte-identical afterwards. Exit 1 when something
// would change, 0 when nothing would.
func TestPlanWritesNothing(t *testing.T) {
	w := newWS(t)
	before := w.snapshot()
	out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff")
	contains(t, out, "Plan (11 changes; dry run: nothing was written):\n  would create repository edge-useast1\n",
		"  would create PackageVariant app-edge-useast1-app\n", "would create draft core-euwest1.app.packagevariant-1 (clone of blueprints.app.v1)",
		"--- /dev/null\n+++ core-euwest1.app.packagevariant-1/package-context.yaml\n",
		"+  env: staging")
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("plan wrote to the repositories directory:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(w.repos, "edge-useast1.git")); !os.IsNotExist(err) {
		t.Fatalf("plan created a repository: %v", err)
	}
	w.run(ExitOK)
	before = w.snapshot()
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--dry-run")
	contains(t, out, "Plan: no changes (dry run: nothing was written).")
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "region: eu-west1", "region: eu-west1\n      tier: canary", 1))
	out = w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff")
	contains(t, out, "Plan (1 change; dry run: nothing was written):\n  would update the resources of core-euwest1.app.packagevariant-1\n", "+  tier: canary\n")
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("plan wrote to the repositories directory:\n%s", d)
	}
	if code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--diff"); code != ExitUsage || !strings.Contains(errs, "--diff goes with --dry-run") {
		t.Fatalf("--diff without --dry-run: exit %d, %q", code, errs)
	}
	// Issue 62 #1: a set whose targets' CEL fails changes nothing, and the
	// plan says so and exits 1, as run does (it said "no changes", exit 0).
	w.run(ExitOK)
	set := readFile(t, filepath.Join(w.in, "fleet-set.yaml"))
	w.write("fleet-set.yaml", strings.Replace(set, "valueExpr: repository.labels.region\n", "valueExpr: repository.labels.nosuchlabel\n", 1))
	code, out, errs := w.cmd("plan", "-f", w.in)
	if want := "pvctl plan: PackageVariantSet app would not be Ready: PartiallyReconciled: "; code != ExitNotReady || !strings.Contains(errs, want) ||
		!strings.Contains(errs, "`spec.targets[0].template.labelExprs[0].valueExpr`: no such key: nosuchlabel") {
		t.Fatalf("plan of a failing set: exit %d\n%s\n%s\nwant %d and %q", code, out, errs, ExitNotReady, want)
	}
	w.run(ExitNotReady)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 29 #5: a variant whose downstream is renamed gets its new package
// in the same run, as Porch makes it in the same reconcile; the old
// package's drafts wait for --prune (RemovalHeld, exit 3), then go.
func TestRenamedDownstreamCreatedAtOnce(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "package: app\n  packageContext", "package: app-renamed\n  packageContext", 1))
	if !strings.Contains(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "app-renamed") {
		t.Fatal("the rename did not apply: the test tests nothing")
	}
	out := w.run(ExitChanges)
	contains(t, out, "created draft core-euwest1.app-renamed.packagevariant-1",
		"PackageVariant     app-staging           False  RemovalHeld",
		"the revisions of the previous downstream are kept (core-euwest1.app.packagevariant-1): not removed: pvctl run removes only with --prune",
		"Not removed (1): run again with --prune to remove them:\n  package revision core-euwest1.app.packagevariant-1\n")
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune")
	contains(t, out, "deleted core-euwest1.app.packagevariant-1", "app-staging           True   NoErrors")
}

// Issue 29 #5: plan --diff of an edit draft is the diff against what it
// changes (its package's published revision), a few lines, not the whole
// package as new.
func TestPlanDiffOfAnEdit(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "region: eu-west1", "region: eu-west1\n      tier: canary", 1))
	out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff")
	contains(t, out, "would create draft core-euwest1.app.packagevariant-2 (edit of core-euwest1.app.packagevariant-1)",
		"diff --git core-euwest1.app.packagevariant-1/package-context.yaml core-euwest1.app.packagevariant-2/package-context.yaml\n",
		"--- core-euwest1.app.packagevariant-1/package-context.yaml\n+++ core-euwest1.app.packagevariant-2/package-context.yaml\n",
		"+  tier: canary\n")
	if strings.Contains(out, "new file mode") || strings.Count(out, "\n+") > 20 {
		t.Fatalf("the edit is diffed as a new package:\n%s", out)
	}
}

// Issue 31 #1: a set's template prepends set-namespace; the blueprint's own
// set-namespace runs after it and the package ends in the blueprint's
// namespace (kpt and Porch semantics). pvctl says so: plan and run print a
// warning naming both entries, the variants carry the BlueprintOverrides
// condition and a Warning Event, while Ready.
func TestBlueprintOverridesVariantWarned(t *testing.T) {
	w := newWS(t)
	bp := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	bp["Kptfile"] = strings.Replace(bp["Kptfile"], "  mutators:\n", "  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n      configMap:\n        namespace: webapp\n", 1)
	if !strings.Contains(bp["Kptfile"], "namespace: webapp") {
		t.Fatalf("examples/app's Kptfile has no pipeline.mutators:\n%s", bp["Kptfile"])
	}
	dir := filepath.Join(t.TempDir(), "app")
	fntest.WriteTree(t, dir, bp)
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", dir)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "spec:\n", "spec:\n  pipeline:\n    mutators:\n    - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n      configMap:\n        namespace: webapp-prod\n", 1))
	want := "the blueprint's own set-namespace (`pipeline.mutators[1]`) runs after the variant's (`pipeline.mutators[0]`"
	_, _, errs := w.cmd("plan", "-f", w.in)
	contains(t, errs, "warning: core-euwest1.app.packagevariant-1: "+want)
	code, out, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	contains(t, errs, "warning: core-euwest1.app.packagevariant-1: "+want)
	contains(t, out, "app-staging           True")
	st := readFile(t, filepath.Join(w.repos, "pvctl-state.yaml"))
	contains(t, st, "type: BlueprintOverrides", "reason: FunctionRunsAgain")
	contains(t, w.mustCmd(ExitOK, "events"), "BlueprintOverrides")
	_ = code
}

// rule floating-versions, through pvctl: a variant on semver "1" over a
// catalog's tags takes v1.1.0, not v2.0.0, and plan and run say so.
func TestSemverLocally(t *testing.T) {
	w := newWS(t)
	tag := func(name, at string) {
		t.Helper()
		if out, err := exec.Command("git", "--git-dir", filepath.Join(w.repos, "blueprints.git"), "tag", name, at).CombinedOutput(); err != nil {
			t.Fatalf("git tag: %v: %s", err, out)
		}
	}
	tag("app/v1.0.0", "app/v1")
	w.write("app-semver.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-semver\nspec:\n"+
		"  upstream: {repo: blueprints, package: app, semver: \"1\"}\n  downstream: {repo: core-euwest1, package: app-semver}\n"+
		"  injectors:\n  - kind: ConfigMap\n    name: eu-west1-endpoints\n")
	out := w.run(ExitOK)
	contains(t, out, "created draft core-euwest1.app-semver.packagevariant-1 (clone of blueprints.app.v1.0.0)",
		"Notes:\n  PackageVariant app-semver follows semver \"1\" of blueprints/app: blueprints.app.v1.0.0 (v1.0.0)\n")
	w.publishV2()
	tag("app/v1.1.0", "app/v2")
	files := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: nginx:2.0", 1)
	v3 := filepath.Join(t.TempDir(), "app")
	fntest.WriteTree(t, v3, files)
	// Issue 62 #7: publish tags a version itself (git tag above is the
	// same thing by hand); bad or taken tags are refused, named.
	contains(t, w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", "--tag", "v2.0.0", v3),
		"published blueprints.app.v3", "tagged blueprints.app.v3 as app/v2.0.0 (blueprints.app.v2.0.0)")
	for _, c := range []struct{ tag, want string }{
		{"v4", `--tag "v4" is not a version such as v1.4.2`},
		{"v2.0.0", "tag app/v2.0.0: already exists in repository blueprints"},
	} {
		if code, _, errs := w.cmd("publish", "--repo", "blueprints", "--package", "app", "--tag", c.tag, v3); code == ExitOK || !strings.Contains(errs, c.want) {
			t.Errorf("publish --tag %s: exit %d, %q; want %q", c.tag, code, errs, c.want)
		}
	}
	out = w.mustCmd(ExitChanges, "plan", "-f", w.in)
	contains(t, out, "would upgrade core-euwest1.app-semver.packagevariant-1 in place from app/v1.0.0 to app/v1.1.0",
		"PackageVariant app-semver follows semver \"1\" of blueprints/app: blueprints.app.v1.1.0 (v1.1.0); not taken, outside the range: v2.0.0")
	out = w.run(ExitOK)
	contains(t, out, "upgraded core-euwest1.app-semver.packagevariant-1 in place from app/v1.0.0 to app/v1.1.0")
	contains(t, w.files("core-euwest1.app-semver.packagevariant-1")["deployment.yaml"], "image: nginx:1.28")
	out = w.mustCmd(ExitOK, "run", "-f", w.in, "-o", "json")
	contains(t, out, `"notes": [`, `not taken, outside the range: v2.0.0`)
}
