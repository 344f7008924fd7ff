package rollout

import (
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Issue 57's acceptance: a deny window covering the clock holds the
// canary wave (it does not open, nothing moves, the status says which
// window and until when, the plan asks to be run again then); moving the
// clock out of it opens it. A wave already open finishes its moved
// children and moves no new one in a deny window.
func TestDenyWindowHoldsTheCanary(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.Windows = []v1alpha2.Window{{Name: "freeze", Kind: "deny", Schedule: "0 18 * * fri", Duration: "62h"}}
	friday := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC) // in the freeze
	f.ctl.Now = friday
	f.plan(ref(1))
	r := f.plan(ref(2))
	if got := f.at(ref(2)); len(got) != 0 {
		t.Fatalf("the canary moved in a deny window: %v", got)
	}
	w := f.status.Window
	if f.status.Phase != Progressing || w == nil || w.Until != "2026-11-30T08:00:00Z" || f.status.Waves[0].State != WavePending ||
		!strings.HasPrefix(f.status.Message, `wave canary does not open: in deny window "freeze" (0 18 * * fri for 62h, UTC) until 2026-11-30T08:00:00Z; wave canary: 0 of 1 children moved`) {
		t.Fatalf("held: %+v", f.status)
	}
	if !r.Recheck.Equal(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("recheck %s, want the window's end", r.Recheck)
	}
	if strings.Contains(strings.Join(f.events, "\n"), "WaveOpened") {
		t.Fatalf("a held wave said it opened: %v", f.events)
	}
	// Monday 08:00: out of the window, the canary opens.
	f.ctl.Now = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	f.plan(ref(2))
	if got := f.at(ref(2)); strings.Join(got, ",") != "c07" || f.status.Window != nil || f.status.Waves[0].State != WaveOpen {
		t.Fatalf("out of the window: at v2 %v, %+v", got, f.status)
	}
	// The canary is done, wave early opens and moves 2 (maxUpdate); then
	// the next freeze: the 2 moved finish, no new child moves.
	f.plan(ref(2))
	if got := len(f.at(ref(2))); got != 3 {
		t.Fatalf("wave early: %d at v2, want 3", got)
	}
	f.ctl.Now = time.Date(2026, 12, 4, 19, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		f.plan(ref(2))
	}
	if got := len(f.at(ref(2))); got != 3 || f.status.Waves[1].State != WaveOpen || f.status.Waves[1].Done != 2 ||
		!strings.HasPrefix(f.status.Message, `wave early moves no new child: in deny window "freeze"`) {
		t.Fatalf("an open wave in a deny window: %d at v2, %+v", got, f.status)
	}
	// An undo is never held.
	f.ctl.Undo = ref(2).Name
	f.plan(ref(2))
	if got := len(f.at(ref(2))); got != 0 || !f.status.Undone || f.status.Window != nil {
		t.Fatalf("an undo in a deny window: %d at v2, %+v", got, f.status)
	}
}

// Allow windows: outside every one nothing new moves, and the status says
// when the next opens; a complete rollout carries no window.
func TestAllowWindowOpensTheRollout(t *testing.T) {
	f := newFleet(t, 10)
	f.spec.Windows = []v1alpha2.Window{{Kind: "allow", Schedule: "0 9 * * mon-fri", Duration: "8h", TimeZone: "Europe/Berlin"}}
	f.ctl.Now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) // Saturday
	f.plan(ref(1))
	f.plan(ref(2))
	if got := len(f.at(ref(2))); got != 0 || f.status.Window == nil || f.status.Window.Reason != "outside every allow window until 2026-11-30T08:00:00Z" {
		t.Fatalf("saturday: %d moved, %+v", got, f.status)
	}
	f.ctl.Now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 20 && f.status.Phase != Complete; i++ {
		f.plan(ref(2))
	}
	if f.status.Phase != Complete || f.status.Window != nil || len(f.at(ref(2))) != 10 {
		t.Fatalf("monday: %+v", f.status)
	}
}
