package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Issue 43 #2: a rollout complete with skipped children says so, and each
// wave keeps the counts it ended with, however many plans follow: the
// skipped children are moved, never done.
func TestCompleteKeepsCountsAndNamesTheSkipped(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.ErrorBudget = amount("0")
	f.plan(ref(1))
	f.failing["c08"], f.failing["c09"] = true, true
	for i := 0; i < 10; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Paused {
		t.Fatalf("two failed children, a budget of 0: %s: %s", f.status.Phase, f.status.Message)
	}
	f.ctl.Skip = map[string]bool{"c08": true, "c09": true}
	for i := 0; i < 10; i++ {
		f.plan(ref(2))
		if i < 4 {
			continue
		}
		st := f.status
		if st.Phase != Complete || st.Message != "every child is at blueprints.app.v2 but the skipped ones, which failed there (c08, c09)" {
			t.Fatalf("plan %d: %s: %s", i, st.Phase, st.Message)
		}
		want := map[string][2]int{"canary": {1, 1}, "early": {3, 3}, "rest": {6, 4}}
		for _, w := range st.Waves {
			if got := [2]int{w.Moved, w.Done}; got != want[w.Name] || w.State != WaveComplete {
				t.Errorf("plan %d: wave %s %s moved/done %v, want %v", i, w.Name, w.State, got, want[w.Name])
			}
		}
	}
}

// rule rollout-undo: an undo of the target's rollout pins every child but
// the held ones back to the from revision at once, whatever wave it is in;
// it stays Paused (RolledBack) with one event, the waves' counts kept;
// resumed, the rollout starts again from wave one; an undo that names
// another revision does nothing; a new revision after an undo rolls out
// from where the children are.
func TestUndo(t *testing.T) {
	f := newFleet(t, 10)
	f.plan(ref(1))
	for i := 0; i < 3; i++ {
		f.plan(ref(2)) // the canary, then wave early moving
	}
	if f.status.Phase != Progressing || f.status.Waves[1].Moved == 0 {
		t.Fatalf("mid-rollout: %s", f.status.Message)
	}
	f.ctl.Undo = "blueprints.app.v9" // another revision's: ignored
	f.plan(ref(2))
	if f.status.Undone || !strings.HasSuffix(f.status.Message, "; the undo control names blueprints.app.v9, not this rollout's target blueprints.app.v2: not applied") {
		t.Fatalf("an undo of another revision: %s", f.status.Message)
	}
	f.ctl.Undo, f.ctl.Hold = "blueprints.app.v2", map[string]bool{"c07": true}
	f.events = nil
	for i := 0; i < 3; i++ {
		r := f.plan(ref(2))
		if r.Pause != PausedByUndo || f.status.Phase != Paused || !f.status.Undone ||
			f.status.Message != "undone: every child is pinned back to blueprints.app.v1 (pvkit.dev/rollout-undo); publish a fix, or resume to roll blueprints.app.v2 out again from wave one" {
			t.Fatalf("undone: %s %s: %s", r.Pause, f.status.Phase, f.status.Message)
		}
		for _, n := range f.names {
			if want := map[bool]int{true: 2, false: 1}[n == "c07"]; f.pins[n].Revision != want {
				t.Fatalf("after the undo %s is at %+v, want revision %d", n, f.pins[n], want)
			}
		}
	}
	if len(f.events) != 1 || f.events[0] != "RolloutUndone: rollout of blueprints.app.v2 undone: 5 moved child(ren) go back to blueprints.app.v1 at once, with the 5 others" {
		t.Fatalf("events: %q", f.events)
	}
	// Resumed: again from wave one.
	f.ctl.Undo, f.ctl.Hold = "", nil
	f.events = nil
	f.plan(ref(2))
	if f.status.Undone || f.status.Phase != Progressing || f.status.From.Name != "blueprints.app.v1" || len(f.events) == 0 ||
		f.events[0] != "RolloutStarted: rolling out blueprints.app.v2 again from blueprints.app.v1 in 3 wave(s), after its undo" {
		t.Fatalf("resumed: %s: %s; %q", f.status.Phase, f.status.Message, f.events)
	}
	moved := 0
	for _, n := range f.names {
		if f.pins[n].Revision == 2 {
			moved++
		}
	}
	if moved != 3 {
		t.Fatalf("resumed after an undo, %d children at v2, want 3: the canary, held at v2 through the undo and done, and wave early's first two", moved)
	}
	// Undone again, then v3: from v1, where the children are.
	f.ctl.Undo = "blueprints.app.v2"
	f.plan(ref(2))
	f.plan(ref(3))
	if f.status.From == nil || f.status.From.Name != "blueprints.app.v1" || f.status.Undone {
		t.Fatalf("v3 after an undone v2: from %+v, %s", f.status.From, f.status.Message)
	}
}

