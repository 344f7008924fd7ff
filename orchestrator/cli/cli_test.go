package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
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
	return w.mustCmd(want, "run", "-f", w.in)
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
	return fntest.ReadTree(w.t, w.repos)
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
// upgrades the published downstream in a new draft; the drafts that were
// never approved are reported stale (exit 1), not rewritten.
func TestUpgradeAfterPublish(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "approve", "edge-useast1.app.packagevariant-1"), "approved edge-useast1.app.packagevariant-1: package app revision 1 in edge-useast1")
	v2 := filepath.Join(t.TempDir(), "app")
	files := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: nginx:1.28", 1)
	fntest.WriteTree(t, v2, files)
	contains(t, w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", v2), "published blueprints.app.v2: package app revision 2 in blueprints")
	out := w.run(ExitStalled)
	// Two writes: the upgrade draft is created with its mutation gate False,
	// and the chain's run sets it True (nothing else changes: the merge kept
	// the variant's mutations).
	contains(t, out, "Changes (2):\n  created draft edge-useast1.app.packagevariant-2 (upgrade of edge-useast1.app.packagevariant-1 to blueprints.app.v2)\n"+
		"  updated the resources of edge-useast1.app.packagevariant-2\n",
		"app-edge-uswest1-app  False  StaleDraft")
	up := w.files("edge-useast1.app.packagevariant-2")
	contains(t, up["Kptfile"], "ref: app/v2", "name: PackageVariant.app-edge-useast1-app.set-ns.0")
	contains(t, up["deployment.yaml"], "image: nginx:1.28")
	contains(t, up["package-context.yaml"], "region: us-east1")
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
	out = w.mustCmd(ExitOK, "run", "-f", w.in, "--prune")
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
// the child's draft goes with it.
func TestSetTargetRemoved(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.write("repositories.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "repositories.yaml")), "    env: prod\n    region: us-west1", "    env: retired\n    region: us-west1", 1))
	out := w.run(ExitNotReady)
	contains(t, out, "Not removed (1): run again with --prune to remove them:\n  PackageVariant app-edge-uswest1-app\n")
	contains(t, w.revisions()[0]+strings.Join(w.revisions(), "\n"), "edge-uswest1.app.packagevariant-1")
	out = w.mustCmd(ExitOK, "run", "-f", w.in, "--prune")
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

// Publishing never writes outside --repos, never follows a link, and never
// lets one package overlap another on main.
func TestPublishSafety(t *testing.T) {
	w := newWS(t)
	parent := filepath.Dir(w.repos)
	before, _ := os.ReadDir(parent)
	w.cmd("publish", "--repo", "../evil", "--package", "x", w.in)
	if after, _ := os.ReadDir(parent); len(after) != len(before) {
		t.Fatalf("publish --repo ../evil created something beside --repos: %v -> %v", before, after)
	}
	for _, c := range []struct {
		name  string
		setup func(dir string)
		want  string
	}{
		{"symlink", func(dir string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.yaml")); err != nil {
				t.Fatal(err)
			}
		}, "passwd.yaml: is a symbolic link; pvctl copies regular files only"},
		{"file named .git", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".git: a file named .git cannot be published"},
		// Issue 27 #6: what git refuses on HFS+ and NTFS.
		{"HFS+ .git look-alike", func(dir string) {
			if err := os.MkdirAll(filepath.Join(dir, ".gi\u200ct"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".gi\u200ct", "config"), []byte("[core]\n\tfsmonitor = touch /tmp/pwned\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".gi\u200ct/config: file path must not have a segment git reads as its own directory"},
		{"NTFS .git stream", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, ".git::$INDEX_ALLOCATION"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, ".git::$INDEX_ALLOCATION: file path must not have a segment git reads as its own directory"},
		{".gitmodules", func(dir string) {
			if err := os.WriteFile(filepath.Join(dir, "gitmod~1"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "gitmod~1: file path must not have a segment git reads as its .gitmodules"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "Kptfile"), []byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c.setup(dir)
			snap := w.snapshot()
			code, _, errs := w.cmd("publish", "--repo", "blueprints", "--package", "x", dir)
			if code != ExitUsage || !strings.Contains(errs, filepath.Join(dir, c.want)) {
				t.Fatalf("exit %d, %q; want exit 2 and %q", code, errs, c.want)
			}
			if d := cmp.Diff(snap, w.snapshot()); d != "" {
				t.Fatalf("a refused publish wrote:\n%s", d)
			}
		})
	}
	// blueprints/app is published (newWS): a package inside it, or one
	// containing it, is refused and main is left alone.
	for _, c := range []struct{ pkg, want string }{
		{"app/sub", `package "app/sub" would be nested inside the published package "app"`},
	} {
		snap := w.snapshot()
		code, _, errs := w.cmd("publish", "--repo", "blueprints", "--package", c.pkg, filepath.Join(fntest.RepoRoot(), "examples", "app"))
		if code != ExitNotReady || !strings.Contains(errs, c.want) {
			t.Fatalf("publish %s: exit %d, %q; want %q", c.pkg, code, errs, c.want)
		}
		if d := cmp.Diff(snap, w.snapshot()); d != "" {
			t.Fatalf("a refused publish wrote:\n%s", d)
		}
	}
	w.mustCmd(ExitOK, "publish", "--repo", "other", "--package", "team/app", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	code, _, errs := w.cmd("publish", "--repo", "other", "--package", "team", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	if code != ExitNotReady || !strings.Contains(errs, `package "team" would contain the published package "team/app"`) {
		t.Fatalf("publish team: exit %d, %q", code, errs)
	}
}

// A variant whose downstream package would be a path outside its
// repository is invalid: it stalls, and nothing of it is written.
func TestVariantPackagePathValidated(t *testing.T) {
	w := newWS(t)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "    repo: core-euwest1\n    package: app\n", "    repo: core-euwest1\n    package: ../../../tmp/pwn\n", 1))
	out := w.run(ExitStalled)
	contains(t, out, "`spec.downstream.package` must not have a \"..\" segment, found \"../../../tmp/pwn\"")
	for _, r := range w.revisions() {
		if strings.Contains(r, "pwn") {
			t.Fatalf("an invalid variant wrote %s", r)
		}
	}
}

// A Repository named ../../x creates nothing outside --repos.
func TestRepositoryNameNeverAPath(t *testing.T) {
	w := newWS(t)
	w.write("evil.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ../../x\n")
	parent := filepath.Dir(w.repos)
	before, _ := os.ReadDir(parent)
	code, _, errs := w.cmd("run", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, `Repository "../../x": `+"`metadata.name`"+` must be a DNS-1123 subdomain`) {
		t.Fatalf("exit %d, %q", code, errs)
	}
	if after, _ := os.ReadDir(parent); len(after) != len(before) {
		t.Fatalf("created beside --repos: %v -> %v", before, after)
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

// Everyday mistakes delete nothing: no -f is a usage error; a typo in a kind
// of Porch's groups is an input error; a selector typo holds its removals
// back without --prune, and --prune keeps the mass-deletion guard.
func TestMistakesDeleteNothing(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	before := w.snapshot()
	code, _, errs := w.cmd("run")
	if code != ExitUsage || !strings.Contains(errs, "pvctl run: run needs -f") {
		t.Fatalf("run without -f: exit %d, %q", code, errs)
	}
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "kind: PackageVariant\n", "kind: PackageVarient\n", 1))
	code, _, errs = w.cmd("run", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, `PackageVarient "app-staging": config.porch.kpt.dev/v1alpha1 has no kind PackageVarient`) {
		t.Fatalf("kind typo: exit %d, %q", code, errs)
	}
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "kind: PackageVarient\n", "kind: PackageVariant\n", 1))
	w.write("fleet-set.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "fleet-set.yaml")), "env: prod", "env: prd", 1))
	// Every child of the set would go: the mass-deletion guard holds, with
	// or without --prune.
	for _, args := range [][]string{{"-f", w.in}, {"-f", w.in, "--prune"}} {
		out := w.mustCmd(ExitStalled, "run", args...)
		contains(t, out, "MassDeletion")
		contains(t, out, "the set would remove 2 of its 2 PackageVariants (more than half); none was removed")
		if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
			t.Fatalf("pvctl run %v removed something:\n%s", args, d)
		}
	}
	out := w.mustCmd(ExitOK, "run", "-f", w.in, "--prune=all")
	contains(t, out, "deleted edge-useast1.app.packagevariant-1")
}

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
		"+++ b/core-euwest1.app.packagevariant-1/package-context.yaml\n",
		"+  env: staging")
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("plan wrote to the repositories directory:\n%s", d)
	}
	if _, err := os.Stat(filepath.Join(w.repos, "edge-useast1.git")); !os.IsNotExist(err) {
		t.Fatalf("plan created a repository: %v", err)
	}
	w.run(ExitOK)
	before = w.snapshot()
	out = w.mustCmd(ExitOK, "run", "-f", w.in, "--dry-run")
	contains(t, out, "Plan: no changes (dry run: nothing was written).")
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "region: eu-west1", "region: eu-west1\n      tier: canary", 1))
	out = w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff")
	contains(t, out, "Plan (1 change; dry run: nothing was written):\n  would update the resources of core-euwest1.app.packagevariant-1\n", "+  tier: canary\n")
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("plan wrote to the repositories directory:\n%s", d)
	}
	if code, _, errs := w.cmd("run", "-f", w.in, "--diff"); code != ExitUsage || !strings.Contains(errs, "--diff goes with --dry-run") {
		t.Fatalf("--diff without --dry-run: exit %d, %q", code, errs)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Bad input: a message naming file, object and field; exit 2; nothing
// written.
func TestInputErrors(t *testing.T) {
	for _, c := range []struct {
		name, file, content, want string
	}{
		{"unparsable", "bad.yaml", "a: [\n", "bad.yaml: cannot parse: "},
		{"no kind", "bad.yaml", "apiVersion: v1\nmetadata:\n  name: x\n", "bad.yaml: object 0: `apiVersion` and `kind` are required"},
		{"no name", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\n", "bad.yaml: ConfigMap 0 in the file: `metadata.name` is required"},
		{"duplicate", "zz.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: us-east1-endpoints\n", `zz.yaml: ConfigMap "us-east1-endpoints": defined again (first in `},
		{"namespace", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\n  namespace: other\n",
			"bad.yaml: PackageVariant \"x\": `metadata.namespace` is \"other\"; pvctl run serves one namespace, \"default\" (--namespace)"},
		{"unknown field", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n  upstrem: {}\n",
			"bad.yaml: PackageVariant \"x\": `spec.upstrem` is not a field of PackageVariant; it is ignored"},
		{"wrong type", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: x\nspec:\n  injectors: {}\n",
			"bad.yaml: PackageVariant \"x\": `spec.injectors` must be a list, found a map"},
		{"repository directory", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  type: git\n  git:\n    repo: x\n    directory: pkgs\n",
			"bad.yaml: Repository \"r\": `spec.git.directory` is \"pkgs\"; pvctl run keeps packages at the repository root"},
		{"alias bomb", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" +
			"  l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]\n  l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\n" +
			"  l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\n  l4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]\n" +
			"  l5: &l5 [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]\n  l6: &l6 [*l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5]\n" +
			"  l7: &l7 [*l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6]\n",
			"bad.yaml: object 0: its YAML aliases expand its 609 bytes to more than 71626"},
		// Issue 18 #5: few nodes, many bytes.
		{"scalar alias bomb", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  a: &a " + strings.Repeat("x", 10_000) +
			"\n  b: &b [" + strings.Repeat("*a, ", 99) + "*a]\n  c: [" + strings.Repeat("*b, ", 99) + "*b]\n",
			"bad.yaml: object 0: its YAML aliases expand its 11115 bytes to more than 176686"},
		{"mistyped ConfigMap", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  x: 1\n  y: [a]\n",
			"bad.yaml: ConfigMap \"x\": `data.x` must be a string, found a number"},
		{"invalid name", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Bad_Name\n",
			"bad.yaml: ConfigMap \"Bad_Name\": `metadata.name` must be a DNS-1123 subdomain"},
		{"Repository name", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: ..x\n",
			"bad.yaml: Repository \"..x\": `metadata.name` must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found \"..x\""},
		{"label key and value, annotation key", "bad.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {\"a b\": ok, env: \"no spaces\"}\n  annotations: {\"/x\": v}\n",
			"bad.yaml: ConfigMap \"x\": `metadata.labels` key must be a qualified name"},
		{"repository type", "bad.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\nspec:\n  type: oci\n",
			"bad.yaml: Repository \"r\": `spec.type` is \"oci\"; pvctl run serves git repositories"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWS(t)
			w.write(c.file, c.content)
			before := w.snapshot()
			code, out, errs := w.cmd("run", "-f", w.in)
			if code != ExitUsage || out != "" || !strings.HasPrefix(errs, "pvctl run: ") || !strings.Contains(errs, filepath.Join(w.in, c.want)) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 2 and %q", code, out, errs, c.want)
			}
			if d := cmp.Diff(before, w.snapshot()); d != "" {
				t.Fatalf("bad input wrote to the repositories:\n%s", d)
			}
		})
	}
}

