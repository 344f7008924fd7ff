package rollout

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

var base = pv.Upstream{Repo: "blueprints", Package: "app"}

func ref(n int) v1alpha2.RevisionRef {
	return v1alpha2.RevisionRef{Name: fmt.Sprintf("blueprints.app.v%d", n), Workspace: fmt.Sprintf("v%d", n), Revision: n}
}

func amount(s string) *v1alpha2.IntOrPercent {
	a, err := v1alpha2.ParseIntOrPercent(s)
	if err != nil {
		panic(err)
	}
	return &a
}

// fleet is a simulated set: each child's pin, and which ones fail.
type fleet struct {
	t       *testing.T
	spec    *v1alpha2.Rollout
	status  *v1alpha2.RolloutStatus
	pins    map[string]pv.Upstream
	names   []string
	labels  map[string]map[string]string
	failing map[string]bool
	// slow: moved children that wait (neither done nor failed), and why.
	slow   map[string]string
	ctl    Controls
	events []string
}

func newFleet(t *testing.T, n int) *fleet {
	f := &fleet{t: t, pins: map[string]pv.Upstream{}, labels: map[string]map[string]string{}, failing: map[string]bool{},
		spec: &v1alpha2.Rollout{Waves: []v1alpha2.Wave{
			{Name: "canary", Selector: &meta.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}, Size: amount("1")},
			{Name: "early", Size: amount("30%"), MaxUpdate: amount("2")},
			{Name: "rest", MaxUpdate: amount("2")},
		}}}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("c%02d", i)
		f.names = append(f.names, name)
		f.labels[name] = map[string]string{}
	}
	if n > 7 {
		f.labels["c07"]["ring"] = "canary"
	}
	return f
}

// plan runs one reconcile: every child moved to the target and not failing
// is done (published and Ready) by the next one.
func (f *fleet) plan(target v1alpha2.RevisionRef) Result {
	var cs []Child
	for _, n := range f.names {
		c := Child{Name: n, Labels: f.labels[n]}
		if p, ok := f.pins[n]; ok {
			p := p
			c.Current = &p
			c.Done = pinnedTo(&p, target) && !f.failing[n]
			c.Failed = pinnedTo(&p, target) && f.failing[n]
			c.Why = "Stalled: draft rejected"
			if why, ok := f.slow[n]; ok && pinnedTo(&p, target) {
				c.Done, c.Why = false, why
			}
		}
		cs = append(cs, c)
	}
	r := Plan(f.spec, f.status, base, target, cs, f.ctl)
	f.pins, f.status = r.Pins, &r.Status
	for _, e := range r.Events {
		f.events = append(f.events, e.String())
	}
	return r
}

func (f *fleet) at(target v1alpha2.RevisionRef) []string {
	var out []string
	for _, n := range f.names {
		if p := f.pins[n]; pinnedTo(&p, target) {
			out = append(out, n)
		}
	}
	return out
}

func TestStagedRollout(t *testing.T) {
	f := newFleet(t, 10)
	f.plan(ref(1))
	if got := len(f.at(ref(1))); got != 10 || f.status.Phase != Complete {
		t.Fatalf("the first revision is not rolled out: %d at v1, %s", got, f.status.Phase)
	}
	// v2: only the canary moves.
	f.plan(ref(2))
	if got := f.at(ref(2)); strings.Join(got, ",") != "c07" {
		t.Fatalf("want only the canary at v2, got %v", got)
	}
	if f.status.Waves[0].Members[0] != "c07" || len(f.status.Waves[1].Members) != 3 || len(f.status.Waves[2].Members) != 6 {
		t.Fatalf("membership: %+v", f.status.Waves)
	}
	// The canary is done: wave 2 opens with at most 2 moving.
	f.plan(ref(2))
	if got := f.at(ref(2)); len(got) != 3 {
		t.Fatalf("want the canary and 2 of wave early, got %v", got)
	}
	// A child of wave early fails; budget 0: paused, nothing of rest moves.
	f.failing["c01"] = true
	for i := 0; i < 4; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Paused || !strings.Contains(f.status.Message, "c01: Stalled: draft rejected") {
		t.Fatalf("want paused by the budget naming c01: %+v", f.status)
	}
	for _, n := range f.status.Waves[2].Members {
		if p := f.pins[n]; pinnedTo(&p, ref(2)) {
			t.Fatalf("%s of wave rest moved while paused", n)
		}
	}
	// Skipped: the rollout goes on and completes, 2 at a time.
	f.ctl.Skip = map[string]bool{"c01": true}
	steps := 0
	for f.status.Phase != Complete && steps < 20 {
		before := len(f.at(ref(2)))
		f.plan(ref(2))
		if moved := len(f.at(ref(2))) - before; moved > 2 {
			t.Fatalf("moved %d at once, maxUpdate is 2", moved)
		}
		steps++
	}
	if f.status.Phase != Complete || len(f.at(ref(2))) != 10 {
		t.Fatalf("not complete after %d steps: %+v", steps, f.status)
	}
	ev := strings.Join(f.events, "\n")
	for _, want := range []string{"RolloutStarted: rolling out blueprints.app.v2 from blueprints.app.v1 in 3 wave(s)", "WaveOpened: wave canary opened (1 children)",
		"WaveCompleted: wave canary is at blueprints.app.v2 (1 children)", "RolloutPaused: paused in wave early: 1 failed child(ren), more than the error budget of 0",
		"RolloutComplete: every child is at blueprints.app.v2"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, ev)
		}
	}
}

