package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fntest"
)

// groupWS is a workspace with a catalog of two member packages, a group
// package naming them, two edge repositories and a set of the group.
func groupWS(t *testing.T) *ws {
	t.Helper()
	dir := t.TempDir()
	w := &ws{t: t, repos: filepath.Join(dir, "repos"), in: filepath.Join(dir, "in")}
	for _, m := range []string{"upf", "smf"} {
		w.publishMember(m, "v1")
	}
	w.publishGroup(1, 1)
	fntest.WriteTree(t, w.in, map[string]string{
		"repositories.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: catalog\nspec:\n  type: git\n---\n" +
			"apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: blueprints\nspec:\n  type: git\n---\n" +
			"apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: edge01\n  labels: {role: edge}\nspec:\n  type: git\n  deployment: true\n---\n" +
			"apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: edge02\n  labels: {role: edge}\nspec:\n  type: git\n  deployment: true\n",
		"set.yaml": "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: free5gc\nspec:\n  group: {repo: blueprints, package: free5gc}\n" +
			"  targets:\n  - repositorySelector:\n      matchLabels: {role: edge}\n    template:\n      packageContext:\n        dataExprs:\n        - {key: cluster, valueExpr: repository.name}\n",
	})
	return w
}

// publishMember publishes a member package of the catalog: a ConfigMap
// that says its version.
func (w *ws) publishMember(name, version string) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), name)
	fntest.WriteTree(w.t, dir, map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n",
		"nf.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  version: " + version + "\n",
	})
	w.mustCmd(ExitOK, "publish", "--repo", "catalog", "--package", "free5gc-"+name, dir)
}

// publishGroup publishes the next revision of the group package, naming
// the members' revisions.
func (w *ws) publishGroup(upf, smf int) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "free5gc")
	fntest.WriteTree(w.t, dir, map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"group.yaml": fmt.Sprintf("apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"+
			"spec:\n  members:\n  - {name: upf, upstream: {repo: catalog, package: free5gc-upf, revision: %d}}\n  - {name: smf, upstream: {repo: catalog, package: free5gc-smf, revision: %d}}\n", upf, smf),
	})
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "free5gc", dir)
}

// Issue 59 #1 (rule package-groups), on pvctl: a set of a group has a
// child per target and member, each cloning its member's upstream into a
// package named from the member; a new revision of the group moves the
// member it changes, in every target, and the children say which group
// revision they come from.
func TestGroupOfPackagesLocally(t *testing.T) {
	w := groupWS(t)
	out := w.run(ExitOK)
	for _, d := range []string{"edge01.upf.packagevariant-1", "edge01.smf.packagevariant-1", "edge02.upf.packagevariant-1", "edge02.smf.packagevariant-1"} {
		contains(t, out, "created draft "+d)
	}
	contains(t, w.files("edge01.upf.packagevariant-1")["nf.yaml"], "version: v1")
	contains(t, w.files("edge02.smf.packagevariant-1")["package-context.yaml"], "cluster: edge02")
	// Each member's provenance record names the group's revision.
	contains(t, w.files("edge01.upf.packagevariant-1")["pvkit-provenance.yaml"], `"group": {`, `"member": "upf",`, `"package": "free5gc",`, `"revision": "blueprints.free5gc.v1"`)
	w.groupChildren("blueprints.free5gc.v1")
	contains(t, w.mustCmd(ExitOK, "status", "packagevariantset/free5gc"), "Children by target (group free5gc of repository blueprints):\n",
		"  edge01 moving to blueprints.free5gc.v1 (no member published there yet):\n    smf (PackageVariant free5gc-edge01-smf): Ready True NoErrors\n    upf (PackageVariant free5gc-edge01-upf): Ready True NoErrors\n  edge02 moving to blueprints.free5gc.v1 (no member published there yet):\n")
	for _, d := range []string{"edge01.upf.packagevariant-1", "edge01.smf.packagevariant-1", "edge02.upf.packagevariant-1", "edge02.smf.packagevariant-1"} {
		w.mustCmd(ExitOK, "approve", d)
	}
	w.run(ExitOK)

	w.publishMember("upf", "v2")
	w.publishGroup(2, 1)
	// plan --diff shows the group's change target by target (a revision's
	// name starts with its repository): edge01's upf, then edge02's.
	plan := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff")
	if a, b := strings.Index(plan, "diff --git edge01.upf.packagevariant-1/nf.yaml edge01.upf.packagevariant-2/nf.yaml"), strings.Index(plan, "diff --git edge02.upf.packagevariant-1/nf.yaml edge02.upf.packagevariant-2/nf.yaml"); a < 0 || b < a {
		t.Fatalf("plan --diff of the group's v2, target by target:\n%s", plan)
	}
	out = w.run(ExitOK)
	contains(t, out, "created draft edge01.upf.packagevariant-2 (upgrade of edge01.upf.packagevariant-1 to catalog.free5gc-upf.v2)",
		"created draft edge02.upf.packagevariant-2 (upgrade of edge02.upf.packagevariant-1 to catalog.free5gc-upf.v2)")
	if strings.Contains(out, "smf.packagevariant-2") {
		t.Fatalf("the group's v2 did not change smf, yet:\n%s", out)
	}
	contains(t, w.files("edge01.upf.packagevariant-2")["nf.yaml"], "version: v2")
	w.groupChildren("blueprints.free5gc.v2")

	// A group.yaml that does not read stalls the set, naming the file.
	dir := filepath.Join(t.TempDir(), "free5gc")
	fntest.WriteTree(t, dir, map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n", "group.yaml": "apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\nspec:\n  members: {}\n"})
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "free5gc", dir)
	code, out, _ := w.cmd("run", "-f", w.in)
	if code == ExitOK {
		t.Fatalf("a group.yaml that does not read: exit 0\n%s", out)
	}
	contains(t, out, "the group's package revision blueprints.free5gc.v3: its group.yaml: `spec.members` must be")
}