func TestCommandErrors(t *testing.T) {
	w := newWS(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-o", "xml"}, ExitUsage, `pvctl run: -o must be table, yaml or json, not "xml"`},
		{[]string{"run", "--prune=some", "-f", w.in}, ExitUsage, `pvctl run: invalid argument "some" for "--prune" flag: --prune takes true, all or false, not "some"`},
		{[]string{"get", "-o", "xml"}, ExitUsage, `pvctl get: -o must be table, wide, yaml, json or name, not "xml"`},
		{[]string{"diff", "blueprints.app.v1", "--against", "x"}, ExitUsage, `pvctl diff: --against must be upstream or published, not "x"`},
		{[]string{"run", "extra"}, ExitUsage, `pvctl run: unexpected arguments ["extra"] (files go after -f)`},
		{[]string{"run", "-f", "/does/not/exist"}, ExitUsage, "pvctl run: stat /does/not/exist: no such file or directory"},
		{[]string{"publish", "--repo", "r"}, ExitUsage, "pvctl publish: publish needs --repo, --package and one directory"},
		{[]string{"publish", "--repo", "r", "--package", "../x", w.in}, ExitUsage, `pvctl publish: --package must not have a ".." segment, found "../x"`},
		{[]string{"publish", "--repo", "../evil", "--package", "x", w.in}, ExitUsage, `pvctl publish: --repo must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found "../evil"`},
		{[]string{"publish", "--repo", "r", "--package", "/abs", w.in}, ExitUsage, `pvctl publish: --package must be a relative path, found "/abs"`},
		{[]string{"approve"}, ExitUsage, "pvctl approve: approve needs the names of the package revisions"},
		{[]string{"approve", "nope"}, ExitNotReady, "pvctl approve: package revision nope: not found (pvctl get lists them)"},
		{[]string{"frobnicate"}, ExitUsage, `pvctl: unknown command "frobnicate"`},
	} {
		code, _, errs := w.cmd(c.args[0], c.args[1:]...)
		if code != c.code || !strings.HasPrefix(errs, c.want) {
			t.Errorf("pvctl %v: exit %d, stderr %q; want exit %d and %q", c.args, code, errs, c.code, c.want)
		}
	}
	var out, errb bytes.Buffer
	if code := Command(context.Background(), "get", []string{"--repos", filepath.Join(t.TempDir(), "none")}, &out, &errb); code != ExitNotReady ||
		!strings.Contains(errb.String(), "no repositories directory") {
		t.Errorf("get on a missing directory: exit %d, %q", code, errb.String())
	}
	// A corrupt state file is an input problem, reported before any write.
	if err := os.WriteFile(filepath.Join(w.repos, state.File), []byte("packageVariants: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := w.cmd("run", "-f", w.in)
	if code != ExitNotReady || !strings.Contains(errs, state.File+": ") || !strings.Contains(errs, "delete it to start from no variants") {
		t.Errorf("corrupt state: exit %d, %q", code, errs)
	}
}

func TestGet(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	out := w.mustCmd(ExitOK, "get")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "NAME ") {
		t.Fatalf("get:\n%s", out)
	}
	contains(t, out, "blueprints.app.v1", "edge-useast1.app.packagevariant-1", "blueprints.app.main")
	contains(t, w.mustCmd(ExitOK, "get", "-o", "wide"), "blueprints:app/v1", "PackageVariant/app-staging")
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if f[0] == "blueprints.app.v1" && (f[4] != "true" || f[5] != string(store.Published)) {
			t.Errorf("blueprints.app.v1 must be the latest published revision: %q", l)
		}
		if f[0] == "blueprints.app.main" && (f[2] != "main" || f[3] != "-1" || f[4] != "false" || f[5] != string(store.Published)) {
			t.Errorf("blueprints.app.main must be Porch's placeholder, revision -1, never latest: %q", l)
		}
	}
}

