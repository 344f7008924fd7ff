package cli

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"

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
	w.groupChildren("blueprints.free5gc.v1")
	for _, d := range []string{"edge01.upf.packagevariant-1", "edge01.smf.packagevariant-1", "edge02.upf.packagevariant-1", "edge02.smf.packagevariant-1"} {
		w.mustCmd(ExitOK, "approve", d)
	}
	w.run(ExitOK)

	w.publishMember("upf", "v2")
	w.publishGroup(2, 1)
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