func TestRolloutControls(t *testing.T) {
	f := newFleet(t, 10)
	f.plan(ref(1))
	// Paused: nothing moves.
	f.ctl = Controls{Paused: true, PauseMessage: "pvkit.dev/rollout-pause is \"true\""}
	f.plan(ref(2))
	if got := f.at(ref(2)); len(got) != 0 || f.status.Phase != Paused {
		t.Fatalf("paused, yet %v moved (%s)", got, f.status.Phase)
	}
	f.ctl = Controls{Hold: map[string]bool{"c00": true}}
	for i := 0; i < 10; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Complete || len(f.at(ref(2))) != 9 || !strings.Contains(f.status.Message, "but the held ones (c00)") {
		t.Fatalf("held: %+v, at v2 %v", f.status, f.at(ref(2)))
	}
	if p := f.pins["c00"]; !pinnedTo(&p, ref(1)) {
		t.Fatalf("the held child moved: %+v", p)
	}
}

func TestRolloutRestartsAndNewcomers(t *testing.T) {
	f := newFleet(t, 10)
	f.plan(ref(1))
	f.plan(ref(2))
	f.plan(ref(2)) // canary done, two of early moving
	// A target appears mid-rollout: it joins the first unfinished wave.
	f.names = append(f.names, "c10")
	f.labels["c10"] = map[string]string{}
	f.plan(ref(2))
	if !strings.Contains(strings.Join(f.events, "\n"), "RolloutJoined: c10 joins wave early") {
		t.Fatalf("events: %v", f.events)
	}
	if p := f.pins["c10"]; !pinnedTo(&p, ref(1)) && !pinnedTo(&p, ref(2)) {
		t.Fatalf("a newcomer gets the rollout's from or target: %+v", p)
	}
	// v3 mid-rollout: starts again from wave one; the children keep what
	// they have until their wave opens.
	f.plan(ref(3))
	if got := f.at(ref(3)); strings.Join(got, ",") != "c07" {
		t.Fatalf("v3 starts with the canary alone, got %v", got)
	}
	if n := len(f.at(ref(2))); n == 0 {
		t.Fatal("the children moved to v2 must keep v2 until their wave opens for v3")
	}
	if f.status.From == nil || f.status.From.Name != "blueprints.app.v2" {
		t.Fatalf("from: %+v", f.status.From)
	}
}

// Issue 47 #5: a canary selector that matches no child (a typo, a canary
// that lost its label) completed its wave 0/0 at once and let the next
// wave move in the same reconcile. The rollout does not start: paused,
// naming the wave, nothing moved; fixing the label lets it start; a wave
// marked allowEmpty may be empty.
func TestEmptyWaveHoldsTheStart(t *testing.T) {
	f := newFleet(t, 10)
	delete(f.labels["c07"], "ring") // the canary lost its label
	f.plan(ref(1))
	r := f.plan(ref(2))
	if got := f.at(ref(2)); len(got) != 0 || f.status.Phase != Paused {
		t.Fatalf("an empty canary let %v move (%s: %s)", got, f.status.Phase, f.status.Message)
	}
	want := "not started: wave(s) canary select no child of the 10 (their selector matches none"
	if !strings.Contains(f.status.Message, want) || !strings.Contains(fmt.Sprint(r.Events), "RolloutPaused: "+want) {
		t.Fatalf("message %q, events %v", f.status.Message, r.Events)
	}
	if r := f.plan(ref(2)); len(r.Events) != 0 || len(f.at(ref(2))) != 0 {
		t.Fatalf("a steady pause: events %v, moved %v", r.Events, f.at(ref(2)))
	}
	// The label is back: the membership is assigned again; the canary moves alone.
	f.labels["c07"]["ring"] = "canary"
	f.plan(ref(2))
	if got := f.at(ref(2)); strings.Join(got, ",") != "c07" || f.status.Phase != Progressing {
		t.Fatalf("after the fix: %v at v2, %s: %s", got, f.status.Phase, f.status.Message)
	}

	// allowEmpty: the wave may be empty; the next one opens.
	g := newFleet(t, 10)
	delete(g.labels["c07"], "ring")
	g.spec.Waves[0].AllowEmpty = true
	g.plan(ref(1))
	g.plan(ref(2))
	if got := g.at(ref(2)); len(got) != 2 || g.status.Phase != Progressing || g.status.Waves[0].State != WaveComplete {
		t.Fatalf("allowEmpty: %v at v2, %+v", got, g.status)
	}
}

