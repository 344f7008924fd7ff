package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	sigsyaml "sigs.k8s.io/yaml"
)

// Issue 19 #1: the objects in the user's own files are the cluster, so
// their kinds may be selected and injected without a flag; a Secret stays
// opt-in, and --readable-kinds adds kinds on run and plan.
func TestKindsInTheFilesAreReadable(t *testing.T) {
	w := newWS(t)
	// A set selecting clusters of a custom kind, Nephio's way.
	w.write("clusters.yaml", "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: edge-useast1\n  labels: {nephio.org/site-type: edge}\nspec:\n  clusterName: edge-useast1\n")
	w.write("addons.yaml", "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: addons\nspec:\n"+
		"  upstream: {repo: blueprints, package: app}\n  targets:\n  - objectSelector:\n      apiVersion: infra.nephio.org/v1alpha1\n      kind: WorkloadCluster\n"+
		"      matchLabels: {nephio.org/site-type: edge}\n    template:\n      downstream: {package: addon}\n")
	// (The addon variant injects nothing, so the blueprint's required
	// injection point leaves it not Ready: exit 1.)
	out := w.run(ExitNotReady)
	contains(t, out, "created PackageVariant addons-edge-useast1-addon", "created draft edge-useast1.addon.packagevariant-1",
		"PackageVariantSet  addons                     True   Reconciled")

	// A Secret in the files is still not injected without --readable-kinds.
	w.write("secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-password\nstringData: {password: x}\n")
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "  - kind: ConfigMap\n    name: eu-west1-endpoints\n", "  - kind: Secret\n    name: db-password\n", 1))
	contains(t, w.run(ExitStalled), "`spec.injectors[0]` names kind \"Secret\", a kind pvkit may not read")
	out = w.mustCmd(ExitChanges, "plan", "-f", w.in, "--readable-kinds", "Secret")
	if strings.Contains(out, "KindNotAllowed") {
		t.Fatalf("--readable-kinds Secret did not allow it:\n%s", out)
	}
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--readable-kinds", "Secret,*")
	if code != ExitUsage || !strings.Contains(errs, `--readable-kinds: readable kind "*" must be Kind or Kind.group`) {
		t.Fatalf("exit %d, %q", code, errs)
	}
}

// Issue 19 #5: objects marked config.kubernetes.io/local-config configure a
// package and are never applied: two packages' kptfile.kpt.dev ConfigMaps
// given together are not "defined again", and such an object is never
// injected.
func TestLocalConfigIsNoClusterObject(t *testing.T) {
	w := newWS(t)
	local := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: %s\n"
	w.write("pkg-a-context.yaml", strings.Replace(local, "%s", "a", 1))
	w.write("pkg-b-context.yaml", strings.Replace(local, "%s", "b", 1))
	// The only eu-west1-endpoints ConfigMap is local-config: app-staging
	// finds nothing to inject for it.
	objs := readFile(t, filepath.Join(w.in, "cluster-objects.yaml"))
	w.write("cluster-objects.yaml", strings.Replace(objs, "  name: eu-west1-endpoints\n", "  name: eu-west1-endpoints\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n", 1))
	out := w.run(ExitNotReady)
	contains(t, out, "app-staging")
	if !strings.Contains(out, "NoResourceSelected: no resource matched any injection selector") {
		t.Fatalf("the variant does not say the injected object is missing:\n%s", out)
	}
}

// Issue 19 #6: `get -o name` prints packagerevision/NAME; every verb takes
// that form (and kubectl's), so the output pipes into them.
func TestGetNameRoundTrips(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	names := strings.Fields(w.mustCmd(ExitOK, "get", "--repo", "edge-useast1", "-o", "name"))
	if len(names) != 1 || names[0] != "packagerevision/edge-useast1.app.packagevariant-1" {
		t.Fatalf("get -o name = %q", names)
	}
	contains(t, w.mustCmd(ExitOK, "get", names[0]), "edge-useast1.app.packagevariant-1")
	contains(t, w.mustCmd(ExitNotReady, "diff", names[0]), "package-context.yaml")
	contains(t, w.mustCmd(ExitOK, "pull", names[0], filepath.Join(t.TempDir(), "app")), "pulled edge-useast1.app.packagevariant-1")
	contains(t, w.mustCmd(ExitOK, "propose", names[0]), "proposed edge-useast1.app.packagevariant-1")
	contains(t, w.mustCmd(ExitOK, "approve", "packagerevisions.porch.kpt.dev/edge-useast1.app.packagevariant-1"), "approved edge-useast1.app.packagevariant-1")
	code, _, errs := w.cmd("propose", "configmap/edge-useast1.app.packagevariant-1")
	if code == ExitOK || !strings.Contains(errs, "package revision configmap/edge-useast1.app.packagevariant-1: not found") {
		t.Fatalf("another kind's prefix: exit %d, %q", code, errs)
	}
}

