package packagevariantset

import (
	"context"
	"strings"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Issue 57 #3's acceptance with the set reconciler: a deny window
// covering the clock (testNow is a Sunday) holds the canary wave: no child
// moves, the RolloutProgressing condition and the status say which window
// and until when, and the set asks to be reconciled when it closes;
// moving the clock out of it opens the wave.
func TestDenyWindowHoldsTheSet(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.set(churnSet + "    windows:\n    - {name: sunday, kind: deny, schedule: \"0 0 * * sun\", duration: 24h}\n")
	e.reconcile()
	e.r.Store.(*fakestore.Store).Publish(ns, "blueprints", "app", storetest.Blueprint)
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app"}})
	if err != nil {
		t.Fatal(err)
	}
	moved := func() []string { return e.pinnedTo(2) }
	if m := moved(); len(m) != 0 {
		t.Fatalf("moved in a deny window: %v", m)
	}
	set := e.getSet()
	c := apimeta.FindStatusCondition(set.Status.Conditions, pvapi.ConditionRolloutProgressing)
	want := `wave canary does not open: in deny window "sunday" (0 0 * * sun for 24h, UTC) until 2026-11-23T00:00:00Z`
	if c == nil || !strings.HasPrefix(c.Message, want) || set.Status.Rollout.Window == nil || set.Status.Rollout.Window.Until != "2026-11-23T00:00:00Z" {
		t.Fatalf("held: %+v\n%+v", c, set.Status.Rollout)
	}
	if res.RequeueAfter != 24*time.Hour+time.Second {
		t.Fatalf("requeue after %s, want when the window closes (24h1s)", res.RequeueAfter)
	}
	// Issue 57 #8: the status says when the next gate is due, and what.
	if n := set.Status.Rollout.Next; n == nil || n.At != "2026-11-23T00:00:00Z" || !strings.HasPrefix(n.What, `the windows are read again: in deny window "sunday"`) {
		t.Fatalf("next gate: %+v", n)
	}
	e.r.Clock = kit.Fixed(testNow.Add(24 * time.Hour))
	e.reconcile()
	m := moved()
	if len(m) != 1 || !strings.Contains(m[0], "r-003") {
		t.Fatalf("out of the window: moved %v, want the canary", m)
	}
	set = e.getSet()
	if set.Status.Rollout.Window != nil {
		t.Fatalf("out of the window: %+v", set.Status.Rollout.Window)
	}
	if wt := set.Status.Rollout.Waves[0].Waiting; len(wt) != 1 || wt[0].Name != m[0] || wt[0].Since != "2026-11-23T00:00:00Z" {
		t.Fatalf("the moved canary waits since its move: %+v", wt)
	}
	if n := set.Status.Rollout.Next; n == nil || n.At != "2026-11-29T00:00:00Z" || n.What != "a window may hold the rollout back from then (spec.rollout.windows)" {
		t.Fatalf("next gate out of the window: %+v", n)
	}
}
