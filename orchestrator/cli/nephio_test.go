package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Issue 19 #7, issue 21 #1, #2 and issue 29 #6: examples/nephio, a fleet
// registered as Nephio registers it, end to end offline: one catalog
// registered per directory (catalog-infra-capi, catalog-nephio-optional),
// cluster packages declared as Nephio's e2e declares them (a set by package
// name from workspaceName: main, a variant from revision: -1, set-labels
// prepended), each carrying its WorkloadCluster, its Repository and nested
// variants (one from revision: -1, one into the cluster's own repository);
// plan and run --sync mgmt: the cluster packages rendered, approved by
// policy and applied to the embedded cluster, their repositories served and
// their WorkloadClusters selected by the addon set, the nested variants'
// packages made, rendered and approved, all in the same run; a local edit
// (pull, edit, push), approve, and an upgrade that keeps the edit.
func TestNephioExample(t *testing.T) {
	root := fntest.RepoRoot()
	example := filepath.Join(root, "examples", "nephio")
	repos := filepath.Join(t.TempDir(), "repos")
	mgmt := t.TempDir()
	fntest.WriteTree(t, mgmt, fntest.ReadTree(t, filepath.Join(example, "mgmt")))
	pvctl := func(want int, args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		code := Command(context.Background(), args[0], append([]string{"--repos", repos}, args[1:]...), &out, &errb)
		if code != want {
			t.Fatalf("pvctl %v: exit %d, want %d\n%s\n%s", args, code, want, out.String(), errb.String())
		}
		return out.String()
	}
	tag := func(name, at string) {
		t.Helper()
		cmd := exec.Command("git", "--git-dir", filepath.Join(repos, "catalog.git"), "tag", name, at)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git tag: %v: %s", err, out)
		}
	}
	files := func(name string) map[string]string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "pkg")
		pvctl(ExitOK, "pull", name, dir)
		return fntest.ReadTree(t, dir)
	}
	for path, dir := range map[string]string{"infra/capi/workload-cluster": "workload-cluster", "infra/capi/cluster-capi-kind": "cluster-capi-kind",
		"infra/capi/kindnet": "kindnet-v1.0.0", "nephio/optional/rootsync": "rootsync"} {
		pvctl(ExitOK, "publish", "--repo", "catalog", "--package", path, filepath.Join(example, "catalog", dir))
	}
	tag("infra/capi/kindnet/v1.0.0", "infra/capi/kindnet/v1")

	contains(t, pvctl(ExitChanges, "plan", "-f", mgmt, "--sync", "mgmt"), "would create draft edge01.kindnet.packagevariant-1 (clone of catalog-infra-capi.kindnet.v1.0.0)",
		"would create draft mgmt.regional.packagevariant-1 (clone of catalog-infra-capi.workload-cluster.main)",
		"would create repository edge01 (synced from mgmt/edge01@v1)")
	out := pvctl(ExitOK, "run", "-f", mgmt, "--sync", "mgmt")
	if strings.Contains(out, " False ") {
		t.Fatalf("not every variant is Ready:\n%s", out)
	}
	// approval.nephio.org/policy: initial approved the cluster packages;
	// synced, their repositories and WorkloadClusters reached the embedded
	// cluster and their nested variants (renamed per cluster by the
	// package's render) made and approved the clusters' CAPI packages and
	// their RootSyncs in the clusters' own repositories; the kindnet set
	// selected the synced edge clusters.
	contains(t, out, "approved mgmt.edge01.packagevariant-1: revision 1 of edge01 (approval.nephio.org/policy: initial)",
		"created repository edge01 (synced from mgmt/edge01@v1)", "synced WorkloadCluster edge02 from mgmt/edge02@v1",
		"created PackageVariant edge01-cluster", "created PackageVariant regional-rootsync", "created PackageVariant kindnet-edge02-kindnet",
		"approved mgmt.edge02-cluster.packagevariant-1: revision 1 of edge02-cluster (approval.nephio.org/policy: initial)",
		"approved edge01.rootsync.packagevariant-1: revision 1 of rootsync (approval.nephio.org/policy: initial)",
		"synced Cluster regional from mgmt/regional-cluster@v1")
	ready := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 5 && f[0] == "PackageVariant" && f[2] == "True" {
			ready[f[1]] = f[4]
		}
	}
	if len(ready) != 11 || ready["edge01-cluster"] != "mgmt.edge01-cluster.packagevariant-1" || ready["regional-rootsync"] != "regional.rootsync.packagevariant-1" {
		t.Fatalf("want the 11 variants Ready on their drafts, got %v:\n%s", ready, out)
	}
	if strings.Contains(out, "kindnet-regional") {
		t.Fatalf("the regional cluster got kindnet:\n%s", out)
	}
	for cluster, siteType := range map[string]string{"edge01": "edge", "edge02": "edge", "regional": "regional"} {
		pkg := files("mgmt." + cluster + ".packagevariant-1")
		contains(t, pkg["cluster.yaml"], "name: "+cluster+"-cluster\n", "package: "+cluster+"-cluster\n", "name: "+cluster+"\n", "revision: -1\n")
		contains(t, pkg["rootsync.yaml"], "name: "+cluster+"-rootsync\n", "repo: "+cluster+"\n", "package: rootsync\n")
		contains(t, pkg["repo-porch.yaml"], "name: "+cluster+"\n", "repo: https://git.example.com/nephio/"+cluster+"\n", "nephio.org/site-type: "+siteType)
		contains(t, pkg["workloadcluster.yaml"], "name: "+cluster+"\n", "clusterName: "+cluster+"\n", "nephio.org/site-type: "+siteType)
		capi := files("mgmt." + cluster + "-cluster.packagevariant-1")
		contains(t, capi["cluster.yaml"], "kind: Cluster", "name: "+cluster+"\n", "nephio.org/cluster-name: "+cluster)
		contains(t, capi["workloadcluster.yaml"], "kpt.dev/injected-resource: "+cluster, "clusterName: "+cluster)
		contains(t, files(cluster + ".rootsync.packagevariant-1")["rootsync.yaml"], "kind: RootSync", "nephio.org/cluster-name: "+cluster)
	}
	contains(t, pvctl(ExitOK, "run", "-f", mgmt, "--sync", "mgmt"), "No changes: every downstream package is up to date.")
	if strings.Contains(out, "approved edge01.kindnet") {
		t.Fatalf("a draft without a policy was approved:\n%s", out)
	}
	// Every kindnet draft holds its cluster's data.
	for name, cluster := range map[string]string{"edge01.kindnet.packagevariant-1": "edge01", "edge02.kindnet.packagevariant-1": "edge02"} {
		f := files(name)
		contains(t, f["workloadcluster.yaml"], "kpt.dev/injected-resource: "+cluster, "clusterName: "+cluster)
		contains(t, f["package-context.yaml"], "cluster-name: "+cluster)
		contains(t, f["Kptfile"], "status: \"True\"")
	}
	// A local edit of edge01's kindnet before approval: pull, edit, push.
	edit := filepath.Join(t.TempDir(), "kindnet")
	pvctl(ExitOK, "pull", "edge01.kindnet.packagevariant-1", edit)
	ds := filepath.Join(edit, "daemonset.yaml")
	b, err := os.ReadFile(ds)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ds, bytes.Replace(b, []byte("memory: 50Mi"), []byte("memory: 100Mi"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	pvctl(ExitOK, "push", "edge01.kindnet.packagevariant-1", edit)
	contains(t, pvctl(ExitOK, "run", "-f", mgmt, "--sync", "mgmt"), "No changes: every downstream package is up to date.")
	approveAll := func() {
		t.Helper()
		var drafts []string
		for _, l := range strings.Split(pvctl(ExitOK, "get"), "\n") {
			if f := strings.Fields(l); len(f) == 7 && f[5] == "Draft" {
				drafts = append(drafts, f[0])
			}
		}
		if len(drafts) == 0 {
			t.Fatal("no draft to approve")
		}
		contains(t, pvctl(ExitOK, append([]string{"approve"}, drafts...)...), "approved "+drafts[0])
	}
	approveAll()
	out = pvctl(ExitOK, "get")
	if strings.Contains(out, "Draft") {
		t.Fatalf("drafts remain after approval:\n%s", out)
	}

	// The catalog moves on: kindnet v1.1.0, and the set follows it.
	pvctl(ExitOK, "publish", "--repo", "catalog", "--package", "infra/capi/kindnet", filepath.Join(example, "catalog", "kindnet-v1.1.0"))
	tag("infra/capi/kindnet/v1.1.0", "infra/capi/kindnet/v2")
	set := filepath.Join(mgmt, "kindnet.yaml")
	b, err = os.ReadFile(set)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(set, bytes.Replace(b, []byte("workspaceName: v1.0.0"), []byte("workspaceName: v1.1.0"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out = pvctl(ExitOK, "run", "-f", mgmt, "--sync", "mgmt")
	contains(t, out, "created draft edge01.kindnet.packagevariant-2 (upgrade of edge01.kindnet.packagevariant-1 to catalog-infra-capi.kindnet.v1.1.0)")
	up := files("edge01.kindnet.packagevariant-2")
	contains(t, up["daemonset.yaml"], "kindnetd:v0.2.0", "memory: 100Mi")
	contains(t, up["workloadcluster.yaml"], "clusterName: edge01")
	contains(t, files("edge02.kindnet.packagevariant-2")["daemonset.yaml"], "kindnetd:v0.2.0", "memory: 50Mi")
	approveAll()
	contains(t, pvctl(ExitOK, "run", "-f", mgmt, "--sync", "mgmt"), "No changes: every downstream package is up to date.")
}

// Issue 46 #1: a catalog as Nephio's is laid out, published directory by
// directory as git would hold it: a blueprint that names a specializer
// image that cannot run here and holds a WorkloadCluster injection point
// is published with warnings (function, reason, what a clone needs); a
// package with app/ and crd/ subpackages is published once, and each
// subpackage directory published after it is already there (exit 0,
// nothing written); a subpackage whose files differ is refused, naming the
// enclosing package.
func TestPublishANephioShapedCatalog(t *testing.T) {
	w := newWS(t)
	ks := func(name string) string {
		return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
	}
	catalog := t.TempDir()
	fntest.WriteTree(t, catalog, map[string]string{
		"workloads/free5gc/pkg-example-upf-bp/Kptfile": ks("pkg-example-upf-bp") + "pipeline:\n  mutators:\n" +
			"  - image: docker.io/nephio/nfdeploy-fn:latest\n    configMap:\n      debug: \"false\"\n",
		"workloads/free5gc/pkg-example-upf-bp/workload-cluster.yaml": "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: example\n" +
			"  annotations:\n    config.kubernetes.io/local-config: \"true\"\n    kpt.dev/config-injection: required\nspec:\n  clusterName: example\n",
		"nephio/core/nephio-operator/Kptfile":             ks("nephio-operator"),
		"nephio/core/nephio-operator/app/Kptfile":         ks("app"),
		"nephio/core/nephio-operator/app/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nephio-controller\n  namespace: nephio-system\n",
		"nephio/core/nephio-operator/crd/Kptfile":         ks("crd"),
		"nephio/core/nephio-operator/crd/crd.yaml":        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: networks.infra.nephio.org\n",
	})
	for _, pkg := range []string{"nephio/core/nephio-operator", "nephio/core/nephio-operator/app", "nephio/core/nephio-operator/crd", "workloads/free5gc/pkg-example-upf-bp"} {
		code, out, errs := w.cmd("publish", "--image-pull-policy", "Never", "--repo", "catalog", "--package", pkg, filepath.Join(catalog, pkg))
		if code != ExitOK {
			t.Fatalf("publish %s: exit %d\n%s%s", pkg, code, out, errs)
		}
		switch pkg {
		case "nephio/core/nephio-operator/app", "nephio/core/nephio-operator/crd":
			contains(t, out, "catalog.nephio.core.nephio-operator.v1 already holds these files as its subpackage "+filepath.Base(pkg)+": nothing was published")
		case "workloads/free5gc/pkg-example-upf-bp":
			contains(t, out, "published catalog.workloads.free5gc.pkg-example-upf-bp.v1")
			contains(t, errs, "warning: a clone of "+filepath.Join(catalog, pkg)+" will not render as it is: package .: `pipeline.mutators[0]`", "docker.io/nephio/nfdeploy-fn:latest",
				"will need WorkloadCluster \"example\" injected (workload-cluster.yaml: a required injection point")
		}
	}
	// Porch lists every Kptfile directory on main (its package tree
	// recurses), so the subpackages have main revisions; no revision of
	// their own was published.
	if revs := strings.Join(w.revisions(), "\n"); strings.Contains(revs, "nephio-operator.app.v") || strings.Contains(revs, "nephio-operator.crd.v") ||
		!strings.Contains(revs, "catalog.nephio.core.nephio-operator.app.main") {
		t.Fatalf("the subpackages' revisions:\n%s", revs)
	}
	app := filepath.Join(catalog, "nephio/core/nephio-operator/app")
	if err := os.WriteFile(filepath.Join(app, "deployment.yaml"), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := w.cmd("publish", "--repo", "catalog", "--package", "nephio/core/nephio-operator/app", app)
	if code != ExitNotReady || !strings.Contains(errs, `package "nephio/core/nephio-operator/app" is the subpackage app of the published package "nephio/core/nephio-operator" (catalog.nephio.core.nephio-operator.v1), whose files differ: publish "nephio/core/nephio-operator" with its subpackages to change it; nothing was published`) {
		t.Fatalf("a changed subpackage: exit %d\n%s", code, errs)
	}
}

// Issue 46 #4: a catalog registered per directory as Nephio registers it
// (catalog-workloads-ric: directory workloads/ric of the catalog's git
// repository) is listed and selected by its registered name, with package
// names relative to its directory, by every verb after the run that
// registered it, as Porch lists it; the bare repository is not served by
// its own name too.
func TestDirectoryRepositoriesByTheirRegisteredNames(t *testing.T) {
	w := newWS(t)
	ks := func(name string) string {
		return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n"
	}
	for _, pkg := range []string{"workloads/ric/pkg-example-ric", "workloads/free5gc/free5gc-operator"} {
		dir := filepath.Join(t.TempDir(), filepath.Base(pkg))
		fntest.WriteTree(t, dir, map[string]string{"Kptfile": ks(filepath.Base(pkg)), "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + filepath.Base(pkg) + "\n"})
		w.mustCmd(ExitOK, "publish", "--repo", "catalog", "--package", pkg, dir)
	}
	reg := func(name, dir string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: " + name + "\nspec:\n  type: git\n  git:\n" +
			"    repo: https://github.com/nephio-project/catalog.git\n    branch: main\n    directory: " + dir + "\n"
	}
	w.write("catalog.yaml", reg("catalog-workloads-ric", "workloads/ric")+"---\n"+reg("catalog-workloads-free5gc", "workloads/free5gc"))
	w.run(ExitOK)
	out := w.mustCmd(ExitOK, "get")
	contains(t, out, "catalog-workloads-ric.pkg-example-ric.v1", "catalog-workloads-free5gc.free5gc-operator.v1")
	if strings.Contains(out, "catalog.workloads.") {
		t.Fatalf("the bare repository is listed by its own name too:\n%s", out)
	}
	out = w.mustCmd(ExitOK, "get", "--repo", "catalog-workloads-ric")
	contains(t, out, "catalog-workloads-ric.pkg-example-ric.v1", "pkg-example-ric")
	if strings.Contains(out, "free5gc") {
		t.Fatalf("--repo catalog-workloads-ric:\n%s", out)
	}
	// A variant cloning from it: the draft's lock is named by the
	// registration (pvctl get -o wide's UPSTREAM), the ref by its whole path.
	w.write("ric.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: ric-edge\nspec:\n"+
		"  upstream: {repo: catalog-workloads-ric, package: pkg-example-ric}\n  downstream: {repo: edge-useast1, package: ric}\n")
	w.run(ExitOK)
	out = w.mustCmd(ExitOK, "get", "-o", "wide", "--repo", "edge-useast1", "--package", "ric")
	contains(t, out, "catalog-workloads-ric:workloads/ric/pkg-example-ric/v1")
	// Pulled by its registered name (the verbs that take a revision).
	// A registered repository whose bare repository went is said, not
	// dropped in silence.
	if err := os.Rename(filepath.Join(w.repos, "catalog.git"), filepath.Join(w.repos, "catalog.moved")); err != nil {
		t.Fatal(err)
	}
	_, _, errs := w.cmd("get")
	contains(t, errs, `warning: Repository "catalog-workloads-ric" (registered by the last run) is not served: its bare repository `+filepath.Join(w.repos, "catalog.git")+" is not there")
	if err := os.Rename(filepath.Join(w.repos, "catalog.moved"), filepath.Join(w.repos, "catalog.git")); err != nil {
		t.Fatal(err)
	}
	pulled := filepath.Join(t.TempDir(), "ric")
	w.mustCmd(ExitOK, "pull", "catalog-workloads-ric.pkg-example-ric.v1", pulled)
	contains(t, readFile(t, filepath.Join(pulled, "cm.yaml")), "name: pkg-example-ric")
}
