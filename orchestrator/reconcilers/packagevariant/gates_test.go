package packagevariant

import (
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/variant"
)

// gates reads a package's readiness gates and whether each has a True
// condition, as porchctl approve and Nephio's approval controller check.
func gates(t *testing.T, files map[string]string) (all bool, mutation kptfile.Condition) {
	t.Helper()
	items, err := krm.FilesToItems(map[string]string{kptfile.FileName: files[kptfile.FileName]})
	if err != nil {
		t.Fatal(err)
	}
	kf, err := kptfile.Find(items)
	if err != nil || kf == nil {
		t.Fatalf("no Kptfile: %v", err)
	}
	gs, err := kf.ReadinessGates()
	if err != nil {
		t.Fatal(err)
	}
	conds, err := kf.Conditions()
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]kptfile.Condition{}
	for _, c := range conds {
		status[c.Type] = c
	}
	all = true
	for _, g := range gs {
		all = all && status[g].Status == kptfile.ConditionTrue
	}
	if !strings.Contains(files[kptfile.FileName], "conditionType: "+variant.MutationGate) {
		t.Fatalf("the draft has no %s gate:\n%s", variant.MutationGate, files[kptfile.FileName])
	}
	return all, status[variant.MutationGate]
}

// Issue 21 #3: no draft is approvable before its mutation ran. The draft
// carries the mutation gate, False, from its creation, and the annotation
// that asks for approval is held back; when the mutation's write fails
// (Porch's render refuses it), the draft stays so: approval refuses it.
// Once the mutation lands, the gate is True in that same write and the
// annotation follows. With the memory store (the gate in the first write)
// and with the Porch store on Porch's API (create, then update).
func TestNoDraftApprovableBeforeItsMutation(t *testing.T) {
	for _, onPorch := range []bool{false, true} {
		name := map[bool]string{false: "memory store", true: "Porch store"}[onPorch]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
			if onPorch {
				e.r.Store = &porch.Store{Client: e.store.Client(e.client)}
			}
			e.store.Publish(ns, "blueprints", "app", blueprint(t))
			// Porch renders the clone (fine) and refuses the mutated package.
			e.store.SetRenderer(func(f map[string]string) (map[string]string, store.RenderStatus) {
				if strings.Contains(f["package-context.yaml"], "env: prod") {
					return f, renderStatus(1, "error", "bad", "pipeline.mutators[0] failed")
				}
				return f, store.RenderStatus{}
			})
			e.variant(strings.Replace(appVariant, "  labels: {env: prod}\n",
				"  labels: {env: prod}\n  annotations: {approval.nephio.org/policy: initial, team: web}\n", 1))
			if err := e.reconcile("app-prod"); err == nil {
				t.Fatal("the mutation's write was refused, and the reconcile says nothing")
			}
			drafts := e.downstream("app-prod")
			if len(drafts) != 1 {
				t.Fatalf("drafts: %+v", drafts)
			}
			d := drafts[0]
			ready, gate := gates(t, e.files(d))
			if ready || gate.Status != kptfile.ConditionFalse || gate.Reason != store.PendingReason {
				t.Fatalf("the unfinished draft: every gate True %v, mutation gate %+v", ready, gate)
			}
			if _, ok := d.Annotations[approval.PolicyAnnotation]; ok || d.Annotations["team"] != "web" {
				t.Fatalf("the unfinished draft's annotations: %v (the policy held back, the others written)", d.Annotations)
			}
			dec, err := approval.Decide(approval.Facts{Annotations: d.Annotations, VariantReady: true, GatesTrue: ready, Now: time.Now()})
			if err != nil || dec.Approve {
				t.Fatalf("the unfinished draft is approved: %+v, %v", dec, err)
			}
			e.store.SetRenderer(nil)
			e.mustReconcile("app-prod")
			d = e.downstream("app-prod")[0]
			ready, gate = gates(t, e.files(d))
			if !ready || gate.Status != kptfile.ConditionTrue || gate.Reason != variant.MutatedReason {
				t.Fatalf("the finished draft: every gate True %v, mutation gate %+v", ready, gate)
			}
			if d.Annotations[approval.PolicyAnnotation] != approval.Initial {
				t.Fatalf("the finished draft does not ask for approval: %v", d.Annotations)
			}
			dec, err = approval.Decide(approval.Facts{Annotations: d.Annotations, VariantReady: true, GatesTrue: ready, Now: time.Now()})
			if err != nil || !dec.Approve {
				t.Fatalf("the finished draft is not approved: %+v, %v", dec, err)
			}
			writes := e.totalWrites()
			e.mustReconcile("app-prod") // steady: nothing more
			if e.totalWrites() != writes || len(e.downstream("app-prod")) != 1 {
				t.Fatalf("a steady reconcile wrote again")
			}
		})
	}
}