// Issue 43 #5: spreadBy spreads a sized wave over a label's values: a
// fleet named by region (eu-*, us-*) puts its 20% wave in both regions,
// where name order took eu only.
func TestSpreadBy(t *testing.T) {
	f := newFleet(t, 0)
	for _, region := range []string{"eu", "us"} {
		for i := 0; i < 5; i++ {
			n := fmt.Sprintf("%s-%d", region, i)
			f.names = append(f.names, n)
			f.labels[n] = map[string]string{"region": region}
		}
	}
	f.spec = &v1alpha2.Rollout{Waves: []v1alpha2.Wave{{Name: "early", Size: amount("20%")}, {Name: "rest"}}}
	early := func() []string {
		f.status, f.pins = nil, map[string]pv.Upstream{}
		f.plan(ref(1))
		f.plan(ref(2))
		return f.status.Waves[0].Members
	}
	if got := early(); strings.Join(got, ",") != "eu-0,eu-1" {
		t.Fatalf("name order: %v", got)
	}
	f.spec.SpreadBy = "region"
	if got := early(); strings.Join(got, ",") != "eu-0,us-0" {
		t.Fatalf("spread by region: %v", got)
	}
}

// Issue 57 #7: spreadBy orders a wave's maxUpdate batches too: a wave of
// 200 stores in four regions, named so that name order takes one region
// first, moves its first batch of 50 from every region in turn.
func TestSpreadByBatches(t *testing.T) {
	f := newFleet(t, 0)
	regions := []string{"ap", "eu", "sa", "us"}
	sizes := []int{20, 30, 60, 90}
	for r, region := range regions {
		for i := 0; i < sizes[r]; i++ {
			n := fmt.Sprintf("%s-%03d", region, i)
			f.names = append(f.names, n)
			f.labels[n] = map[string]string{"region": region}
		}
	}
	f.spec = &v1alpha2.Rollout{Waves: []v1alpha2.Wave{{Name: "all", MaxUpdate: amount("50")}}}
	batch := func() map[string]int {
		f.status, f.pins = nil, map[string]pv.Upstream{}
		f.plan(ref(1))
		f.plan(ref(2))
		per := map[string]int{}
		for name, p := range f.pins {
			if pinnedTo(&p, ref(2)) {
				per[f.labels[name]["region"]]++
			}
		}
		return per
	}
	if got := batch(); got["ap"] != 20 || got["eu"] != 30 || got["sa"] != 0 {
		t.Fatalf("name order: the first batch by region %v", got)
	}
	f.spec.SpreadBy = "region"
	// 50 in turn from four values: 13, 13, 12, 12 (ap, eu first: sorted).
	if got := batch(); got["ap"] != 13 || got["eu"] != 13 || got["sa"] != 12 || got["us"] != 12 {
		t.Fatalf("spread by region: the first batch by region %v, want 13, 13, 12, 12", got)
	}
}

