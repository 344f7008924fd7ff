package kptfile

import (
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzKptfile: any bytes as a package's Kptfile. Reading and editing its
// readiness gates, conditions and pipeline must never panic; an edit that
// succeeds leaves a Kptfile whose gates and conditions read back.
func FuzzKptfile(f *testing.F) {
	f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"))
	f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  readinessGates:\n  - conditionType: x\nstatus:\n  conditions:\n  - {type: x, status: \"True\"}\npipeline:\n  mutators:\n  - image: a\n"))
	f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo: {readinessGates: 3}\nstatus: [x]\npipeline: {mutators: {}}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		items, err := krm.FilesToItems(map[string]string{FileName: string(b)})
		if err != nil {
			return
		}
		k, err := Find(items)
		if err != nil || k == nil {
			return
		}
		_, _ = k.Pipeline("mutators")
		if _, err := k.AddReadinessGates([]string{"config.injection.ConfigMap.a"}); err != nil {
			return
		}
		if err := k.SetConditions([]Condition{{Type: "config.injection.ConfigMap.a", Status: "True", Reason: "ConfigInjected", Message: "m"}}); err != nil {
			return
		}
		if _, err := k.ReadinessGates(); err != nil {
			t.Fatalf("gates written by AddReadinessGates do not read back: %v", err)
		}
		if _, err := k.Conditions(); err != nil {
			t.Fatalf("conditions written by SetConditions do not read back: %v", err)
		}
	})
}

// FuzzReadinessGatesAsKpt: pvkit reads the readiness gates kpt and Porch
// read. kpt decodes the Kptfile with YAML's rules (aliases, merge keys) into
// its types; a gate pvkit does not see is a draft `approve` publishes too
// early (issue 18 #9: a gate behind a merge key). Whenever both read the
// gates, they read the same ones.
func FuzzReadinessGatesAsKpt(f *testing.F) {
	for _, s := range []string{
		"info:\n  readinessGates:\n  - conditionType: a\n",
		"info: {<<: {readinessGates: [{conditionType: a}]}}\n",
		"base: &b {readinessGates: [{conditionType: a}, {conditionType: b}]}\ninfo:\n  <<: *b\n",
		"g: &g [{conditionType: a}]\ninfo: {readinessGates: *g}\n",
		"i: &i {readinessGates: [{conditionType: x}]}\ninfo: *i\n",
		"info:\n  <<: [{readinessGates: [{conditionType: first}]}, {readinessGates: [{conditionType: second}]}]\n",
		"info:\n  readinessGates: [{conditionType: own}]\n  <<: {readinessGates: [{conditionType: merged}]}\n",
		"info:\n  readinessGates:\n  - <<: {conditionType: m}\n",
		"info: {\"<<\": {readinessGates: [{conditionType: quoted}]}}\n",
	} {
		f.Add([]byte("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n" + s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var kpt struct {
			Info struct {
				ReadinessGates []struct {
					ConditionType string `yaml:"conditionType"`
				} `yaml:"readinessGates"`
			} `yaml:"info"`
		}
		if yaml.Unmarshal(b, &kpt) != nil {
			return
		}
		items, err := krm.FilesToItems(map[string]string{FileName: string(b)})
		if err != nil || len(items) != 1 {
			return
		}
		k, err := Find(items)
		if err != nil || k == nil {
			return
		}
		got, err := k.ReadinessGates()
		if err != nil {
			return
		}
		var want []string
		for _, g := range kpt.Info.ReadinessGates {
			want = append(want, g.ConditionType)
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("pvkit reads the gates %q, kpt reads %q, in:\n%s", got, want, b)
		}
	})
}
