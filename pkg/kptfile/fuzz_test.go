package kptfile

import (
	"testing"

	"github.com/pvkit/pvkit/pkg/krm"
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
