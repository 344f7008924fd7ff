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
		if want := "data:\n  name: " + lock.Package + "\n"; lock.Package == "app" && !strings.HasSuffix(files["package-context.yaml"], want) {
			t.Fatalf("package-context.yaml:\n%s", files["package-context.yaml"])
		}
		if !strings.Contains(files["package-context.yaml"], "kptfile.kpt.dev") || strings.Count(files["package-context.yaml"], lock.Package) != 1 {
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
