// Package storetest is the test suite every store.Store passes: the Porch
// behaviours the orchestrator relies on, checked the same way on each
// implementation.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// Harness is a store under test plus the seeding the orchestrator itself
// never does (it never publishes).
type Harness interface {
	store.Store
	AddRepository(namespace, name string)
	Publish(namespace, repo, pkg string, files map[string]string) store.Revision
	Approve(namespace, name string) (store.Revision, error)
}

const ns = "default"

// Blueprint is a small upstream package.
var Blueprint = map[string]string{
	"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
	"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: app\n  upstream-only: dropped-on-clone\n",
	"deployment.yaml":      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.26\n",
	"README.md":            "# app\n",
}

// Release is an upstream's n'th revision for the long runs (the soak, the
// scale runs): a Kptfile, the package context and a ConfigMap that names
// n, all local config but the ConfigMap.
func Release(n int) map[string]string {
	return map[string]string{
		"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: app\n",
		"app.yaml":             fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  release: \"%d\"\n", n),
	}
}

// Run runs the suite; newHarness returns a fresh, empty store.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("clone", func(t *testing.T) { testClone(t, newHarness(t)) })
	t.Run("list", func(t *testing.T) { testList(t, newHarness(t)) })
	t.Run("resources", func(t *testing.T) { testResources(t, newHarness(t)) })
	t.Run("edit and upgrade", func(t *testing.T) { testEditUpgrade(t, newHarness(t)) })
	t.Run("lifecycle", func(t *testing.T) { testLifecycle(t, newHarness(t)) })
	t.Run("readiness gates from the first write", func(t *testing.T) { testPendingGates(t, newHarness(t)) })
	t.Run("Porch's failure modes, settled", func(t *testing.T) { testQuirks(t, newHarness(t)) })
}

// testPendingGates: a draft created with readiness gates carries them,
// each with a False condition, next to the package's own, in every kind of
// draft (clone, edit, upgrade).
func testPendingGates(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	bp := map[string]string{}
	for k, v := range Blueprint {
		bp[k] = v
	}
	bp["Kptfile"] += "info:\n  readinessGates:\n  - conditionType: config.injection.ConfigMap.endpoints\n"
	up := h.Publish(ns, "blueprints", "app", bp)
	gate := "pvkit.dev/mutation"
	check := func(name string) {
		t.Helper()
		res, err := h.GetResources(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		kf := res.Files["Kptfile"]
		for _, want := range []string{"- conditionType: config.injection.ConfigMap.endpoints\n", "- conditionType: pvkit.dev/mutation\n",
			"  - type: pvkit.dev/mutation\n    status: \"False\"\n    reason: Pending\n    message: set when the draft was created; True once its owner has finished it\n"} {
			if !strings.Contains(kf, want) {
				t.Errorf("%s: Kptfile without %q:\n%s", name, want, kf)
			}
		}
	}
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app", Workspace: "packagevariant-1",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}, ReadinessGates: []string{gate}})
	if err != nil {
		t.Fatal(err)
	}
	check(rev.Name)
	pub, err := h.Approve(ns, rev.Name)
	if err != nil {
		t.Fatal(err)
	}
	edit, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app", Workspace: "packagevariant-2",
		Task: store.Task{Type: store.Edit, Source: pub.Name}, ReadinessGates: []string{gate}})
	if err != nil {
		t.Fatal(err)
	}
	check(edit.Name)
	up2 := h.Publish(ns, "blueprints", "app", bp)
	upg, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app", Workspace: "packagevariant-3",
		Task: store.Task{Type: store.Upgrade, OldUpstream: up.Name, NewUpstream: up2.Name, Local: pub.Name}, ReadinessGates: []string{gate}})
	if err != nil {
		t.Fatal(err)
	}
	check(upg.Name)
}

