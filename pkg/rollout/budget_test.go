package rollout

import (
	"strings"
	"testing"
)

// A failed canary stops the rollout whatever the fleet's budget: the
// first wave of two or more has a budget of 0 unless it says otherwise.
func TestCanaryBudgetIsZeroByDefault(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.ErrorBudget = amount("1")
	f.plan(ref(1))
	f.failing["c07"] = true
	f.plan(ref(2)) // the canary moves
	f.events = nil
	r := f.plan(ref(2))
	want := "paused in wave canary: 1 failed child(ren), more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise): c07: Stalled: draft rejected; fix them or skip them (pvctl rollout skip)"
	if r.Pause != PausedByBudget || f.status.Phase != Paused || f.status.Message != want {
		t.Fatalf("a failed canary within the fleet's budget of 1: %s %s: %s", r.Pause, f.status.Phase, f.status.Message)
	}
	if w := f.status.Waves[0]; w.Failed != 1 || w.Moved != 1 || w.Done != 0 || w.State != WaveOpen {
		t.Fatalf("the canary's counts: %+v", w)
	}
	if len(f.events) != 1 || !strings.HasPrefix(f.events[0], "RolloutPaused: paused in wave canary: 1 failed") {
		t.Fatalf("events: %q", f.events)
	}
	if got := f.at(ref(2)); strings.Join(got, ",") != "c07" {
		t.Fatalf("only the canary may be at v2: %v", got)
	}
}

// A canary that says it absorbs one failure but has one member can never
// complete once that member fails: it fails at once, as a wave whose
// every member failed or was skipped does, whatever its budget.
func TestWaveThatCannotCompleteFails(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.Waves[0].ErrorBudget = amount("1")
	f.spec.OnFailure = OnFailureUndo
	f.plan(ref(1))
	f.failing["c07"] = true
	f.plan(ref(2))
	r := f.plan(ref(2))
	if r.Pause != PausedByUndo || !f.status.UndoneOnFailure ||
		!strings.Contains(f.status.Message, "undone on failure (spec.rollout.onFailure: undo): every member of wave canary failed or was skipped (1 failed, within wave canary's error budget of 1: c07: Stalled: draft rejected), so the wave cannot complete; every child is pinned back to blueprints.app.v1") {
		t.Fatalf("a canary of one, failed within its budget of 1: %s %v: %s", r.Pause, f.status.UndoneOnFailure, f.status.Message)
	}
	if got := f.at(ref(2)); len(got) != 0 {
		t.Fatalf("after the undo %v are at v2", got)
	}
}

// A wave's own budget wins for its members: a budget of 2 on the second
// wave absorbs two failures (the wave completes without them, the next
// opens, the counts, the message and an Event say it); a third pauses
// the rollout naming that wave's budget, not the rollout's.
func TestWaveBudgetAbsorbsFailures(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.Waves[1].ErrorBudget = amount("2")
	f.spec.Waves[1].MaxUpdate = nil
	f.plan(ref(1))
	f.plan(ref(2)) // the canary
	f.failing["c00"], f.failing["c01"] = true, true
	f.plan(ref(2)) // wave early moves, all three
	f.events = nil
	f.plan(ref(2)) // c00 and c01 failed, c02 done: absorbed, early completes
	early := f.status.Waves[1]
	if early.State != WaveComplete || early.Failed != 2 || early.Done != 1 || early.Moved != 3 {
		t.Fatalf("wave early with two failures within its budget of 2: %+v; %s", early, f.status.Message)
	}
	if f.status.Waves[2].State != WaveOpen || f.status.Phase != Progressing {
		t.Fatalf("wave rest should be open: %+v", f.status)
	}
	if !strings.Contains(f.status.Message, "; failed within the error budget, not waited for: 2 in wave early (c00, c01)") {
		t.Fatalf("the message does not say the failures within the budget: %s", f.status.Message)
	}
	var within []string
	for _, e := range f.events {
		if strings.HasPrefix(e, "FailureWithinBudget: ") {
			within = append(within, e)
		}
	}
	if len(within) != 1 || !strings.HasPrefix(within[0], "FailureWithinBudget: wave early: 2 failed child(ren), within wave early's error budget of 2: c00: Stalled: draft rejected; c01: Stalled: draft rejected; the rollout goes on without them") {
		t.Fatalf("events: %q", f.events)
	}
	if !(Event{Reason: EventFailureWithinBudget}).Warning() {
		t.Fatal("FailureWithinBudget must be a Warning")
	}
	f.events = nil
	f.plan(ref(2)) // no new failure: no second Event
	for _, e := range f.events {
		if strings.HasPrefix(e, "FailureWithinBudget: ") {
			t.Fatalf("the same failures said twice: %q", f.events)
		}
	}
	// Wave rest shares the rollout's budget (0): one failure there pauses.
	f.failing["c03"] = true
	for i := 0; i < 3; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Paused || !strings.Contains(f.status.Message, "1 failed child(ren), more than the error budget of 0: c03: Stalled: draft rejected") {
		t.Fatalf("a failure in wave rest against the rollout's budget of 0: %s: %s", f.status.Phase, f.status.Message)
	}
	if f.status.FailedCount != 3 || f.status.Waves[2].Failed != 1 || f.status.Waves[1].Failed != 2 {
		t.Fatalf("counts: %d failed, waves %+v", f.status.FailedCount, f.status.Waves)
	}
	// Skipped: counted per wave; the rollout completes, naming the failed
	// ones within the budget.
	f.ctl.Skip = map[string]bool{"c03": true}
	for i := 0; i < 8; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Complete || f.status.Waves[2].Skipped != 1 || f.status.Waves[2].Failed != 0 ||
		!strings.Contains(f.status.Message, "the skipped ones, which failed there (c03) and the failed ones, within the error budget (c00, c01)") {
		t.Fatalf("complete: %s %+v: %s", f.status.Phase, f.status.Waves, f.status.Message)
	}
	f.plan(ref(2)) // and it stays so
	if f.status.Phase != Complete || f.status.Waves[1].Failed != 2 || !strings.Contains(f.status.Message, "within the error budget (c00, c01)") {
		t.Fatalf("after complete: %+v: %s", f.status.Waves, f.status.Message)
	}
}

// The third failure in a wave with a budget of 2 pauses the rollout,
// naming the wave's budget.
func TestWaveBudgetExceeded(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.ErrorBudget = amount("5")
	f.spec.Waves[1].ErrorBudget = amount("50%") // of 3 members: 2
	f.spec.Waves[1].MaxUpdate = nil
	f.plan(ref(1))
	f.plan(ref(2))
	f.failing["c00"], f.failing["c01"], f.failing["c02"] = true, true, true
	for i := 0; i < 3; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Paused || !strings.HasPrefix(f.status.Message, "paused in wave early: 3 failed child(ren), more than wave early's error budget of 2: c00: ") {
		t.Fatalf("three failures in wave early (budget 50%% of 3, the rollout's 5): %s: %s", f.status.Phase, f.status.Message)
	}
}