// Issue 19 #3: Porch's revision rules. Every package on main is also its
// branch placeholder (revision -1, workspace main), usable as an upstream
// the way Nephio's variants use it; every tag <path>/<ref> with a package
// at its path is a published revision, numbered -1 unless its ref is vN; a
// tag with no package at its path (a release tag) is no revision.
func TestPorchRevisionRules(t *testing.T) {
	w := newWS(t)
	v1 := w.gitOut("blueprints", "", "rev-parse", "app/v1")
	w.gitOut("blueprints", "", "tag", "app/v3.0.0", v1)
	w.gitOut("blueprints", "", "tag", "Release4", v1)
	w.gitOut("blueprints", "", "tag", "docs/v1.0", v1)
	code, out, errs := w.cmd("get", "--repo", "blueprints")
	if code != ExitOK || errs != "" {
		t.Fatalf("get: exit %d\n%s\n%s", code, out, errs)
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(l)
		rows = append(rows, strings.Join([]string{f[0], f[2], f[3], f[4], f[5]}, " "))
	}
	want := "blueprints.app.main main -1 false Published\nblueprints.app.v1 v1 1 true Published\nblueprints.app.v3.0.0 v3.0.0 -1 false Published"
	if got := strings.Join(rows, "\n"); got != want {
		t.Fatalf("get:\n%s\nwant:\n%s", got, want)
	}
	// Nephio's upstream: workspaceName main.
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")),
		"    package: app\n  downstream:", "    package: app\n    workspaceName: main\n  downstream:", 1))
	out = w.run(ExitOK)
	contains(t, out, "created draft core-euwest1.app.packagevariant-1 (clone of blueprints.app.main)")
	contains(t, w.files("core-euwest1.app.packagevariant-1")["Kptfile"], "ref: main")
	// A placeholder has no number to approve, and is not the latest.
	contains(t, w.mustCmd(ExitOK, "approve", "blueprints.app.main"), "blueprints.app.main is already published")
}

// Issue 19 #6: plan and run exit codes tell "would change" (3), "stalled"
// (4) and "not Ready yet or failed" (1) apart, and the summary counts the
// stalled objects. A CI gate on plan fails on broken input.
func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs pvctl through every exit code (2 s)")
	}
	w := newWS(t)
	contains(t, w.mustCmd(ExitChanges, "plan", "-f", w.in), "Plan (11 changes")
	w.run(ExitOK)
	w.mustCmd(ExitOK, "plan", "-f", w.in)
	// A stalled variant: plan and run say so, whatever else would change.
	staging := readFile(t, filepath.Join(w.in, "app-staging.yaml"))
	w.write("app-staging.yaml", strings.Replace(staging, "    package: app\n  downstream:", "    package: nosuch\n  downstream:", 1))
	out := w.mustCmd(ExitStalled, "plan", "-f", w.in)
	contains(t, out, "UpstreamNotFound", "3 of 4 sets and variants Ready; 1 stalled (waiting for a change of the input).")
	out = w.mustCmd(ExitStalled, "run", "-o", "wide", "-f", w.in)
	contains(t, out, "No changes.\n", "1 stalled")
	if strings.Contains(out, "every downstream package is up to date") {
		t.Fatalf("run says all is up to date while a variant is stalled:\n%s", out)
	}
	// Not Ready without a stall (a readiness gate): 1.
	w.write("app-staging.yaml", strings.Replace(staging, "  - kind: ConfigMap\n    name: eu-west1-endpoints\n", "  - kind: ConfigMap\n    name: no-such-endpoints\n", 1))
	contains(t, w.run(ExitNotReady), "ReadinessGate", "3 of 4 sets and variants Ready.")
	// Only a removal held back for want of --prune: 3.
	w.write("app-staging.yaml", staging)
	w.run(ExitOK)
	w.remove("app-staging.yaml")
	contains(t, w.run(ExitChanges), "Not removed (1): run again with --prune to remove them:\n  PackageVariant app-staging\n")
}

