package tasks

import (
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
)

func TestConflicts(t *testing.T) {
	kf := func(ref string) string {
		return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\nupstreamLock:\n  type: git\n  git: {repo: blueprints, directory: app, ref: " + ref + "}\n"
	}
	deploy := func(image, replicas, sidecar string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: " + replicas +
			"\n  template:\n    spec:\n      containers:\n      - name: web\n        image: " + image + "\n      - name: log\n        image: " + sidecar + "\n"
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\ndata: {a: b}\n"
	old := map[string]string{"Kptfile": kf("app/v1"), "d.yaml": deploy("nginx:1", "1", "fluent:1"), "cm.yaml": cm}
	up := map[string]string{"Kptfile": kf("app/v2"), "d.yaml": deploy("nginx:2", "1", "fluent:2")}
	local := map[string]string{"Kptfile": kf("app/v0-local"), "d.yaml": deploy("nginx:1", "4", "fluent:local"),
		"cm.yaml": strings.Replace(cm, "a: b", "a: c", 1)}

	got, err := Conflicts(old, up, local)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.String())
	}
	want := []string{
		"cm.yaml: ConfigMap/gone (the whole object): the upstream changed present to <absent>, the draft has changed",
		"d.yaml: Deployment/web spec.template.spec.containers[name=log].image: the upstream changed fluent:1 to fluent:2, the draft has fluent:local",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Only one side changed, or both the same way: no conflict.
	if got, err := Conflicts(old, up, up); err != nil || len(got) != 0 {
		t.Fatalf("same change both sides: %v %v", got, err)
	}
	if _, err := Conflicts(old, up, map[string]string{"x.yaml": "a: [\n"}); err == nil || !strings.Contains(err.Error(), "the draft: ") {
		t.Fatalf("a draft that does not parse: %v", err)
	}
}

// Issue 47 #9: an upstream that adds a readiness gate conflicted with
// pvkit's own gate in every unapproved draft (UpgradeConflict on
// info.readinessGates, no person's edit anywhere). Gates merge by
// condition type: pvkit's stays, the upstream's is added, one the upstream
// removed goes, a person's stays; two sides that disagree on one gate's
// entry still conflict, named by its condition type.
func TestReadinessGatesMergeByConditionType(t *testing.T) {
	kf := func(gates ...string) string {
		s := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"
		if len(gates) > 0 {
			s += "info:\n  readinessGates:\n"
			for _, g := range gates {
				s += "  - conditionType: " + g + "\n"
			}
		}
		return s
	}
	const mine, theirs, persons, dropped = "pvkit.dev/mutation", "example.com/reviewed", "example.com/signed-off", "example.com/legacy"
	old := map[string]string{"Kptfile": kf(dropped)}
	up := map[string]string{"Kptfile": kf(theirs)}
	local := map[string]string{"Kptfile": kf(dropped, persons, mine)}
	if got, err := Conflicts(old, up, local); err != nil || len(got) != 0 {
		t.Fatalf("conflicts: %v %v", got, err)
	}
	merged, err := Upgrade(old, up, local, &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v2"})
	if err != nil {
		t.Fatal(err)
	}
	want := kf(theirs, persons, mine) // sorted by condition type
	if !strings.Contains(merged["Kptfile"], strings.TrimPrefix(want, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n")) {
		t.Fatalf("merged Kptfile:\n%s\nwant its gates:\n%s", merged["Kptfile"], want)
	}
	// A gate entry both sides changed differently (a field besides the type).
	with := func(g, extra string) map[string]string {
		return map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  readinessGates:\n  - conditionType: " + g + "\n" + extra}
	}
	got, err := Conflicts(with(theirs, ""), with(theirs, "    note: upstream\n"), with(theirs, "    note: draft\n"))
	if err != nil || len(got) != 1 || got[0].Field != "info.readinessGates[conditionType=example.com/reviewed].note" {
		t.Fatalf("conflicts: %v %v", got, err)
	}
}
