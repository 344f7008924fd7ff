package window

import (
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A deny window covering the clock holds; moving the clock out of it
// opens; the verdict names the window and its end.
func TestDenyWindow(t *testing.T) {
	freeze := []v1alpha2.Window{{Name: "friday-night", Kind: Deny, Schedule: "0 18 * * fri", Duration: "62h"}}
	for _, c := range []struct {
		now, why, until, next string
		open                  bool
	}{
		// 2026-11-27 is a Friday.
		{now: "2026-11-27T17:59:00Z", open: true, next: "2026-11-27T18:00:00Z"},
		{now: "2026-11-27T18:00:00Z", why: `in deny window "friday-night" (0 18 * * fri for 62h, UTC) until 2026-11-30T08:00:00Z`, until: "2026-11-30T08:00:00Z", next: "2026-11-30T08:00:00Z"},
		{now: "2026-11-29T23:00:00Z", why: `until 2026-11-30T08:00:00Z`, until: "2026-11-30T08:00:00Z", next: "2026-11-30T08:00:00Z"},
		{now: "2026-11-30T08:00:00Z", open: true, next: "2026-12-04T18:00:00Z"},
	} {
		v := Evaluate(freeze, at(t, c.now))
		if v.Open != c.open || !strings.Contains(v.Why, c.why) || (c.until != "" && stamp(v.Until) != c.until) || stamp(v.Next) != c.next {
			t.Errorf("at %s: %+v, want open %v, why %q, until %s, next %s", c.now, v, c.open, c.why, c.until, c.next)
		}
	}
}

// Allow windows: only while one is open, in its time zone; a deny inside
// an allow wins.
func TestAllowWindowsAndZones(t *testing.T) {
	ws := []v1alpha2.Window{
		{Kind: Allow, Schedule: "0 9 * * mon-fri", Duration: "8h", TimeZone: "Europe/Berlin"},
		{Name: "lunch", Kind: Deny, Schedule: "0 12 * * *", Duration: "1h", TimeZone: "Europe/Berlin"},
	}
	for _, c := range []struct {
		now, why string
		open     bool
	}{
		{now: "2026-11-30T07:59:00Z", why: "outside every allow window until 2026-11-30T08:00:00Z"}, // Monday 08:59 in Berlin
		{now: "2026-11-30T08:00:00Z", open: true},
		{now: "2026-11-30T11:30:00Z", why: `in deny window "lunch"`}, // 12:30 in Berlin
		{now: "2026-11-30T15:59:00Z", open: true},
		{now: "2026-11-30T16:00:00Z", why: "until 2026-12-01T08:00:00Z"},
		{now: "2026-11-28T10:00:00Z", why: "until 2026-11-30T08:00:00Z"}, // Saturday
	} {
		v := Evaluate(ws, at(t, c.now))
		if v.Open != c.open || !strings.Contains(v.Why, c.why) {
			t.Errorf("at %s: %+v, want open %v, why containing %q", c.now, v, c.open, c.why)
		}
	}
	// A named allow window is named when the rollout waits for it.
	named := []v1alpha2.Window{{Name: "business-hours", Kind: Allow, Schedule: "0 9 * * mon-fri", Duration: "8h", TimeZone: "Europe/Berlin"}}
	if v := Evaluate(named, at(t, "2026-11-28T10:00:00Z")); v.Why != `outside every allow window until 2026-11-30T08:00:00Z, when allow window "business-hours" opens` {
		t.Errorf("a named allow window: %q", v.Why)
	}
	// Summer time: 09:00 in Berlin is 07:00 UTC.
	if v := Evaluate(ws[:1], at(t, "2026-07-01T07:00:00Z")); !v.Open {
		t.Errorf("09:00 in Berlin in July: %+v", v)
	}
	if v := Evaluate(nil, at(t, "2026-07-01T07:00:00Z")); !v.Open || !v.Next.IsZero() {
		t.Errorf("no windows: %+v", v)
	}
}

func TestCronFields(t *testing.T) {
	for _, c := range []struct {
		line, now, next string
	}{
		{"*/15 * * * *", "2026-11-28T10:01:00Z", "2026-11-28T10:15:00Z"},
		{"5-10/5 3 * * *", "2026-11-28T03:06:00Z", "2026-11-28T03:10:00Z"},
		{"0 0 1 jan,jul *", "2026-11-28T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"@weekly", "2026-11-28T00:00:00Z", "2026-11-29T00:00:00Z"},
		{"0 0 * * 7", "2026-11-28T00:00:00Z", "2026-11-29T00:00:00Z"},
		// Both day fields restricted: either matches (the 1st, or a Monday).
		{"0 0 1 * mon", "2026-11-28T00:00:00Z", "2026-11-30T00:00:00Z"},
		{"0 0 13 * *", "2026-11-28T00:00:30Z", "2026-12-13T00:00:00Z"},
	} {
		s, err := parseCron(c.line)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		got, ok := s.next(at(t, c.now), at(t, c.now).Add(Horizon), time.UTC)
		if !ok || stamp(got) != c.next {
			t.Errorf("%s after %s: %s %v, want %s", c.line, c.now, got, ok, c.next)
		}
		if back, ok := s.prev(got, got.Add(-time.Hour), time.UTC); !ok || !back.Equal(got) {
			t.Errorf("%s: prev(%s) = %s %v", c.line, got, back, ok)
		}
	}
	// 30 February never comes: said, not looped over.
	v := Evaluate([]v1alpha2.Window{{Kind: Allow, Schedule: "0 0 30 feb *", Duration: "1h"}}, at(t, "2026-11-28T00:00:00Z"))
	if v.Open || v.Why != "outside every allow window: none opens within 366 days" {
		t.Errorf("30 February: %+v", v)
	}
}

// Every bad window is named by its field, with what is wrong.
func TestCheckNamesTheField(t *testing.T) {
	ok := v1alpha2.Window{Kind: Deny, Schedule: "0 0 * * *", Duration: "1h"}
	with := func(f func(w *v1alpha2.Window)) []v1alpha2.Window {
		w := ok
		f(&w)
		return []v1alpha2.Window{ok, w}
	}
	for _, c := range []struct {
		ws   []v1alpha2.Window
		want string
	}{
		{with(func(w *v1alpha2.Window) { w.Kind = "block" }), "spec.rollout.windows[1].kind: `spec.rollout.windows[1].kind` must be allow or deny, found \"block\""},
		{with(func(w *v1alpha2.Window) { w.Schedule = "0 0 * *" }), "spec.rollout.windows[1].schedule: `spec.rollout.windows[1].schedule` \"0 0 * *\" is not a cron line: want five fields"},
		{with(func(w *v1alpha2.Window) { w.Schedule = "61 0 * * *" }), "its minute field \"61\": \"61\" must be a number from 0 to 59"},
		{with(func(w *v1alpha2.Window) { w.Schedule = "0 5-2 * * *" }), "range \"5-2\" ends before it starts"},
		{with(func(w *v1alpha2.Window) { w.Schedule = "*/0 * * * *" }), "step \"0\" must be a number from 1 to 59"},
		{with(func(w *v1alpha2.Window) { w.Schedule = strings.Repeat("1,", 60) + "1 * * * *" }), "is 129 bytes, more than 100"},
		{with(func(w *v1alpha2.Window) { w.Duration = "soon" }), "spec.rollout.windows[1].duration: `spec.rollout.windows[1].duration` \"soon\" is not a duration such as 1h or 90m"},
		{with(func(w *v1alpha2.Window) { w.Duration = "200h" }), "200h must be from 1m to 168h0m0s"},
		{with(func(w *v1alpha2.Window) { w.TimeZone = "Mars/Olympus" }), "spec.rollout.windows[1].timeZone: `spec.rollout.windows[1].timeZone` \"Mars/Olympus\" is not a time zone"},
		{with(func(w *v1alpha2.Window) { w.TimeZone = "/etc/passwd" }), "\"/etc/passwd\" is not a time zone"},
		{with(func(w *v1alpha2.Window) { w.TimeZone = "Local" }), "spec.rollout.windows[1].timeZone: `spec.rollout.windows[1].timeZone` \"Local\" is not a time zone (an IANA name such as Europe/Berlin)"},
		{make([]v1alpha2.Window, 21), "spec.rollout.windows: `spec.rollout.windows` lists 21 windows, more than 20"},
	} {
		var got []string
		for _, p := range Check("spec.rollout.windows", c.ws) {
			got = append(got, p.Field+": "+p.Message)
		}
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	// A window that does not compile holds everything, and says why.
	if v := Evaluate(with(func(w *v1alpha2.Window) { w.Duration = "soon" }), time.Now()); v.Open || !strings.Contains(v.Why, "a window does not hold: `spec.rollout.windows[1].duration`") {
		t.Errorf("a bad window: %+v", v)
	}
}

// Across daylight saving time (Europe/Berlin: 2026-03-29 02:00 CET is
// 03:00 CEST; 2026-10-25 03:00 CEST is 02:00 CET): a window whose start
// falls in the hour the clock skips still opens that day, at the instant
// the wall clock's start maps to (a freeze that skipped a day would let a
// release through it); a start in the hour the clock repeats opens once;
// a window spanning a change lasts its duration.
func TestWindowsAcrossDaylightSavingTime(t *testing.T) {
	freeze := []v1alpha2.Window{{Name: "night", Kind: Deny, Schedule: "30 2 * * *", Duration: "2h", TimeZone: "Europe/Berlin"}}
	for _, c := range []struct {
		now  string
		open bool
		why  string
	}{
		// The day before: 02:30 CET is 01:30 UTC.
		{now: "2026-03-28T01:29:00Z", open: true},
		{now: "2026-03-28T01:30:00Z", why: `in deny window "night" (30 2 * * * for 2h, Europe/Berlin) until 2026-03-28T03:30:00Z`},
		// The day the clock skips 02:00-03:00: 02:30 maps to 03:30 CEST
		// (01:30 UTC), and the freeze holds for its two hours.
		{now: "2026-03-29T01:29:00Z", open: true},
		{now: "2026-03-29T01:30:00Z", why: "until 2026-03-29T03:30:00Z"},
		{now: "2026-03-29T03:29:00Z", why: "until 2026-03-29T03:30:00Z"},
		{now: "2026-03-29T03:30:00Z", open: true},
		// The day after, in summer time: 02:30 CEST is 00:30 UTC.
		{now: "2026-03-30T00:30:00Z", why: "until 2026-03-30T02:30:00Z"},
		// The day the clock repeats 02:00-03:00: one freeze of two hours.
		{now: "2026-10-25T00:29:00Z", open: true},
		{now: "2026-10-25T00:30:00Z", why: "until 2026-10-25T02:30:00Z"},
		{now: "2026-10-25T02:30:00Z", open: true},
	} {
		v := Evaluate(freeze, at(t, c.now))
		if v.Open != c.open || !strings.Contains(v.Why, c.why) {
			t.Errorf("at %s: %+v, want open %v, why containing %q", c.now, v, c.open, c.why)
		}
	}
	// The next change is always ahead, however the clock moves: walking
	// the two days minute by minute never stands still.
	for _, day := range []string{"2026-03-29T00:00:00Z", "2026-10-25T00:00:00Z"} {
		now := at(t, day)
		for end := now.Add(24 * time.Hour); now.Before(end); now = now.Add(time.Minute) {
			if v := Evaluate(freeze, now); !v.Next.After(now) {
				t.Fatalf("at %s the next change is %s", now, v.Next)
			}
		}
	}
}

// The cost of the verdict at the bound: 20 windows (the CRD's most), the
// densest schedule, in a zone with daylight saving time.
func BenchmarkEvaluate(b *testing.B) {
	var ws []v1alpha2.Window
	for i := 0; i < 20; i++ {
		kind := Allow
		if i%2 == 1 {
			kind = Deny
		}
		ws = append(ws, v1alpha2.Window{Kind: kind, Schedule: "* * * * *", Duration: "1m", TimeZone: "Europe/Berlin"})
	}
	for name, now := range map[string]time.Time{
		"ordinary-day": time.Date(2026, 11, 30, 9, 15, 30, 0, time.UTC),
		"at-a-change":  time.Date(2026, 3, 29, 1, 15, 30, 0, time.UTC), // the search widened
	} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Evaluate(ws, now)
			}
		})
	}
}