// Issue 19 #6: namespaces are isolated in local mode: `-n other` has its
// own repositories, drafts, owners and state (it reused the default
// namespace's UIDs and edited its drafts).
func TestNamespacesAreIsolated(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	before := w.snapshot()
	other := filepath.Join(w.repos, "namespaces", "other")
	contains(t, w.mustCmd(ExitOK, "publish", "-n", "other", "--repo", "blueprints", "--package", "app", filepath.Join(fntest.RepoRoot(), "examples", "app")),
		"created repository blueprints ("+filepath.Join(other, "blueprints.git")+")")
	out := w.mustCmd(ExitOK, "run", "-n", "other", "-f", w.in)
	contains(t, out, "created draft edge-useast1.app.packagevariant-1 (clone of blueprints.app.v1)")
	for name, content := range w.snapshot() {
		if strings.HasPrefix(name, "namespaces/") {
			continue
		}
		if before[name] != content {
			t.Fatalf("a run in namespace other changed the default namespace's %s", name)
		}
	}
	if got := w.mustCmd(ExitOK, "get", "-n", "other", "-o", "name"); !strings.Contains(got, "packagerevision/edge-useast1.app.packagevariant-1") {
		t.Fatalf("get -n other:\n%s", got)
	}
	contains(t, readFile(t, filepath.Join(other, state.File)), "namespace: other")
}

// Issue 19 #6: --repos defaults to $PVCTL_REPOS, then ./repositories; a
// command that creates the directory says so (run from the wrong directory,
// it would quietly start a second fleet).
func TestReposDirectory(t *testing.T) {
	t.Setenv("PVCTL_REPOS", "/from/env")
	if got := ReposDir("", "default"); got != "/from/env" {
		t.Fatalf("ReposDir = %q", got)
	}
	if got := ReposDir("/flag", "team-a"); got != "/flag/namespaces/team-a" {
		t.Fatalf("ReposDir = %q", got)
	}
	t.Setenv("PVCTL_REPOS", "")
	if got := ReposDir("", ""); got != "repositories" {
		t.Fatalf("ReposDir = %q", got)
	}
	// Issue 46 #5: run from the wrong directory, the blueprints the files
	// name are not there: an error naming where pvctl looked and how to
	// provide them (it used to create an empty repository and answer
	// UpstreamNotFound), and nothing is created.
	w := newWS(t)
	fresh := filepath.Join(t.TempDir(), "elsewhere")
	var out, errb strings.Builder
	code := Command(context.Background(), "run", []string{"--repos", fresh, "-f", w.in}, &out, &errb)
	want := "repositories.yaml: Repository \"blueprints\": its bare repository " + filepath.Join(fresh, "blueprints.git") + " is not there; " +
		"pvctl serves a Repository that is not a deployment repository only from one that exists: clone it there (git clone --bare"
	if code != ExitUsage || !strings.Contains(errb.String(), want) || !strings.Contains(errb.String(), "or publish a package into it (pvctl publish --repo blueprints)") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("the refused run made %s: %v", fresh, err)
	}
}

