package kptfile

import "testing"

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
