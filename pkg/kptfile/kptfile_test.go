package kptfile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func load(t *testing.T, text string) *Kptfile {
	t.Helper()
	items, err := krm.FilesToItems(map[string]string{"Kptfile": text})
	if err != nil {
		t.Fatal(err)
	}
	kf, err := Find(items)
	if err != nil || kf == nil {
		t.Fatalf("Find = %v, %v", kf, err)
	}
	return kf
}

func text(t *testing.T, kf *Kptfile) string {
	t.Helper()
	files, err := krm.ItemsToFiles([]*yaml.RNode{kf.Item}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return files["Kptfile"]
}

func TestFind(t *testing.T) {
	kptfile := "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"
	tests := []struct {
		name    string
		files   map[string]string
		found   bool
		wantErr string
	}{
		{"root", map[string]string{"Kptfile": kptfile, "sub/Kptfile": kptfile}, true, ""},
		{"only a subpackage", map[string]string{"sub/Kptfile": kptfile}, false, ""},
		{"two objects", map[string]string{"Kptfile": kptfile + "---\n" + kptfile}, false, "the root Kptfile must hold exactly one object, found 2"},
		{"wrong kind", map[string]string{"Kptfile": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"}, false, `the root Kptfile must be of kind "Kptfile", found kind "ConfigMap"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := krm.FilesToItems(tt.files)
			if err != nil {
				t.Fatal(err)
			}
			kf, err := Find(items)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || (kf != nil) != tt.found {
				t.Fatalf("Find = %v, %v; want found=%v", kf, err, tt.found)
			}
		})
	}
	// A hand-written ResourceList with no paths: the single Kptfile is the root.
	kf, err := Find([]*yaml.RNode{yaml.MustParse(kptfile)})
	if err != nil || kf == nil {
		t.Fatalf("Find without paths = %v, %v", kf, err)
	}
}

func TestReadinessGatesAndConditions(t *testing.T) {
	kf := load(t, `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app # comment kept
info:
  readinessGates:
  - conditionType: z.user.gate # added by a human
status:
  conditions:
  - type: z.other
    status: "True"
  - type: config.injection.ConfigMap.a
    status: "False"
    reason: NoResourceSelected
    message: old # kept comment
`)
	added, err := kf.AddReadinessGates([]string{"config.injection.ConfigMap.a", "config.injection.Team.t", "config.injection.ConfigMap.a"})
	if err != nil || added != 2 {
		t.Fatalf("AddReadinessGates = %d, %v; want 2 added", added, err)
	}
	if added, _ := kf.AddReadinessGates([]string{"config.injection.Team.t"}); added != 0 {
		t.Fatalf("second AddReadinessGates added %d", added)
	}
	err = kf.SetConditions([]Condition{
		{Type: "config.injection.ConfigMap.a", Status: ConditionTrue, Reason: "ConfigInjected", Message: `injected resource "x" from cluster`},
		{Type: "config.injection.Team.t", Status: ConditionFalse, Reason: "NoResourceSelected", Message: "no injectors defined"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app # comment kept
info:
  readinessGates:
  - conditionType: config.injection.ConfigMap.a
  - conditionType: config.injection.Team.t
  - conditionType: z.user.gate # added by a human
status:
  conditions:
  - type: config.injection.ConfigMap.a
    status: "True"
    reason: ConfigInjected
    message: injected resource "x" from cluster # kept comment
  - type: config.injection.Team.t
    status: "False"
    reason: NoResourceSelected
    message: no injectors defined
  - type: z.other
    status: "True"
`
	if diff := cmp.Diff(want, text(t, kf)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	gates, _ := kf.ReadinessGates()
	conds, _ := kf.Conditions()
	if len(gates) != 3 || len(conds) != 3 || conds[0].Reason != "ConfigInjected" {
		t.Fatalf("gates %v, conditions %v", gates, conds)
	}
}

func TestFieldErrors(t *testing.T) {
	tests := []struct {
		text string
		call func(*Kptfile) error
		want string
	}{
		{"info: []\n", func(k *Kptfile) error { _, err := k.ReadinessGates(); return err }, "`info` must be a map, found a list"},
		{"info:\n  readinessGates: x\n", func(k *Kptfile) error { _, err := k.AddReadinessGates([]string{"a"}); return err }, "`info.readinessGates` must be a list, found a scalar"},
		{"info:\n  readinessGates:\n  - {}\n", func(k *Kptfile) error { _, err := k.ReadinessGates(); return err }, "`info.readinessGates[0].conditionType` must be a non-empty string"},
		{"status:\n  conditions:\n  - a\n", func(k *Kptfile) error { return k.SetConditions(nil) }, "`status.conditions[0]` must be a map, found a scalar"},
		{"status:\n  conditions:\n  - status: \"True\"\n", func(k *Kptfile) error { _, err := k.Conditions(); return err }, "`status.conditions[0].type` must be a non-empty string"},
		{"pipeline:\n  mutators: {}\n", func(k *Kptfile) error { _, err := k.Pipeline(Mutators); return err }, "`pipeline.mutators` must be a list, found a map"},
	}
	for _, tt := range tests {
		kf := load(t, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"+tt.text)
		err := tt.call(kf)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: error = %v, want %q", tt.text, err, tt.want)
			continue
		}
		if p := kf.Problem(err); p.Result().File.Path != "Kptfile" || p.Field == "" {
			t.Errorf("%q: problem %+v does not name file and field", tt.text, p)
		}
	}
}

func TestSetPipelinePrunesEmptyParents(t *testing.T) {
	kf := load(t, "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\npipeline:\n  mutators:\n  - image: a\n")
	kf.SetPipeline(Mutators, nil)
	if got := text(t, kf); got != "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n" {
		t.Fatalf("got\n%s", got)
	}
}