// Issue 47 #5: a skip applies to failed children only and is reported as
// skipped, never as done: a skip of a canary that never failed made it
// "done" before, and a rollout whose skipped children run the old revision
// read "every child is at v2" with every wave's done count 0.
func TestSkipIsForFailedChildrenAndNeverDone(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.Waves = f.spec.Waves[:1:1]
	f.spec.Waves = append(f.spec.Waves, v1alpha2.Wave{Name: "rest"})
	f.plan(ref(1))
	f.ctl.Skip = map[string]bool{"c07": true, "c01": true} // neither has failed
	f.plan(ref(2))
	if got := f.at(ref(2)); strings.Join(got, ",") != "c07" || len(f.status.Skipped) != 0 {
		t.Fatalf("a skip of a child that never failed applied: at v2 %v, skipped %v", got, f.status.Skipped)
	}
	f.failing["c07"] = true
	f.plan(ref(2)) // c07 failed and is skipped: the rollout goes on
	for i := 0; i < 5 && f.status.Phase != Complete; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Complete {
		t.Fatalf("not complete: %+v", f.status)
	}
	if !strings.Contains(f.status.Message, "but the skipped ones, which failed there (c07)") || strings.Join(f.status.Skipped, ",") != "c07" {
		t.Fatalf("complete without naming the skipped child: %+v", f.status)
	}
	canary, rest := f.status.Waves[0], f.status.Waves[1]
	if canary.Done != 0 || canary.Moved != 1 || rest.Done != 9 || rest.Moved != 9 {
		t.Fatalf("counts: %+v", f.status.Waves)
	}
	f.plan(ref(2)) // and they stay so
	if w := f.status.Waves; w[0].Done != 0 || w[1].Done != 9 || !strings.Contains(f.status.Message, "skipped ones") {
		t.Fatalf("after complete: %+v", f.status)
	}
}

// Issue 47 #4: the status stays small whatever the children and their
// messages: 5,000 failed children of 63-character names, each with a
// 32 KiB reason, make a status well under 1 MiB (it was about 160 MB).
func TestRolloutStatusIsBounded(t *testing.T) {
	f := newFleet(t, 0)
	f.spec.Waves = []v1alpha2.Wave{{Name: "all"}}
	f.spec.ErrorBudget = amount("10%")
	why := strings.Repeat("é", 16<<10) // 32 KiB, multi-byte
	var cs []Child
	for i := 0; i < 5000; i++ {
		name := fmt.Sprintf("%s-%05d", strings.Repeat("n", 57), i)
		p := Pin(base, ref(2))
		cs = append(cs, Child{Name: name, Current: &p, Failed: true, Why: "RenderFailed: " + why})
	}
	prev := &v1alpha2.RolloutStatus{Target: ref(2), From: &v1alpha2.RevisionRef{Name: "blueprints.app.v1"}, Phase: Progressing,
		Waves: []v1alpha2.WaveStatus{{Name: "all", State: WaveOpen, Members: []string{}}}}
	r := Plan(f.spec, prev, base, ref(2), cs, Controls{})
	b, err := json.Marshal(r.Status)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 512<<10 {
		t.Fatalf("status is %d bytes", len(b))
	}
	if r.Status.FailedCount != 5000 || len(r.Status.Failed) != MaxListed || len(r.Status.Failed[0]) > 64+MaxWhy || !utf8.ValidString(r.Status.Failed[0]) {
		t.Fatalf("failed: %d listed of %d, the first %d bytes", len(r.Status.Failed), r.Status.FailedCount, len(r.Status.Failed[0]))
	}
	if r.Status.Phase != Paused || !strings.Contains(r.Status.Message, "5000 failed child(ren), more than the error budget of 500") ||
		!strings.Contains(r.Status.Message, "; and 4980 more; fix them") || len(r.Status.Message) > 32<<10 {
		t.Fatalf("message (%d bytes): %.300s", len(r.Status.Message), r.Status.Message)
	}
	t.Logf("status of 5,000 failed children: %d bytes", len(b))
}