func clone(t *testing.T, h Harness, ws string, up store.Revision) store.Revision {
	t.Helper()
	rev, err := h.CreateDraft(context.Background(), store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod", Workspace: ws,
		Owners: []store.OwnerRef{{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "PackageVariant", Name: "pv", UID: "uid-1", Controller: true}},
		Labels: map[string]string{"env": "prod"}, Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func testClone(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	up := h.Publish(ns, "blueprints", "app", Blueprint)
	rev := clone(t, h, "packagevariant-1", up)
	if rev.Name != "deploy.app-prod.packagevariant-1" || rev.Lifecycle != store.Draft || rev.Revision != 0 || !rev.OwnedBy("uid-1") || rev.Labels["env"] != "prod" {
		t.Fatalf("draft = %+v", rev)
	}
	// Porch's lock names the upstream repository by its git URL, so the Porch
	// store leaves Lock.Repository empty; the others name the Repository.
	if rev.Lock == nil || rev.Lock.Ref != "app/v1" || rev.Lock.Revision() != 1 || (rev.Lock.Repository != "blueprints" && rev.Lock.Repository != "") || !rev.Lock.Matches(up) {
		t.Fatalf("lock = %+v", rev.Lock)
	}
	res, err := h.GetResources(ctx, ns, rev.Name)
	if err != nil {
		t.Fatal(err)
	}
	// Porch's clone marks each resource with its upstream identity (the
	// kpt-merge comment and internal.kpt.dev/upstream-identifier), as a
	// real Porch v1.5.3 writes them (make e2e-porch).
	wantDeployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: # kpt-merge: /web\n  name: web\n  annotations:\n    internal.kpt.dev/upstream-identifier: 'apps|Deployment|default|web'\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.26\n"
	if res.Files["deployment.yaml"] != wantDeployment || res.Files["README.md"] != "# app\n" {
		t.Fatalf("clone did not copy the upstream files:\n%s", res.Files["deployment.yaml"])
	}
	if c := res.Files["package-context.yaml"]; !strings.Contains(c, "name: app-prod\n  package-path: app-prod") || strings.Contains(c, "upstream-only") {
		t.Fatalf("package context not regenerated for the downstream:\n%s", c)
	}
	if k := res.Files["Kptfile"]; !strings.Contains(k, "upstreamLock:") || !strings.Contains(k, "ref: app/v1") {
		t.Fatalf("Kptfile does not record the upstream lock:\n%s", k)
	}
	_, err = h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod", Workspace: "packagevariant-1",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second create of a workspace: %v, want ErrAlreadyExists", err)
	}
	// Read: the revision directly, past any cache.
	read, err := h.Read(ctx, ns, rev.Name)
	if err != nil || read.Name != rev.Name || read.Workspace != "packagevariant-1" || read.Lifecycle != store.Draft || read.Lock == nil || !read.Lock.Matches(up) {
		t.Fatalf("Read(%s) = %+v, %v", rev.Name, read, err)
	}
	if _, err := h.Read(ctx, ns, "deploy.app-prod.nosuch"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Read of a missing revision: %v, want ErrNotFound", err)
	}
	_, err = h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "nowhere", Package: "x", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("create in a missing repository: %v, want ErrNotFound", err)
	}
}

func testList(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	up := h.Publish(ns, "blueprints", "app", Blueprint)
	h.Publish(ns, "blueprints", "app", Blueprint)
	h.Publish(ns, "blueprints", "other", Blueprint)
	clone(t, h, "packagevariant-1", up)
	all, err := h.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: "blueprints", Package: "app"})
	// A store that lists Porch's branch placeholder (revision -1, workspace
	// main) as Porch does may: the numbered revisions are the suite's.
	var revs []store.Revision
	for _, r := range all {
		if r.Revision == -1 && r.Workspace == "main" {
			continue
		}
		revs = append(revs, r)
	}
	if err != nil || len(revs) != 2 || revs[0].Revision != 1 || revs[1].Revision != 2 {
		t.Fatalf("ListRevisions = %+v, %v", all, err)
	}
	owned, err := h.ListOwned(ctx, ns, "uid-1")
	if err != nil || len(owned) != 1 || owned[0].Package != "app-prod" {
		t.Fatalf("ListOwned = %+v, %v", owned, err)
	}
	if owned, _ := h.ListOwned(ctx, "elsewhere", "uid-1"); len(owned) != 0 {
		t.Fatalf("ListOwned crossed namespaces: %+v", owned)
	}
}