// Issue 57 #2: onFailure: undo. A canary that fails past the budget undoes
// the rollout at once (every child back at v1, Paused RolledBack, one
// Event); it stays undone, its status unchanged, with no retry; a retry
// (TARGET@STAMP) rolls it out again from wave one, once; a second failure
// undoes it again, and the same retry value does not loop it.
func TestOnFailureUndo(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.OnFailure = OnFailureUndo
	f.plan(ref(1))
	f.failing["c07"] = true // the canary
	f.plan(ref(2))          // the canary moves
	f.events = nil
	r := f.plan(ref(2)) // it failed: over the budget of 0
	wantMsg := "undone on failure (spec.rollout.onFailure: undo): 1 failed child(ren), more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise): c07: Stalled: draft rejected; every child is pinned back to blueprints.app.v1; publish a fix, or retry blueprints.app.v2 from wave one (pvctl rollout resume)"
	if r.Pause != PausedByUndo || f.status.Phase != Paused || !f.status.Undone || !f.status.UndoneOnFailure || f.status.Message != wantMsg {
		t.Fatalf("undone on failure: %s %s %v: %s", r.Pause, f.status.Phase, f.status.UndoneOnFailure, f.status.Message)
	}
	if got := f.at(ref(2)); len(got) != 0 {
		t.Fatalf("after the undo %v are at v2", got)
	}
	if len(f.events) != 1 || f.events[0] != "RolloutUndone: rollout of blueprints.app.v2 undone on failure (1 failed, more than wave canary's error budget of 0 (a first wave's, unless its errorBudget says otherwise)): 1 moved child(ren) go back to blueprints.app.v1 at once, with the 9 others" {
		t.Fatalf("events: %q", f.events)
	}
	// No retry: it stays so, said the same way, with no new Event.
	before := *f.status
	for i := 0; i < 3; i++ {
		f.plan(ref(2))
	}
	if !f.status.UndoneOnFailure || f.status.Message != before.Message || f.status.FailedCount != 1 || len(f.events) != 1 || len(f.at(ref(2))) != 0 {
		t.Fatalf("kept undone: %+v; events %q", f.status, f.events)
	}
	// A retry of another target is ignored.
	for _, typo := range []string{"blueprints.app.v9@2026-11-28T15:00:00Z", "blueprints.app.v2", "blueprints.app.v2"} {
		f.ctl.Retry = typo
		if f.plan(ref(2)); !f.status.UndoneOnFailure || f.status.Message != before.Message+fmt.Sprintf("; the retry control %q does not name this rollout's target blueprints.app.v2 as TARGET@STAMP: not applied", typo) {
			t.Fatalf("a retry %q: %s", typo, f.status.Message)
		}
	}
	// A forged value of 100,000 bytes is named in at most a line.
	f.ctl.Retry = strings.Repeat("x", 100000)
	if f.plan(ref(2)); !f.status.UndoneOnFailure || len(f.status.Message) > len(before.Message)+300 ||
		!strings.Contains(f.status.Message, "... (99872 bytes more)\" does not name this rollout's target") {
		t.Fatalf("a huge retry value: %d bytes of message", len(f.status.Message))
	}
	// Retried: from wave one, the canary first.
	f.failing["c07"] = false
	f.ctl.Retry = "blueprints.app.v2@2026-11-28T15:01:00Z"
	f.plan(ref(2))
	if f.status.Undone || f.status.UndoneOnFailure || f.status.Phase != Progressing || f.status.Retried != f.ctl.Retry ||
		!slices.Equal(f.at(ref(2)), []string{"c07"}) || !slices.Contains(f.events, "RolloutStarted: rolling out blueprints.app.v2 again from blueprints.app.v1 in 3 wave(s), retried (pvkit.dev/rollout-retry blueprints.app.v2@2026-11-28T15:01:00Z) after its undo on failure") {
		t.Fatalf("retried: %s: %s; at v2 %v; %q", f.status.Phase, f.status.Message, f.at(ref(2)), f.events)
	}
	// It fails again in wave early: undone again; the same retry value
	// does not start it a third time.
	f.failing["c00"] = true
	for i := 0; i < 4 && !f.status.Undone; i++ {
		f.plan(ref(2))
	}
	if !f.status.UndoneOnFailure || len(f.at(ref(2))) != 0 {
		t.Fatalf("a second failure: %s; at v2 %v", f.status.Message, f.at(ref(2)))
	}
	for i := 0; i < 3; i++ {
		if f.plan(ref(2)); !f.status.UndoneOnFailure || f.status.Retried != "blueprints.app.v2@2026-11-28T15:01:00Z" {
			t.Fatalf("the same retry looped: %s", f.status.Message)
		}
	}
	// Without onFailure, the same failure pauses (the default).
	g := newFleet(t, 10)
	g.plan(ref(1))
	g.failing["c07"] = true
	g.plan(ref(2))
	if r := g.plan(ref(2)); r.Pause != PausedByBudget || g.status.Undone {
		t.Fatalf("default: %s: %s", r.Pause, g.status.Message)
	}
}