// Issue 19 #6: an object left out of -f is kept until --prune, as a
// variant is (leaving a ConfigMap out rewrote every draft that injected it:
// removed objects were pruned implicitly, removed variants were not).
func TestObjectsLeavingTheFilesAreKeptUntilPrune(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	before := w.snapshot()
	objs := readFile(t, filepath.Join(w.in, "cluster-objects.yaml"))
	i := strings.Index(objs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: eu-west1-endpoints")
	j := strings.Index(objs, "---\napiVersion: example.com/v1")
	w.write("cluster-objects.yaml", objs[:i]+objs[j:])
	out := w.run(ExitChanges)
	contains(t, out, "No changes", "Not removed (1): run again with --prune to remove them:\n  ConfigMap eu-west1-endpoints\n")
	if d := cmp.Diff(before, w.snapshot(), cmpIgnoreState); d != "" {
		t.Fatalf("a run without the ConfigMap rewrote drafts:\n%s", d)
	}
	out = w.mustCmd(ExitNotReady, "run", "-o", "wide", "-f", w.in, "--prune")
	contains(t, out, "removed ConfigMap eu-west1-endpoints from the embedded cluster (no longer in the files)", "updated the resources of core-euwest1.app.packagevariant-1")
	st, err := state.Read(filepath.Join(w.repos, state.File))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range st.Objects {
		if state.ObjectKey(o) == "v1 ConfigMap eu-west1-endpoints" {
			t.Fatal("the pruned object stays in the state")
		}
	}
	if len(st.Objects) != 3 {
		t.Fatalf("state objects: %d, want the 3 the files give", len(st.Objects))
	}
}

// pvctl push writes a directory into a draft, as porchctl rpkg push does:
// pull, edit, push.
func TestPullEditPush(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const name = "edge-useast1.app.packagevariant-1"
	dir := filepath.Join(t.TempDir(), "app")
	w.mustCmd(ExitOK, "pull", name, dir)
	contains(t, w.mustCmd(ExitOK, "push", name, dir), name+" is unchanged")
	dep := readFile(t, filepath.Join(dir, "deployment.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(strings.Replace(dep, "replicas: 1 #", "replicas: 5 #", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	contains(t, w.mustCmd(ExitOK, "push", name, dir), "pushed "+dir+" into "+name)
	contains(t, w.files(name)["deployment.yaml"], "replicas: 5")
	// The variant keeps its mutation and the edit: nothing to do.
	contains(t, w.run(ExitOK), "No changes")
	contains(t, w.files(name)["deployment.yaml"], "replicas: 5")
	code, _, errs := w.cmd("push", "blueprints.app.v1", dir)
	if code == ExitOK || !strings.Contains(errs, "package revision blueprints.app.v1 is Published; only a Draft can be pushed to") {
		t.Fatalf("push to a published revision: exit %d, %q", code, errs)
	}
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "x.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs = w.cmd("push", name, empty)
	if code != ExitUsage || !strings.Contains(errs, "holds no Kptfile") {
		t.Fatalf("push without a Kptfile: exit %d, %q", code, errs)
	}
	// Issue 62 #1: a missing directory is named, a usage error.
	missing := filepath.Join(empty, "nosuch")
	for _, args := range [][]string{{"publish", "--repo", "blueprints", "--package", "app", missing}, {"push", name, missing}} {
		code, _, errs = w.cmd(args[0], args[1:]...)
		if want := "pvctl " + args[0] + ": the package directory " + missing + " does not exist"; code != ExitUsage || !strings.Contains(errs, want) {
			t.Fatalf("%v: exit %d, %q; want %d and %q", args, code, errs, ExitUsage, want)
		}
	}
	code, _, errs = w.cmd("publish", "--repo", "blueprints", "--package", "app", filepath.Join(empty, "x.yaml"))
	if code != ExitUsage || !strings.Contains(errs, "x.yaml is not a directory: a package is a directory of files") {
		t.Fatalf("publish of a file: exit %d, %q", code, errs)
	}
}

// Issue 19 #2: a draft whose variant's mutation fails cannot be proposed or
// approved: it may look finished, and publishing it is nephio#615.
func TestApproveRefusesUnmutatedDraft(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const name = "edge-useast1.app.packagevariant-1"
	dir := filepath.Join(t.TempDir(), "app")
	w.mustCmd(ExitOK, "pull", name, dir)
	ep := filepath.Join(dir, "endpoints.yaml")
	if err := os.WriteFile(ep, []byte(strings.Replace(readFile(t, ep), "kpt.dev/config-injection: required", "kpt.dev/config-injection: maybe", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", name, dir)
	contains(t, w.run(ExitStalled), "MutationFailed")
	for _, verb := range []string{"propose", "approve"} {
		code, _, errs := w.cmd(verb, name)
		if code == ExitOK || !strings.Contains(errs, "package revision "+name+" is not ready: its PackageVariant app-edge-useast1-app is not Ready (MutationFailed: ") {
			t.Fatalf("%s: exit %d, %q", verb, code, errs)
		}
	}
	contains(t, strings.Join(w.revisions(), "\n"), name+" Draft")
	// Another variant's draft is approved as before.
	w.mustCmd(ExitOK, "approve", "edge-uswest1.app.packagevariant-1")
}

// Issue 21 #5: pvctl run approves the drafts whose variant asks for it
// (approval.nephio.org/policy, Nephio's rules): initial approves the first
// revision only, always every one; never while a readiness gate is False,
// before a delay, or after a person's edit; a bad annotation is a warning.
func TestApprovalByPolicy(t *testing.T) {
	w := newWS(t)
	staging := readFile(t, filepath.Join(w.in, "app-staging.yaml"))
	annotate := func(ann string) {
		w.write("app-staging.yaml", strings.Replace(staging, "spec:\n", "spec:\n  annotations:\n"+ann, 1))
	}
	const draft1 = "core-euwest1.app.packagevariant-1"
	// A delay not met yet, then a bad policy: nothing approved.
	annotate("    approval.nephio.org/policy: initial\n    approval.nephio.org/delay: 1h\n")
	out := w.run(ExitOK)
	if strings.Contains(out, "approved") {
		t.Fatalf("approved before the delay:\n%s", out)
	}
	// (Annotations reach a draft when it is created, as in Porch: each case
	// starts from a fresh draft.)
	w.mustCmd(ExitOK, "del", draft1)
	annotate("    approval.nephio.org/policy: sometimes\n")
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitOK || !strings.Contains(errs, `warning: `+draft1+`: invalid approval.nephio.org/policy annotation "sometimes": want "initial" or "always"; not approved`) {
		t.Fatalf("bad policy: exit %d, %q", code, errs)
	}
	w.mustCmd(ExitOK, "del", draft1)
	// initial: the first revision is approved in the run that makes it.
	annotate("    approval.nephio.org/policy: initial\n")
	out = w.run(ExitOK)
	contains(t, out, "approved core-euwest1.app.packagevariant-1: revision 1 of app (approval.nephio.org/policy: initial)")
	// always: approved whenever Ready; never with a readiness gate False.
	variant := func(name, injected string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: " + name + "\nspec:\n" +
			"  annotations:\n    approval.nephio.org/policy: always\n  upstream: {repo: blueprints, package: app}\n" +
			"  downstream: {repo: core-euwest1, package: " + name + "}\n  injectors:\n  - kind: ConfigMap\n    name: " + injected + "\n"
	}
	w.write("app-canary.yaml", variant("app-canary", "eu-west1-endpoints"))
	w.write("app-qa.yaml", variant("app-qa", "no-such-endpoints"))
	out = w.run(ExitNotReady)
	contains(t, out, "approved core-euwest1.app-canary.packagevariant-1: revision 1 of app-canary (approval.nephio.org/policy: always)")
	if strings.Contains(out, "approved core-euwest1.app-qa") {
		t.Fatalf("approved with a readiness gate False:\n%s", out)
	}
	// initial, the package published: an upgrade draft is left to a person;
	// always approves it.
	v2 := filepath.Join(t.TempDir(), "app")
	files := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: nginx:1.28", 1)
	fntest.WriteTree(t, v2, files)
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", v2)
	out = w.run(ExitNotReady) // the drafts of v1 nobody approved are upgraded in place; app-qa's gate stays False
	contains(t, out, "created draft core-euwest1.app.packagevariant-2 (upgrade of core-euwest1.app.packagevariant-1",
		"upgraded core-euwest1.app-qa.packagevariant-1 in place from app/v1 to app/v2")
	if strings.Contains(out, "approved core-euwest1.app.packagevariant") {
		t.Fatalf("initial approved a second revision:\n%s", out)
	}
	contains(t, out, "approved core-euwest1.app-canary.packagevariant-2: revision 2 of app-canary (approval.nephio.org/policy: always)")
}

// Issue 22 #5 (part): singular and plural right, [] not null in JSON, and
// plan refuses --dry-run=false rather than write.
func TestOutputHabits(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "-o", "json")
	if !strings.Contains(out, `"changes": []`) || strings.Contains(out, "null") {
		t.Fatalf("-o json with no change:\n%s", out)
	}
	before := w.snapshot()
	code, _, errs := w.cmd("plan", "-f", w.in, "--dry-run=false")
	if code != ExitUsage || !strings.Contains(errs, "plan never writes: --dry-run=false goes with pvctl run") {
		t.Fatalf("plan --dry-run=false: exit %d, %q", code, errs)
	}
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("plan --dry-run=false wrote:\n%s", d)
	}
}

// Issue 22 #5: a verb given several names acts on each and reports each,
// whatever their order (`propose nosuch a` did nothing); repeating an action
// already done is a no-op that says so.
func TestVerbsActOnEachName(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const a, b = "edge-useast1.app.packagevariant-1", "edge-uswest1.app.packagevariant-1"
	code, out, errs := w.cmd("propose", "nosuch", a, b)
	if code != ExitNotReady || !strings.Contains(out, "proposed "+a+"\nproposed "+b+"\n") ||
		!strings.Contains(errs, "pvctl propose: package revision nosuch: not found") || !strings.Contains(errs, "pvctl propose: 1 of 3 failed") {
		t.Fatalf("propose nosuch a b: exit %d\n%s\n%s", code, out, errs)
	}
	contains(t, w.mustCmd(ExitOK, "propose", a), a+" is already proposed")
	contains(t, w.mustCmd(ExitOK, "approve", a, b), "approved "+a, "approved "+b)
	contains(t, w.mustCmd(ExitOK, "approve", a), a+" is already published")
	contains(t, w.mustCmd(ExitOK, "propose-delete", a), "proposed the deletion of "+a)
	contains(t, w.mustCmd(ExitOK, "propose-delete", a), a+" is already proposed for deletion")
}

// Issue 22 #5: publishing unchanged content is a no-op that says so (it
// made a new revision, and an upgrade draft in every downstream).
func TestPublishUnchangedIsNoOp(t *testing.T) {
	w := newWS(t)
	before := w.snapshot()
	contains(t, w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", filepath.Join(fntest.RepoRoot(), "examples", "app")),
		"blueprints.app.v1 already holds these files: nothing was published")
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("an unchanged publish wrote:\n%s", d)
	}
}

// Issue 22 #5: get takes several names and -l; one name with -o yaml|json
// is the PackageRevision itself, not a list; nothing matching says "No
// resources found", as kubectl does.
func TestGetHabits(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const a, b = "edge-useast1.app.packagevariant-1", "edge-uswest1.app.packagevariant-1"
	out := w.mustCmd(ExitOK, "get", a, "packagerevision/"+b, "-o", "name")
	if out != "packagerevision/"+a+"\npackagerevision/"+b+"\n" {
		t.Fatalf("get a b -o name = %q", out)
	}
	code, out, errs := w.cmd("get", a, "nosuch")
	if code != ExitNotReady || !strings.Contains(out, a) || !strings.Contains(errs, "pvctl get: package revision nosuch: not found") {
		t.Fatalf("get a nosuch: exit %d\n%s\n%s", code, out, errs)
	}
	out = w.mustCmd(ExitOK, "get", "-l", "region=us-west1", "-o", "name")
	if out != "packagerevision/"+b+"\n" {
		t.Fatalf("get -l region=us-west1 = %q", out)
	}
	// Issue 31 #5: -l matches the labels -o yaml shows, Porch's
	// latest-revision label included (it matched nothing).
	if out := w.mustCmd(ExitOK, "get", "-l", "kpt.dev/latest-revision=true", "-o", "name"); out != "packagerevision/blueprints.app.v1\n" {
		t.Fatalf("get -l kpt.dev/latest-revision=true = %q", out)
	}
	var pr porchapi.PackageRevision
	if err := sigsyaml.UnmarshalStrict([]byte(w.mustCmd(ExitOK, "get", a, "-o", "yaml")), &pr); err != nil || pr.Kind != "PackageRevision" || pr.Name != a {
		t.Fatalf("get NAME -o yaml: %v, %s %s", err, pr.Kind, pr.Name)
	}
	code, out, errs = w.cmd("get", "--repo", "nosuch")
	if code != ExitOK || out != "" || errs != "No resources found in default namespace.\n" {
		t.Fatalf("get --repo nosuch: exit %d, %q, %q", code, out, errs)
	}
	code, _, errs = w.cmd("get", "-l", "a b")
	if code != ExitUsage || !strings.Contains(errs, "pvctl get: -l: ") {
		t.Fatalf("get -l 'a b': exit %d, %q", code, errs)
	}
}

// Issue 22 #1 (local part): pvctl status shows the last run's sets and
// variants, or one in detail: conditions, downstream revisions with their
// lifecycle and readiness gates, a set's children; -o yaml the object.
func TestStatus(t *testing.T) {
	w := newWS(t)
	w.write("cluster-objects.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "cluster-objects.yaml")), "name: us-east1-endpoints", "name: other-endpoints", 1))
	w.run(ExitNotReady)
	out := w.mustCmd(ExitOK, "status")
	contains(t, out, "KIND               NAME                  READY  REASON", "PackageVariant     app-staging           True   NoErrors")
	out = w.mustCmd(ExitOK, "status", "packagevariant/app-edge-useast1-app")
	contains(t, out, "PackageVariant app-edge-useast1-app (namespace default, generation 1, observed 1)",
		"Upstream:   repository blueprints, package app", "Ready=True", "Downstream revisions:",
		`edge-useast1.app.packagevariant-1: Draft; package revision edge-useast1.app.packagevariant-1 is not ready: readiness gate "config.injection.ConfigMap.endpoints" is False`)
	contains(t, w.mustCmd(ExitOK, "status", "pvs/app"), "PackageVariantSet app", "Children:", "PackageVariant app-edge-useast1-app: Ready True NoErrors")
	var v pvapi.PackageVariant
	if err := sigsyaml.UnmarshalStrict([]byte(w.mustCmd(ExitOK, "status", "pv/app-staging", "-o", "yaml")), &v); err != nil || v.Name != "app-staging" {
		t.Fatalf("status -o yaml: %v %s", err, v.Name)
	}
	code, _, errs := w.cmd("status", "packagevariant/nosuch")
	if code != ExitNotReady || !strings.Contains(errs, "packagevariant nosuch: not found in the last run's state") {
		t.Fatalf("status of a missing variant: exit %d, %q", code, errs)
	}
	code, _, errs = w.cmd("status", "configmap/x")
	if code != ExitUsage || !strings.Contains(errs, `pvctl status: want packagevariant/NAME or packagevariantset/NAME, not kind "configmap"`) {
		t.Fatalf("status configmap/x: exit %d, %q", code, errs)
	}
}

// Issue 62 #2: `pvctl run -f .` in the fleet's directory, whose
// repositories directory is below it, does not read that directory (its
// state file is no input: the second run failed on it).
func TestRunReadsNotItsOwnRepositories(t *testing.T) {
	w := newWS(t)
	in := &ws{t: t, repos: filepath.Join(w.in, "repositories"), in: w.in}
	in.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	in.run(ExitOK)
	if _, err := os.Stat(filepath.Join(in.repos, "pvctl-state.yaml")); err != nil {
		t.Fatalf("the state file is not where the test needs it: %v", err)
	}
	contains(t, in.run(ExitOK), "No changes")
	contains(t, in.mustCmd(ExitOK, "plan", "-f", in.in), "Plan: no changes") // a plan runs on a copy: the real directory is skipped too
}

// Issue 62 #5 (rule child-labels): a set that names its targets' labels
// (pvkit.dev/child-labels) gives them to its children, and pvctl status -l
// finds a target's child by them.
func TestStatusFindsChildrenByTheirTargetsLabels(t *testing.T) {
	w := newWS(t)
	set := readFile(t, filepath.Join(w.in, "fleet-set.yaml"))
	w.write("fleet-set.yaml", strings.Replace(set, "metadata:\n  name: app\n", "metadata:\n  name: app\n  annotations:\n    pvkit.dev/child-labels: region\n", 1))
	w.run(ExitOK)
	out := w.mustCmd(ExitOK, "status", "-l", "region=us-east1", "-o", "name")
	if out != "packagevariant/app-edge-useast1-app\n" {
		t.Fatalf("status -l region=us-east1: %q", out)
	}
}
