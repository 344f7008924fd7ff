package tasks

import (
	"strings"
	"testing"
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