// groupChildren checks the set's four children: each named for its
// target and member, labelled with the group and the member, from the
// group revision rev.
func (w *ws) groupChildren(rev string) {
	w.t.Helper()
	got := map[string]string{}
	for _, v := range w.stateFile().Variants {
		got[v.Name] = v.Labels["pvkit.dev/group"] + " " + v.Labels["pvkit.dev/group-member"] + " " + v.Annotations["pvkit.dev/group-revision"] + " " + v.Spec.Downstream.Repo + "/" + v.Spec.Downstream.Package
	}
	want := map[string]string{
		"free5gc-edge01-upf": "free5gc upf " + rev + " edge01/upf", "free5gc-edge01-smf": "free5gc smf " + rev + " edge01/smf",
		"free5gc-edge02-upf": "free5gc upf " + rev + " edge02/upf", "free5gc-edge02-smf": "free5gc smf " + rev + " edge02/smf",
	}
	if !maps.Equal(got, want) {
		w.t.Fatalf("the group's children:\n%v\nwant\n%v", got, want)
	}
}

// groupRolloutWS is a group of three (upf, smf, amf) over ten edge
// repositories (edge00, the canary, to edge09), released in three waves,
// approval by policy: every member at group v1.
func groupRolloutWS(t *testing.T) *ws {
	t.Helper()
	dir := t.TempDir()
	w := &ws{t: t, repos: filepath.Join(dir, "repos"), in: filepath.Join(dir, "in")}
	for _, m := range []string{"upf", "smf", "amf"} {
		w.publishMember(m, "v1")
	}
	w.publishGroup3(1)
	repos := "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: catalog\nspec:\n  type: git\n---\n" +
		"apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: blueprints\nspec:\n  type: git\n"
	for i := 0; i < 10; i++ {
		ring := ""
		if i == 0 {
			ring = ", ring: canary"
		}
		repos += fmt.Sprintf("---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: edge%02d\n  labels: {role: edge%s}\nspec:\n  type: git\n  deployment: true\n", i, ring)
	}
	fntest.WriteTree(t, w.in, map[string]string{
		"repositories.yaml": repos,
		"set.yaml": "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: free5gc\nspec:\n  group: {repo: blueprints, package: free5gc}\n" +
			"  targets:\n  - repositorySelector:\n      matchLabels: {role: edge}\n    template:\n      annotations: {approval.nephio.org/policy: always}\n" +
			"  rollout:\n    waves:\n    - name: canary\n      selector: {matchLabels: {ring: canary}}\n    - {name: early, size: 3}\n    - {name: rest}\n",
	})
	w.run(ExitOK)
	return w
}