// get filters and prints as porchctl does; -o json parses as Porch's
// PackageRevisionList and round-trips.
func TestGetOutputs(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	if out := w.mustCmd(ExitOK, "get", "--repo", "edge-useast1", "-o", "name"); out != "packagerevision/edge-useast1.app.packagevariant-1\n" {
		t.Fatalf("--repo -o name: %q", out)
	}
	if out := w.mustCmd(ExitOK, "get", "--package", "app", "--workspace", "v1", "-o", "name"); out != "packagerevision/blueprints.app.v1\n" {
		t.Fatalf("--package --workspace: %q", out)
	}
	out := w.mustCmd(ExitOK, "get", "-o", "json")
	var list porchapi.PackageRevisionList
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 5 || list.Items[0].Name != "blueprints.app.main" || list.Items[0].Spec.Revision != -1 ||
		list.Items[1].Name != "blueprints.app.v1" || list.Items[1].Labels[porchapi.LatestPackageRevisionKey] != "true" ||
		list.Items[2].Status.UpstreamLock == nil || list.Items[2].OwnerReferences[0].Kind != "PackageVariant" {
		t.Fatalf("get -o json:\n%s", out)
	}
	again, err := json.MarshalIndent(list, "", "  ")
	if err != nil || string(again)+"\n" != out {
		t.Fatalf("-o json does not round-trip:\n%s\n----\n%s", out, again)
	}
	var fromYAML porchapi.PackageRevisionList
	if err := sigsyaml.UnmarshalStrict([]byte(w.mustCmd(ExitOK, "get", "-o", "yaml")), &fromYAML); err != nil || len(fromYAML.Items) != 5 {
		t.Fatalf("-o yaml: %v", err)
	}
	if code, _, errs := w.cmd("get", "nope"); code != ExitNotReady || !strings.Contains(errs, "package revision nope: not found") {
		t.Fatalf("get nope: %d %q", code, errs)
	}
}

