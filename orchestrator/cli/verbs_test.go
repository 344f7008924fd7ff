package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	sigsyaml "sigs.k8s.io/yaml"
)

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
	code, out, _ := w.cmd("__complete", "get", "blue")
	if code != ExitOK || !strings.Contains(out, "blueprints.app.v1\n") {
		t.Fatalf("completing a revision name: exit %d\n%s", code, out)
	}
}

// -f - reads standard input; off a terminal a run prints its changes once,
// on stdout (issue 31 #5); a set's table row names each target failure.
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
	root.SetArgs([]string{"run", "-f", "-", "--repos", w.repos, "-o", "wide"})
	code := Execute(root, &errb)
	if code != ExitNotReady {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
	contains(t, out.String(), "PackageVariantSet  app", "2 target entries could not be computed",
		"`spec.targets[0].repositorySelector` (Repository \"edge-useast1\", package \"app\"): `spec.targets[0].template.labelExprs[0].valueExpr`: no such key: zone")
	contains(t, out.String(), "created repository edge-useast1\n")
	if strings.Contains(errb.String(), "created repository") {
		t.Fatalf("a change printed twice, on stderr too:\n%s", errb.String())
	}
}

func TestUIDIsStable(t *testing.T) {
	a, b := local.UID("PackageVariant", "default", "x"), local.UID("PackageVariant", "default", "y")
	if a != local.UID("PackageVariant", "default", "x") || a == b || len(a) != 36 {
		t.Fatalf("UID: %s %s", a, b)
	}
}

// -o yaml and json print a List of the sets and variants with their
// status, each with its apiVersion and kind, the changes beside; -o name
// the sets and variants; -o wide and table the report, wide with messages
// whole (issue 31 #5).
func TestOutputYAML(t *testing.T) {
	for _, o := range []string{"yaml", "json"} {
		w := newWS(t)
		out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "-o", o)
		var st struct {
			APIVersion, Kind string
			Items            []struct {
				APIVersion, Kind string
				Status           struct {
					DownstreamTargets []struct{ Name string } `json:"downstreamTargets"`
				}
			}
			Changes []string
		}
		if err := sigsyaml.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if st.APIVersion != "v1" || st.Kind != "List" || len(st.Items) != 4 || st.Items[0].Kind != "PackageVariantSet" ||
			st.Items[1].Kind != "PackageVariant" || st.Items[1].APIVersion != "config.porch.kpt.dev/v1alpha1" || st.Items[1].Status.DownstreamTargets[0].Name == "" ||
			len(st.Changes) != 11 || st.Changes[0] != "created repository edge-useast1" {
			t.Fatalf("-o %s:\n%s", o, out)
		}
	}
	w := newWS(t)
	if out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "-o", "name"); out != "packagevariantset/app\npackagevariant/app-edge-useast1-app\npackagevariant/app-edge-uswest1-app\npackagevariant/app-staging\n" {
		t.Fatalf("plan -o name:\n%s", out)
	}
	contains(t, w.mustCmd(ExitChanges, "plan", "-f", w.in, "-o", "wide"), "would create draft")
}

// Issue 31 #5: one stream per change: off a terminal a run reports each
// change once, on stdout; stderr has none of them.
func TestChangesPrintedOnce(t *testing.T) {
	w := newWS(t)
	code, out, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitOK || !strings.Contains(out, "created repository edge-useast1") || strings.Contains(errs, "created repository") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
}

// Issue 28 #4: pvctl's verbs call the local runtime (local.Repos,
// local.Run), never a store implementation.
func TestVerbsImportNoStoreImplementation(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./orchestrator/cli")
	cmd.Dir = fntest.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range strings.Fields(string(out)) {
		switch imp {
		case "github.com/pvkit/pvkit/orchestrator/store/gitstore", "github.com/pvkit/pvkit/orchestrator/store/porch",
			"github.com/pvkit/pvkit/orchestrator/store/memory", "github.com/pvkit/pvkit/orchestrator/store/fakestore":
			t.Errorf("orchestrator/cli imports %s", imp)
		}
	}
}

// Issue 29 #2: `revision: -1` is the branch placeholder, as Porch v1.5.3
// takes it (Nephio's bare-metal guide and Porch's test/disaster variants
// use it): alone, or with `workspaceName: main`; -2 is refused.
func TestRevisionMinusOneIsThePlaceholder(t *testing.T) {
	w := newWS(t)
	variant := func(name, upstream string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: " + name + "\nspec:\n" +
			"  upstream: {repo: blueprints, package: app, " + upstream + "}\n  downstream: {repo: core-euwest1, package: " + name + "}\n" +
			"  injectors:\n  - kind: ConfigMap\n    name: eu-west1-endpoints\n  - group: example.com\n    kind: Team\n    name: web-team\n"
	}
	w.write("placeholder.yaml", variant("placeholder", "revision: -1")+"---\n"+variant("placeholder-main", "revision: -1, workspaceName: main"))
	out := w.run(ExitOK)
	contains(t, out, "created draft core-euwest1.placeholder.packagevariant-1 (clone of blueprints.app.main)",
		"created draft core-euwest1.placeholder-main.packagevariant-1 (clone of blueprints.app.main)")
	w.write("placeholder.yaml", variant("placeholder", "revision: -2"))
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitUsage || !strings.Contains(errs, "`spec.upstream.revision` Invalid value: -2: spec.upstream.revision in body should be greater than or equal to -1") {
		t.Fatalf("revision -2: exit %d\n%s", code, errs)
	}
}
