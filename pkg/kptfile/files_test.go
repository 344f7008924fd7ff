package kptfile

import (
	"strings"
	"testing"
)

func TestNotReadyAndEdit(t *testing.T) {
	files := map[string]string{FileName: "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  readinessGates:\n  - conditionType: a\n  - conditionType: b\n"}
	kf, err := FromFiles(files)
	if err != nil || kf == nil {
		t.Fatal(err)
	}
	if g, c, err := kf.NotReady(); err != nil || g != "a" || c != nil {
		t.Fatalf("no conditions: %q %v %v", g, c, err)
	}
	files, err = Edit(files, func(k *Kptfile) error {
		return k.SetConditions([]Condition{{Type: "a", Status: ConditionTrue}, {Type: "b", Status: ConditionFalse, Reason: "Pending"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	kf, _ = FromFiles(files)
	if g, c, err := kf.NotReady(); err != nil || g != "b" || c == nil || c.Reason != "Pending" {
		t.Fatalf("b False: %q %+v %v", g, c, err)
	}
	files, _ = Edit(files, func(k *Kptfile) error { return k.SetConditions([]Condition{{Type: "b", Status: ConditionTrue}}) })
	kf, _ = FromFiles(files)
	if g, _, err := kf.NotReady(); err != nil || g != "" {
		t.Fatalf("all True: %q %v", g, err)
	}
	if out, err := Edit(map[string]string{"a.yaml": "x: 1\n"}, nil); err != nil || len(out) != 1 {
		t.Fatalf("no Kptfile: %v %v", out, err)
	}
}

func TestFunctionNames(t *testing.T) {
	kf, err := FromFiles(map[string]string{FileName: "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n" +
		"  - image: gcr.io/kpt-fn/set-labels:v0.2\n  - exec: ./fn\n  validators:\n  - image: v\n"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := kf.FunctionNames(Mutators)
	if err != nil || strings.Join(got, " ") != "gcr.io/kpt-fn/set-labels:v0.2 ./fn" {
		t.Fatalf("FunctionNames = %v, %v", got, err)
	}
	kf, _ = FromFiles(map[string]string{FileName: "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators: 3\n"})
	if _, err := kf.FunctionNames(Mutators); err == nil || !strings.Contains(err.Error(), "pipeline.mutators") {
		t.Fatalf("a pipeline that is not a list: %v", err)
	}
}