func testResources(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	up := h.Publish(ns, "blueprints", "app", Blueprint)
	rev := clone(t, h, "packagevariant-1", up)
	res, _ := h.GetResources(ctx, ns, rev.Name)
	res.Files["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	if _, _, err := h.UpdateResourcesRendered(ctx, ns, rev.Name, res); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.UpdateResourcesRendered(ctx, ns, rev.Name, res); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("update with a stale version: %v, want ErrConflict", err)
	}
	got, _ := h.GetResources(ctx, ns, rev.Name)
	if got.Files["extra.yaml"] == "" || got.ResourceVersion == res.ResourceVersion {
		t.Fatalf("update not stored: %+v", got)
	}
	if _, _, err := h.UpdateResourcesRendered(ctx, ns, up.Name, store.Resources{Files: Blueprint}); err == nil {
		t.Fatal("a published revision must not change")
	}
}

func testEditUpgrade(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	v1 := h.Publish(ns, "blueprints", "app", Blueprint)
	v2files := map[string]string{}
	for k, v := range Blueprint {
		v2files[k] = v
	}
	v2files["deployment.yaml"] = strings.Replace(Blueprint["deployment.yaml"], "nginx:1.26", "nginx:1.27", 1)
	v2files["service.yaml"] = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
	v2 := h.Publish(ns, "blueprints", "app", v2files)

	local := clone(t, h, "packagevariant-1", v1)
	res, _ := h.GetResources(ctx, ns, local.Name)
	res.Files["deployment.yaml"] = strings.Replace(res.Files["deployment.yaml"], "replicas: 1", "replicas: 5", 1)
	if _, _, err := h.UpdateResourcesRendered(ctx, ns, local.Name, res); err != nil {
		t.Fatal(err)
	}
	local, err := h.Approve(ns, local.Name)
	if err != nil || local.Revision != 1 {
		t.Fatalf("approve: %+v %v", local, err)
	}
	edit, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod", Workspace: "packagevariant-2",
		Task: store.Task{Type: store.Edit, Source: local.Name}})
	if err != nil || edit.Lock == nil || edit.Lock.Ref != "app/v1" {
		t.Fatalf("edit: %+v %v", edit, err)
	}
	if e, _ := h.GetResources(ctx, ns, edit.Name); !strings.Contains(e.Files["deployment.yaml"], "replicas: 5") {
		t.Fatalf("edit did not copy the source:\n%s", e.Files["deployment.yaml"])
	}
	up, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod", Workspace: "packagevariant-3",
		Task: store.Task{Type: store.Upgrade, OldUpstream: v1.Name, NewUpstream: v2.Name, Local: local.Name}})
	if err != nil || up.Lock == nil || up.Lock.Ref != "app/v2" {
		t.Fatalf("upgrade: %+v %v", up, err)
	}
	u, _ := h.GetResources(ctx, ns, up.Name)
	d := u.Files["deployment.yaml"]
	if !strings.Contains(d, "replicas: 5") || !strings.Contains(d, "nginx:1.27") || u.Files["service.yaml"] == "" {
		t.Fatalf("upgrade must keep the local change and take the upstream's:\n%s\n%v", d, u.Files)
	}
	if !strings.Contains(u.Files["Kptfile"], "ref: app/v2") {
		t.Fatalf("upgrade did not move the lock:\n%s", u.Files["Kptfile"])
	}
}

func testLifecycle(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	up := h.Publish(ns, "blueprints", "app", Blueprint)
	rev := clone(t, h, "packagevariant-1", up)
	rev.Lifecycle = store.Published
	if err := h.Update(ctx, rev); err == nil {
		t.Fatal("publishing must go through approval")
	}
	rev.Lifecycle = store.Proposed
	rev.ResourceVersion = ""
	if err := h.Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	pub, err := h.Approve(ns, rev.Name)
	if err != nil || pub.Revision != 1 || pub.Lifecycle != store.Published {
		t.Fatalf("approve: %+v %v", pub, err)
	}
	if err := h.Delete(ctx, ns, pub.Name); err == nil {
		t.Fatal("a Published revision must be proposed for deletion first")
	}
	pub.Lifecycle, pub.ResourceVersion = store.DeletionProposed, ""
	if err := h.Update(ctx, pub); err != nil {
		t.Fatal(err)
	}
	if err := h.Delete(ctx, ns, pub.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := h.GetResources(ctx, ns, pub.Name); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted revision: %v, want ErrNotFound", err)
	}
}
