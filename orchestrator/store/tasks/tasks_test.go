package tasks

import (
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
)

func TestLockRoundTrip(t *testing.T) {
	// Packages and refs with YAML's special characters are recorded as they
	// are (the lock is built as nodes, not formatted text).
	for _, lock := range []*store.Lock{
		{Repository: "blueprints", Package: "app", Ref: "app/v3"},
		{Repository: "blueprints", Package: "a,b", Ref: "a,b/v1"},
		{URL: "file:///repos/blue: prints.git", Package: "x #y", Ref: "{x}/v1", Commit: "0123abcd"},
		{URL: "https://github.com/nephio-project/catalog.git", Package: "infra/capi/kindnet", Ref: "infra/capi/kindnet/v3.0.0"},
	} {
		files, err := Clone(map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"}, lock, lock.Package, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := LockOf(files)
		if err != nil || got == nil || *got != *lock {
			t.Fatalf("LockOf = %+v, %v; want %+v\n%s", got, err, lock, files["Kptfile"])
		}
		if want := "data:\n  name: " + lock.Package + "\n  package-path: " + lock.Package + "\n"; lock.Package == "app" && !strings.HasSuffix(files["package-context.yaml"], want) {
			t.Fatalf("package-context.yaml:\n%s", files["package-context.yaml"])
		}
		if !strings.Contains(files["package-context.yaml"], "kptfile.kpt.dev") || strings.Count(files["package-context.yaml"], lock.Package) != 2 {
			t.Fatalf("package-context.yaml:\n%s", files["package-context.yaml"])
		}
	}
	for name, in := range map[string]map[string]string{
		"no Kptfile":      {"a.yaml": "a: 1\n"},
		"no upstreamLock": {"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"},
	} {
		if got, err := LockOf(in); got != nil || err != nil {
			t.Errorf("%s: LockOf = %+v, %v; want none", name, got, err)
		}
	}
	if _, err := LockOf(map[string]string{"Kptfile": "a: [\n"}); err == nil || !strings.HasPrefix(err.Error(), "Kptfile: ") {
		t.Errorf("a broken Kptfile: err = %v, want one naming the Kptfile", err)
	}
}

// An upgrade finds a resource that a function moved to another namespace
// since the clone (set-namespace in the package's pipeline) by the merge
// key the clone recorded, as Porch's does: the upstream's change lands and
// the local namespace stays. Without the key, the upstream change was lost.
func TestUpgradeFollowsMergeKeys(t *testing.T) {
	kptfile := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"
	dep := func(image string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: " + image + "\n"
	}
	v1 := map[string]string{"Kptfile": kptfile, "deployment.yaml": dep("nginx:1.27")}
	v2 := map[string]string{"Kptfile": kptfile, "deployment.yaml": dep("nginx:1.28")}
	local, err := Clone(v1, &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v1"}, "app", true)
	if err != nil {
		t.Fatal(err)
	}
	local["deployment.yaml"] = strings.Replace(local["deployment.yaml"], "  name: web\n", "  name: web\n  namespace: prod\n", 1)
	out, err := Upgrade(v1, v2, local, &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v2"})
	if err != nil {
		t.Fatal(err)
	}
	d := out["deployment.yaml"]
	if !strings.Contains(d, "image: nginx:1.28") || !strings.Contains(d, "namespace: prod") || strings.Count(d, "kind: Deployment") != 1 {
		t.Fatalf("upgraded deployment:\n%s", d)
	}
	if !strings.Contains(d, "metadata: # kpt-merge: /web") || !strings.Contains(d, "internal.kpt.dev/upstream-identifier: 'apps|Deployment|default|web'") {
		t.Fatalf("the merge key is gone:\n%s", d)
	}
}

// Rule porch-clone-shape (issue 29 #4), as measured on Porch v1.5.3
// (test/porch TestLocalCloneMatchesPorch compares the bytes on a real
// Porch): the Kptfile named after the new package and written in Porch's
// encoding (its comments gone, its fields in kpt's order), the upstream by
// URL with the commit, a package context beside every Kptfile in a
// deployment repository (package-path: the new package) and the
// upstream's context kept elsewhere.
func TestCloneShape(t *testing.T) {
	up := map[string]string{
		"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app # the blueprint\n  annotations:\n    x: y\ninfo:\n  description: d\n",
		"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: example\n  dropped: on-clone\n",
		"sub/Kptfile":          "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
	}
	lock := &store.Lock{Repository: "blueprints", URL: "file:///repos/blueprints.git", Package: "app", Ref: "app/v1", Commit: "2afca64bb18671dc8ffb1cf352cfc33ec174606d"}
	wantKptfile := `apiVersion: kpt.dev/v1
kind: Kptfile
metadata: # kpt-merge: /team/shape
  name: team/shape
  annotations:
    x: "y"
    internal.kpt.dev/upstream-identifier: 'kpt.dev|Kptfile|default|team/shape'
upstream:
  type: git
  git:
    repo: file:///repos/blueprints.git
    directory: app
    ref: app/v1
upstreamLock:
  type: git
  git:
    repo: file:///repos/blueprints.git
    directory: app
    ref: app/v1
    commit: 2afca64bb18671dc8ffb1cf352cfc33ec174606d
info:
  description: d
`
	context := func(name, path string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: # kpt-merge: /kptfile.kpt.dev\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n" +
			"    internal.kpt.dev/upstream-identifier: '|ConfigMap|default|kptfile.kpt.dev'\ndata:\n  name: " + name + "\n  package-path: " + path + "\n"
	}
	for _, deployment := range []bool{true, false} {
		files, err := Clone(up, lock, "team/shape", deployment)
		if err != nil {
			t.Fatal(err)
		}
		if files["Kptfile"] != wantKptfile {
			t.Errorf("deployment=%v: Kptfile:\n%s\nwant:\n%s", deployment, files["Kptfile"], wantKptfile)
		}
		ctx, sub := files["package-context.yaml"], files["sub/package-context.yaml"]
		switch {
		case deployment && (ctx != context("team/shape", "team/shape") || sub != context("sub", "team/shape")):
			t.Errorf("a deployment repository's contexts:\n%s\n%s", ctx, sub)
		case !deployment && (!strings.Contains(ctx, "name: example\n  dropped: on-clone") || sub != ""):
			t.Errorf("elsewhere the upstream's context is kept, none generated:\n%s\n%s", ctx, sub)
		}
		if up["Kptfile"] == files["Kptfile"] || strings.Contains(up["Kptfile"], "upstream:") {
			t.Fatal("the upstream's files were changed")
		}
	}

	// A Kptfile kpt's type cannot hold (a field it lacks) is edited as nodes,
	// everything in it kept (Porch would fail the clone).
	odd := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app # kept\nnotKpt: kept\n"}
	files, err := Clone(odd, lock, "shape", false)
	if err != nil {
		t.Fatal(err)
	}
	if k := files["Kptfile"]; !strings.Contains(k, "name: shape") || !strings.Contains(k, "notKpt: kept") || !strings.Contains(k, "commit: 2afca64bb18671dc8ffb1cf352cfc33ec174606d") {
		t.Errorf("an odd Kptfile:\n%s", k)
	}
	if got, err := LockOf(files); err != nil || *got != (store.Lock{URL: lock.URL, Package: "app", Ref: "app/v1", Commit: lock.Commit}) {
		t.Errorf("LockOf = %+v, %v: a URL is read back as the URL, no repository name", got, err)
	}
}

// Porch writes the Kptfile anew when a draft's gates change: pvkit's gates
// give the bytes Porch's do (the merge comment gone, as on Porch).
func TestGatesWriteTheKptfileAsPorch(t *testing.T) {
	files, err := WithPendingGates(map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata: # kpt-merge: /app\n  name: app # a comment\n"}, []string{"pvkit.dev/mutation"})
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  readinessGates:\n  - conditionType: pvkit.dev/mutation\n" +
		"status:\n  conditions:\n  - type: pvkit.dev/mutation\n    status: \"False\"\n    reason: " + store.PendingReason + "\n    message: " + store.PendingMessage + "\n"
	if files["Kptfile"] != want {
		t.Errorf("Kptfile:\n%s\nwant:\n%s", files["Kptfile"], want)
	}
}

// A clone names its Kptfile after the downstream package; an upgrade of a
// package whose downstream name is not the upstream's (free5gc-smf cloned
// as smf) matched no upstream Kptfile and kept the old one whole: the new
// upstream's pipeline and info were dropped (found by examples/groups).
// The Kptfile is matched by its file: the upgrade takes the upstream's
// changes and keeps the downstream's name.
func TestUpgradeMergesARenamedKptfile(t *testing.T) {
	v1 := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc-smf\ninfo:\n  description: v1\n"}
	v2 := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc-smf\ninfo:\n  description: v2\npipeline:\n  validators:\n  - image: check:v1\n"}
	local, err := Clone(v1, &store.Lock{Repository: "catalog", Package: "free5gc-smf", Ref: "free5gc-smf/v1"}, "smf", true)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Upgrade(v1, v2, local, &store.Lock{Repository: "catalog", Package: "free5gc-smf", Ref: "free5gc-smf/v2"})
	if err != nil {
		t.Fatal(err)
	}
	kf := out["Kptfile"]
	if !strings.Contains(kf, "name: smf\n") || !strings.Contains(kf, "description: v2") || !strings.Contains(kf, "image: check:v1") || strings.Count(kf, "kind: Kptfile") != 1 {
		t.Fatalf("the upgraded Kptfile:\n%s", kf)
	}
}