// publishGroup3 publishes revision n of the three members' group, each
// member at its revision n.
func (w *ws) publishGroup3(n int) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "free5gc")
	members := ""
	for _, m := range []string{"upf", "smf", "amf"} {
		members += fmt.Sprintf("  - {name: %s, upstream: {repo: catalog, package: free5gc-%s, revision: %d}}\n", m, m, n)
	}
	fntest.WriteTree(w.t, dir, map[string]string{
		"Kptfile":    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n",
		"group.yaml": "apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  members:\n" + members,
	})
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "free5gc", dir)
}

// unitsAt checks that no target runs members of two group revisions
// once the rollout counts it done: each done target's three members come
// from one group revision and are published at its members' upstreams.
func (w *ws) unitsAt() map[string]string {
	w.t.Helper()
	at := map[string]string{}
	for _, v := range w.stateFile().Variants {
		unit, rev := v.Spec.Downstream.Repo, v.Annotations["pvkit.dev/group-revision"]
		if was, ok := at[unit]; ok && was != rev {
			at[unit] = "mixed"
		} else if !ok {
			at[unit] = rev
		}
	}
	return at
}

// Issue 59's acceptance (rule package-groups, #2), on pvctl: a group of
// three released to 10 targets in three waves; a target's members move
// together (the unit of a wave is a target's group); no target done runs
// members of two group revisions. One member failing in the canary (smf's
// v2 does not render) holds the other two's finished drafts back and
// pauses the rollout naming it, and undo brings all three members of the
// canary back to the group's v1.
func TestGroupRolloutLocally(t *testing.T) {
	t.Run("released in three waves", func(t *testing.T) {
		w := groupRolloutWS(t)
		for _, m := range []string{"upf", "smf", "amf"} {
			w.publishMember(m, "v2")
		}
		w.publishGroup3(2)
		w.rollOutGroupTo("blueprints.free5gc.v2")
		contains(t, w.mustCmd(ExitOK, "rollout", "status", "free5gc"), "wave canary", "wave early", "wave rest", "Complete")
		contains(t, w.files("edge09.smf.packagevariant-2")["nf.yaml"], "version: v2")
	})
	t.Run("a member failing in the canary, undone", func(t *testing.T) {
		w := groupRolloutWS(t)
		w.publishMember("upf", "v2")
		w.publishMember("amf", "v2")
		broken := filepath.Join(t.TempDir(), "smf")
		fntest.WriteTree(t, broken, map[string]string{
			"Kptfile":     "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: smf\npipeline:\n  validators:\n  - image: ghcr.io/kptdev/krm-functions-catalog/starlark:v0.4.3\n    configPath: broken.yaml\n",
			"broken.yaml": "apiVersion: fn.kpt.dev/v1alpha1\nkind: StarlarkRun\nmetadata:\n  name: broken\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nsource: |\n  fail(\"smf v2 is broken\")\n",
			"nf.yaml":     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: smf\ndata:\n  version: v2\n",
		})
		w.mustCmd(ExitOK, "publish", "--repo", "catalog", "--package", "free5gc-smf", broken)
		w.publishGroup3(2)
		for run := 0; run < 3; run++ {
			w.cmd("run", "-f", w.in)
		}
		// Past its progress deadline (10 minutes), the canary's smf, whose
		// draft does not render, has failed.
		w.cmd("run", "-f", w.in, "--now", time.Now().Add(11*time.Minute).UTC().Format(time.RFC3339))
		st := w.mustCmd(ExitOK, "rollout", "status", "free5gc")
		contains(t, st, "Paused", "edge00", "member smf (free5gc-edge00-smf): ")
		for u, rev := range w.unitsAt() {
			if u != "edge00" && rev != "blueprints.free5gc.v1" {
				t.Fatalf("a target past the canary moved: %s at %s", u, rev)
			}
		}
		// upf's and amf's v2 drafts are finished, and held back: a target's
		// members are published together.
		contains(t, st, "held back, the other members of edge00 (member smf (free5gc-edge00-smf) has no finished draft at free5gc-smf/v2: ")
		for _, m := range []string{"upf", "amf"} {
			contains(t, w.newestPublished("edge00", m)["nf.yaml"], "version: v1")
			contains(t, w.files("edge00." + m + ".packagevariant-2")["nf.yaml"], "version: v2")
		}
		contains(t, w.mustCmd(ExitOK, "rollout", "undo", "free5gc"), "rollout undo of blueprints.free5gc.v2")
		// With --prune (pvctl deletes nothing without it), the drafts of the
		// members the undo did not move are abandoned (rule undone-drafts).
		for run := 0; run < 3; run++ {
			w.cmd("run", "-f", w.in, "--prune", "--now", time.Now().Add(12*time.Minute).UTC().Format(time.RFC3339))
		}
		if at := w.unitsAt(); at["edge00"] != "blueprints.free5gc.v1" {
			t.Fatalf("undo: the canary's members are at %s", at["edge00"])
		}
		contains(t, w.mustCmd(ExitOK, "rollout", "status", "free5gc"), "undo: 10 of 10 children back at blueprints.free5gc.v1 (published and Ready there), 10 pinned to it, 0 on their way")
		for _, m := range []string{"upf", "smf", "amf"} {
			contains(t, w.newestPublished("edge00", m)["nf.yaml"], "version: v1")
		}
		// The members the undo did not move (their v2 drafts held back)
		// have their drafts abandoned, and nothing new is published where
		// nothing was (rule undone-drafts).
		for _, l := range strings.Split(w.mustCmd(ExitOK, "get", "--repo", "edge00"), "\n") {
			for _, m := range []string{"upf", "amf"} {
				if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "edge00."+m+".") && f[0] != "edge00."+m+".packagevariant-1" && f[0] != "edge00."+m+".main" {
					t.Fatalf("after the undo, %s has another revision: %s", m, l)
				}
			}
		}
	})
}