// The lifecycle verbs work on the git store as porchctl's do; approve
// refuses a revision whose readiness gate is not True, naming it.
func TestLifecycle(t *testing.T) {
	w := newWS(t)
	// No cluster object for the required endpoints point: its gate is False.
	w.write("cluster-objects.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "cluster-objects.yaml")), "name: us-east1-endpoints", "name: other-endpoints", 1))
	out := w.run(ExitNotReady)
	contains(t, out, "app-edge-useast1-app  False  ReadinessGate", `readiness gate "config.injection.ConfigMap.endpoints" is False`)
	const east, west = "edge-useast1.app.packagevariant-1", "edge-uswest1.app.packagevariant-1"
	code, _, errs := w.cmd("approve", east)
	if code != ExitNotReady || !strings.Contains(errs, "pvctl approve: package revision "+east+` is not ready: readiness gate "config.injection.ConfigMap.endpoints" is False (NoResourceSelected: `) {
		t.Fatalf("approve with a False gate: exit %d, %q", code, errs)
	}
	if !strings.Contains(strings.Join(w.revisions(), "\n"), east+" Draft") {
		t.Fatalf("a refused approval changed the draft: %v", w.revisions())
	}
	contains(t, w.mustCmd(ExitOK, "propose", west), "proposed "+west)
	contains(t, w.mustCmd(ExitOK, "reject", west), "rejected "+west+" (Draft again)")
	contains(t, w.mustCmd(ExitOK, "approve", west), "approved "+west+": package app revision 1 in edge-uswest1")
	if code, _, errs := w.cmd("del", west); code != ExitNotReady || !strings.Contains(errs, "is Published: propose its deletion first (pvctl propose-delete "+west+")") {
		t.Fatalf("del of a published revision: %d %q", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "propose-delete", west), "proposed the deletion of "+west)
	contains(t, strings.Join(w.revisions(), "\n"), west+" DeletionProposed")
	contains(t, w.mustCmd(ExitOK, "reject", west), "rejected the deletion of "+west+" (Published again)")
	contains(t, w.mustCmd(ExitOK, "propose-delete", west), "proposed the deletion of "+west)
	contains(t, w.mustCmd(ExitOK, "del", west), "deleted "+west)
	contains(t, w.mustCmd(ExitOK, "del", east), "deleted "+east)
	// As in Porch, deleting the tagged revision leaves the package on main,
	// as its branch placeholder; deleting that removes it from main.
	const westMain = "edge-uswest1.app.main"
	contains(t, strings.Join(w.revisions(), "\n"), westMain+" Published")
	contains(t, w.mustCmd(ExitOK, "propose-delete", westMain), "proposed the deletion of "+westMain)
	contains(t, strings.Join(w.revisions(), "\n"), westMain+" DeletionProposed")
	contains(t, w.mustCmd(ExitOK, "del", westMain), "deleted "+westMain)
	for _, r := range w.revisions() {
		if strings.HasPrefix(r, "edge-us") {
			t.Fatalf("deleted revisions remain: %v", w.revisions())
		}
	}
	if ls := w.gitOut("edge-uswest1", "", "ls-tree", "main"); ls != "" {
		t.Fatalf("main still holds: %s", ls)
	}
	if code, _, errs := w.cmd("propose", "blueprints.app.v1"); code != ExitNotReady || !strings.Contains(errs, "is Published; only a Draft can be proposed") {
		t.Fatalf("propose published: %d %q", code, errs)
	}
}

// diff shows what a variant changed in its upstream; pull writes a
// revision's files.
func TestDiffAndPull(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const rev = "core-euwest1.app.packagevariant-1"
	out := w.mustCmd(ExitNotReady, "diff", rev) // differences: exit 1, as kubectl diff
	contains(t, out, "# blueprints.app.v1 -> "+rev+"\n", "+  env: staging")
	if code, _, errs := w.cmd("diff", rev, "--against", "published"); code != ExitNotReady || !strings.Contains(errs, "has no other published revision") {
		t.Fatalf("diff --against published: %d %q", code, errs)
	}
	dir := filepath.Join(t.TempDir(), "app")
	contains(t, w.mustCmd(ExitOK, "pull", rev, dir), "pulled "+rev+" into "+dir)
	if d := cmp.Diff(w.files(rev), fntest.ReadTree(t, dir)); d != "" {
		t.Fatalf("pulled files differ:\n%s", d)
	}
	if code, _, errs := w.cmd("pull", rev, dir); code != ExitUsage || !strings.Contains(errs, "is not empty") {
		t.Fatalf("pull into a non-empty directory: %d %q", code, errs)
	}
	// pull NAME - writes a ResourceList to standard output, as porchctl does.
	out = w.mustCmd(ExitOK, "pull", rev, "-")
	contains(t, out, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n", "internal.config.kubernetes.io/path: 'package-context.yaml'", "env: staging")
	if _, err := os.Stat("-"); !os.IsNotExist(err) {
		t.Fatal("pull NAME - created a directory named -")
	}
}

// Every command has --help with examples (exit 0), and completion scripts
// exist for the usual shells and complete revision names.
func TestHelpAndCompletion(t *testing.T) {
	w := newWS(t)
	for _, c := range []string{"run", "plan", "get", "publish", "propose", "approve", "reject", "del", "propose-delete", "diff", "pull"} {
		code, out, _ := w.cmd(c, "--help")
		if code != ExitOK || !strings.Contains(out, "Usage:") || !strings.Contains(out, "Examples:") || !strings.Contains(out, "-n, --namespace") {
			t.Errorf("pvctl %s --help: exit %d\n%s", c, code, out)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if code, out, _ := w.cmd("completion", sh); code != ExitOK || !strings.Contains(out, "pvctl") {
			t.Errorf("completion %s: exit %d", sh, code)
		}
	}
	code, out, _ := w.cmd("__complete", "approve", "blue")
	if code != ExitOK || !strings.Contains(out, "blueprints.app.v1\n") {
		t.Fatalf("completing a revision name: exit %d\n%s", code, out)
	}
}

// -f - reads standard input; a run prints each change on stderr as it
// happens; a set's table row names each target failure.
func TestStdinProgressAndTargetFailures(t *testing.T) {
	w := newWS(t)
	set := readFile(t, filepath.Join(w.in, "fleet-set.yaml"))
	set = strings.Replace(set, "valueExpr: repository.labels.region\n", "valueExpr: repository.labels.zone\n", 1)
	var stdin strings.Builder
	for _, f := range []string{"repositories.yaml", "cluster-objects.yaml"} {
		stdin.WriteString(readFile(t, filepath.Join(w.in, f)) + "\n---\n")
	}
	stdin.WriteString(set)
	var out, errb bytes.Buffer
	root := NewRoot(context.Background(), strings.NewReader(stdin.String()), &out, &errb)
	root.SetArgs([]string{"run", "-f", "-", "--repos", w.repos})
	code := Execute(root, &errb)
	if code != ExitNotReady {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	contains(t, out.String(), "PackageVariantSet  app", "2 target entries could not be computed",
		"`spec.targets[0].repositorySelector` (Repository \"edge-useast1\", package \"app\"): `spec.targets[0].template.labelExprs[0].valueExpr`: no such key: zone")
	contains(t, errb.String(), "pvctl: created repository edge-useast1\n")
}

func TestUIDIsStable(t *testing.T) {
	a, b := local.UID("PackageVariant", "default", "x"), local.UID("PackageVariant", "default", "y")
	if a != local.UID("PackageVariant", "default", "x") || a == b || len(a) != 36 {
		t.Fatalf("UID: %s %s", a, b)
	}
}

// -o yaml prints the sets and variants with their status.
func TestOutputYAML(t *testing.T) {
	for _, o := range []string{"yaml", "json"} {
		w := newWS(t)
		out := w.mustCmd(ExitOK, "run", "-f", w.in, "-o", o)
		var st RunOutput
		if err := sigsyaml.UnmarshalStrict([]byte(out), &st); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(st.Sets) != 1 || len(st.Variants) != 3 || st.Variants[0].Status.DownstreamTargets[0].Name == "" ||
			len(st.Changes) != 11 || st.Changes[0] != "created repository edge-useast1" {
			t.Fatalf("-o %s:\n%s", o, out)
		}
	}
}