// Issue 47 #6: the open wave's message names the moved children that wait,
// and what for.
func TestWaitingChildrenAreNamed(t *testing.T) {
	f := newFleet(t, 0)
	f.spec.Waves = []v1alpha2.Wave{{Name: "all"}}
	var cs []Child
	for i := 0; i < 8; i++ {
		p := Pin(base, ref(2))
		cs = append(cs, Child{Name: fmt.Sprintf("c%d", i), Current: &p, Why: "RenderFailed: " + strings.Repeat("x", 200)})
	}
	cs[0].Done = true
	prev := &v1alpha2.RolloutStatus{Target: ref(2), From: &v1alpha2.RevisionRef{Name: "blueprints.app.v1"}, Phase: Progressing,
		Waves: []v1alpha2.WaveStatus{{Name: "all", State: WaveOpen, Members: []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"}}}}
	r := Plan(f.spec, prev, base, ref(2), cs, Controls{})
	want := "wave all: 8 of 8 children moved, 1 done; waiting for c1 (RenderFailed: xxx"
	if !strings.HasPrefix(r.Status.Message, want) || !strings.HasSuffix(r.Status.Message, "…) and 2 more") {
		t.Fatalf("message: %s", r.Status.Message)
	}
}

// Issue 47 #4's worst case: the status of a rollout of 5,000 failed
// children of 63-character names with 32 KiB reasons (bytes/status).
func BenchmarkRolloutStatusAtTheBound(b *testing.B) {
	spec := &v1alpha2.Rollout{Waves: []v1alpha2.Wave{{Name: "all"}}, ErrorBudget: amount("10%")}
	why := strings.Repeat("x", 32<<10)
	var cs []Child
	for i := 0; i < 5000; i++ {
		p := Pin(base, ref(2))
		cs = append(cs, Child{Name: fmt.Sprintf("%s-%05d", strings.Repeat("n", 57), i), Current: &p, Failed: true, Why: why})
	}
	prev := &v1alpha2.RolloutStatus{Target: ref(2), From: &v1alpha2.RevisionRef{Name: "blueprints.app.v1"}, Phase: Progressing}
	b.ReportAllocs()
	var size int
	for i := 0; i < b.N; i++ {
		r := Plan(spec, prev, base, ref(2), cs, Controls{})
		j, err := json.Marshal(r.Status)
		if err != nil {
			b.Fatal(err)
		}
		size = len(j)
	}
	b.ReportMetric(float64(size), "bytes/status")
}

// Issue 42 #1: the open wave's status names the members confirmed done
// (the set does not read them again while the wave is open); a wave that
// completes drops the list, and a pending one has none.
func TestOpenWaveNamesItsDoneMembers(t *testing.T) {
	f := newFleet(t, 10)
	f.plan(ref(1))
	f.plan(ref(2)) // the canary moves
	f.plan(ref(2)) // the canary is done: early opens, c00 and c01 move
	f.failing["c01"] = true
	f.plan(ref(2)) // c00 done, c01 failed
	early := f.status.Waves[1]
	if early.State != WaveOpen || strings.Join(early.DoneMembers, ",") != "c00" || early.Done != 1 {
		t.Fatalf("wave early: %+v; want open with c00 done", early)
	}
	if c := f.status.Waves[0]; c.State != WaveComplete || c.DoneMembers != nil {
		t.Fatalf("the complete canary wave keeps a list: %+v", c)
	}
	if r := f.status.Waves[2]; r.DoneMembers != nil {
		t.Fatalf("the pending wave names done members: %+v", r)
	}
}

// Issue 43 #2: a paused plan says why (the set's RolloutPaused reason).
func TestPauseCause(t *testing.T) {
	f := newFleet(t, 10)
	f.plan(ref(1))
	if r := f.plan(ref(2)); r.Pause != "" || f.status.Phase != Progressing {
		t.Fatalf("progressing: pause %q, phase %s", r.Pause, f.status.Phase)
	}
	f.ctl.Paused, f.ctl.PauseMessage = true, "paused by hand"
	if r := f.plan(ref(2)); r.Pause != PausedByControl {
		t.Fatalf("the control: pause %q", r.Pause)
	}
	f.ctl.Paused = false
	f.failing["c07"] = true
	if r := f.plan(ref(2)); r.Pause != PausedByBudget {
		t.Fatalf("the budget: pause %q (%s)", r.Pause, f.status.Message)
	}
	e := newFleet(t, 10)
	delete(e.labels["c07"], "ring") // the canary selects nobody
	e.plan(ref(1))
	if r := e.plan(ref(2)); r.Pause != PausedByEmptyWave {
		t.Fatalf("an empty wave: pause %q (%s)", r.Pause, e.status.Message)
	}
}
