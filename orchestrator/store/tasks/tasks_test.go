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
		{Repository: "blue: prints", Package: "x #y", Ref: "{x}/v1"},
	} {
		files, err := Clone(map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"}, lock, lock.Package)
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
	local, err := Clone(v1, &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v1"}, "app")
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
