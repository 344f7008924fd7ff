package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Issue 57 #8: each waiting child carries the instant the rollout moved
// it, in the wave's status and in the message; the stamp stays while it
// waits (a later plan does not move it), goes when it is done, and a
// new target starts afresh. A plan without a clock stamps nothing.
func TestWaitingChildrenCarryWhenTheyMoved(t *testing.T) {
	f := newFleet(t, 10)
	f.slow = map[string]string{"c07": "draft d is Proposed, not yet approved"}
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	f.ctl.Now = t0
	f.plan(ref(1))
	f.plan(ref(2))
	want := []v1alpha2.WaitingMember{{Name: "c07", Since: "2026-11-28T09:00:00Z"}}
	if got := f.status.Waves[0].Waiting; !equalWaiting(got, want) {
		t.Fatalf("moved at t0: waiting %+v, want %+v", got, want)
	}
	f.ctl.Now = t0.Add(2 * time.Hour)
	f.plan(ref(2))
	if got := f.status.Waves[0].Waiting; !equalWaiting(got, want) {
		t.Fatalf("two hours later: waiting %+v, want the stamp of its move", got)
	}
	if !strings.Contains(f.status.Message, "waiting for c07 (since 2026-11-28T09:00:00Z: draft d is Proposed, not yet approved)") {
		t.Fatalf("message: %s", f.status.Message)
	}
	// Done: the canary leaves the list; wave early moves two at t2, and
	// they carry t2.
	delete(f.slow, "c07")
	f.slow["c00"], f.slow["c01"] = "not Ready", "not Ready"
	t2 := t0.Add(3 * time.Hour)
	f.ctl.Now = t2
	f.plan(ref(2))
	f.ctl.Now = t2.Add(time.Minute)
	f.plan(ref(2))
	if f.status.Waves[0].Waiting != nil || f.status.Waves[0].State != WaveComplete {
		t.Fatalf("the canary done: %+v", f.status.Waves[0])
	}
	want = []v1alpha2.WaitingMember{{Name: "c00", Since: "2026-11-28T12:00:00Z"}, {Name: "c01", Since: "2026-11-28T12:00:00Z"}}
	if got := f.status.Waves[1].Waiting; !equalWaiting(got, want) {
		t.Fatalf("wave early: waiting %+v, want %+v", got, want)
	}
	// A new target: afresh, at its own moves (c00 keeps nothing of v2's).
	f.slow["c07"] = "not Ready"
	f.plan(ref(3))
	want = []v1alpha2.WaitingMember{{Name: "c07", Since: "2026-11-28T12:01:00Z"}}
	if got := f.status.Waves[0].Waiting; !equalWaiting(got, want) || len(f.status.Waves[1].Waiting) != 0 {
		t.Fatalf("v3: waiting %+v, %+v; want %+v and none in wave early", got, f.status.Waves[1].Waiting, want)
	}
	// Without a clock: listed, not stamped.
	g := newFleet(t, 10)
	g.slow = map[string]string{"c07": "not Ready"}
	g.plan(ref(1))
	g.plan(ref(2))
	g.plan(ref(2))
	if got := g.status.Waves[0].Waiting; !equalWaiting(got, []v1alpha2.WaitingMember{{Name: "c07"}}) ||
		!strings.Contains(g.status.Message, "waiting for c07 (not Ready)") {
		t.Fatalf("no clock: %+v, %s", got, g.status.Message)
	}
}

func equalWaiting(a, b []v1alpha2.WaitingMember) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
