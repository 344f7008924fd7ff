package packagevariantset

import (
	"slices"
	"testing"

	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Issue 32 #4: a suspended set creates, changes and removes no child while
// its targets change, and says so; resumed, it catches up at once and
// records the reconcile request it handled.
func TestSuspendedSetWritesNoChild(t *testing.T) {
	e := newEnv(t, world()...)
	e.set(fanout)
	e.reconcile()
	if n := len(e.children()); n != 4 {
		t.Fatalf("%d children before the suspension", n)
	}
	e.events()
	e.editSet(func(s *pvsapi.PackageVariantSet) {
		s.Annotations = map[string]string{kit.SuspendAnnotation: "true"}
		s.Spec.Targets = s.Spec.Targets[1:] // would remove cluster-01's children
		s.Spec.Targets[0].Template = nil
	})
	e.reconcile()
	before := e.total()
	e.reconcile()
	if w := e.total() - before; w != 0 {
		t.Fatalf("a suspended set reconciled again made %d writes", w)
	}
	if n := len(e.children()); n != 4 {
		t.Fatalf("a suspended set changed its children: %d", n)
	}
	c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, kit.ConditionSuspended)
	if c == nil || c.Status != metav1.ConditionTrue || c.Message != `PackageVariantSet app is suspended (pvkit.dev/suspend: "true"): nothing is written to Porch or to a child until it is resumed` {
		t.Fatalf("Suspended = %+v", c)
	}
	if ev := e.events(); !slices.Equal(ev, []string{"Normal Suspended"}) {
		t.Errorf("events: %q", ev)
	}
	e.editSet(func(s *pvsapi.PackageVariantSet) {
		s.Annotations = map[string]string{kit.ReconcileRequestAnnotation: "now-1"}
	})
	e.reconcile()
	if _, ok := e.children()["app-cluster-01-app"]; ok || len(e.children()) != 3 {
		t.Fatalf("resumed: children %v, want cluster-01's app gone (the team's, cluster-02's and cluster-03's left)", e.children())
	}
	s := e.getSet()
	if apimeta.FindStatusCondition(s.Status.Conditions, kit.ConditionSuspended) != nil || s.Status.LastHandledReconcileAt != "now-1" {
		t.Errorf("resumed: conditions %+v, lastHandledReconcileAt %q", s.Status.Conditions, s.Status.LastHandledReconcileAt)
	}
	if ev := e.events(); len(ev) == 0 || ev[0] != "Normal Resumed" {
		t.Errorf("events on resuming: %q", ev)
	}
}