// rollOutGroupTo runs until the group's rollout is Complete (12 runs at
// most), checking on every run that no target the rollout counts done has
// members of two group revisions, and then that every target is at rev.
func (w *ws) rollOutGroupTo(rev string) {
	w.t.Helper()
	for run := 0; run < 12; run++ {
		w.run(ExitOK)
		st := w.mustCmd(ExitOK, "rollout", "status", "free5gc", "-o", "json")
		at := w.unitsAt()
		for _, done := range doneMembers(w.t, st) {
			if at[done] != rev {
				w.t.Fatalf("run %d: target %s is done, its members at %q", run, done, at[done])
			}
		}
		if strings.Contains(st, `"phase": "Complete"`) {
			break
		}
	}
	for u, at := range w.unitsAt() {
		if at != rev {
			w.t.Errorf("after the rollout, %s is at %s", u, at)
		}
	}
}

// newestPublished are the files of the newest published revision of a
// package of a repository, as pvctl get lists them.
func (w *ws) newestPublished(repo, pkg string) map[string]string {
	w.t.Helper()
	var newest map[string]string
	for _, l := range strings.Split(w.mustCmd(ExitOK, "get", "--repo", repo), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], repo+"."+pkg+".packagevariant-") && strings.Contains(l, "Published") {
			newest = w.files(f[0])
		}
	}
	return newest
}

// doneMembers are the targets a rollout status (JSON) counts done.
func doneMembers(t *testing.T, status string) []string {
	t.Helper()
	var st struct {
		Waves []struct {
			State       string   `json:"state"`
			Members     []string `json:"members"`
			DoneMembers []string `json:"doneMembers"`
		} `json:"waves"`
	}
	if err := json.Unmarshal([]byte(status), &st); err != nil {
		t.Fatalf("%v\n%s", err, status)
	}
	var out []string
	for _, w := range st.Waves {
		if w.State == "Complete" {
			out = append(out, w.Members...)
		}
		out = append(out, w.DoneMembers...)
	}
	return out
}
