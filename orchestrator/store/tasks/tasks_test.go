package tasks

import (
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
)

func TestLockRoundTrip(t *testing.T) {
	lock := &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v3"}
	files, err := Clone(map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"}, lock, "app-prod")
	if err != nil {
		t.Fatal(err)
	}
	got, err := LockOf(files)
	if err != nil || got == nil || *got != *lock {
		t.Fatalf("LockOf = %+v, %v; want %+v\n%s", got, err, lock, files["Kptfile"])
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
