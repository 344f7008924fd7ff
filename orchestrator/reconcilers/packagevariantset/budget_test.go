package packagevariantset

import (
	"slices"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// With the controller: a failed canary pauses the rollout at once though
// the rollout's budget (5% of 10: 1) would absorb it, since the first
// wave's budget is 0; the set says so in its rollout status (the wave's
// failed count), its RolloutPaused condition and a Warning Event.
func TestFailedCanaryPausesWhateverTheFleetsBudget(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.set(churnSet)
	e.reconcile()
	st := e.r.Store.(*fakestore.Store)
	for _, v := range children(t, e.client) {
		settle(t, st, e.client, v, false)
	}
	e.reconcile()
	st.Publish(ns, "blueprints", "app", storetest.Blueprint)
	e.reconcile() // the canary moves
	var moved []string
	for name, v := range children(t, e.client) {
		if v.Spec.Upstream.Revision == 2 {
			moved = append(moved, name)
			settle(t, st, e.client, v, true) // and fails
		}
	}
	if len(moved) != 1 || !strings.Contains(moved[0], "r-003") {
		t.Fatalf("want the canary (r-003) alone moved: %v", moved)
	}
	e.events()
	e.reconcile()
	set := e.getSet()
	r := set.Status.Rollout
	if r == nil || r.Phase != "Paused" || !strings.Contains(r.Message, "paused in wave canary: 1 failed child(ren), more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise): "+moved[0]) {
		t.Fatalf("rollout: %+v", r)
	}
	if w := r.Waves[0]; w.Failed != 1 || w.Moved != 1 || w.Done != 0 {
		t.Fatalf("the canary's counts: %+v", w)
	}
	c := apimeta.FindStatusCondition(set.Status.Conditions, pvapi.ConditionRolloutPaused)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonErrorBudgetExceeded {
		t.Fatalf("RolloutPaused: %+v", c)
	}
	if ev := e.events(); !slices.Contains(ev, "Warning RolloutPaused") {
		t.Fatalf("events: %v", ev)
	}
	for name, v := range children(t, e.client) {
		if name != moved[0] && v.Spec.Upstream.Revision == 2 {
			t.Fatalf("%s moved past the failed canary", name)
		}
	}
}
