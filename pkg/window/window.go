// Package window says whether a staged rollout may move children now
// (spec.rollout.windows): allow and deny windows shaped as
// Argo CD's sync windows. A window opens at each start its cron schedule
// names, in its time zone, and stays open for its duration. With no
// window, children may always move; with allow windows, only while one
// of them is open; never while a deny window is open (a deny wins).
//
// What a window holds back is new moves: the planner opens no wave and
// moves no new child while held, and children already moved finish (a
// draft already written is published; an undo is never held). The
// verdict says which window holds and until when, and when it may next
// change, so that the controller wakes then rather than polling; the same
// instant always gives the same verdict (no status churn).
//
// Bounds: at most MaxWindows windows, each at most MaxDuration long, a
// schedule of at most MaxSchedule bytes; the next start is looked for at
// most Horizon ahead (a schedule that never fires, such as 30 February,
// says so).
package window

import (
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // time zones in images built FROM scratch

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Bounds of spec.rollout.windows.
const (
	MaxWindows  = 20
	MaxDuration = 7 * 24 * time.Hour
	MaxSchedule = 100
	// Horizon is how far ahead a window's next start is looked for.
	Horizon = 366 * 24 * time.Hour
)

// The kinds of a window.
const (
	Allow = "allow"
	Deny  = "deny"
)

// compiled is one window, parsed.
type compiled struct {
	w        v1alpha2.Window
	sched    *schedule
	duration time.Duration
	loc      *time.Location
}

// Check reports what is wrong with each window, by field (the caller's
// prefix, such as spec.rollout.windows), in order.
func Check(field string, ws []v1alpha2.Window) []Problem {
	var out []Problem
	if len(ws) > MaxWindows {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf("`%s` lists %d windows, more than %d", field, len(ws), MaxWindows)})
	}
	for i, w := range ws {
		if _, p := compile(fmt.Sprintf("%s[%d]", field, i), w); p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// Problem is a field and what is wrong with it.
type Problem struct {
	Field, Message string
}

func compile(field string, w v1alpha2.Window) (*compiled, *Problem) {
	bad := func(sub, format string, a ...any) (*compiled, *Problem) {
		return nil, &Problem{Field: field + "." + sub, Message: fmt.Sprintf("`%s.%s` ", field, sub) + fmt.Sprintf(format, a...)}
	}
	if w.Kind != Allow && w.Kind != Deny {
		return bad("kind", "must be allow or deny, found %q", w.Kind)
	}
	if len(w.Schedule) > MaxSchedule {
		return bad("schedule", "is %d bytes, more than %d", len(w.Schedule), MaxSchedule)
	}
	s, err := parseCron(w.Schedule)
	if err != nil {
		return bad("schedule", "%v", err)
	}
	d, err := time.ParseDuration(w.Duration)
	switch {
	case err != nil:
		return bad("duration", "%q is not a duration such as 1h or 90m", w.Duration)
	case d < time.Minute || d > MaxDuration:
		return bad("duration", "%s must be from 1m to %s", w.Duration, MaxDuration)
	}
	loc := time.UTC
	if w.TimeZone != "" {
		// An IANA name only: "Local" is the zone of whichever process reads
		// it (the controller's container, a CI runner, a laptop), so one
		// window would open at different times in each.
		if loc, err = time.LoadLocation(w.TimeZone); err != nil || strings.HasPrefix(w.TimeZone, "/") || w.TimeZone == "Local" {
			return bad("timeZone", "%q is not a time zone (an IANA name such as Europe/Berlin)", w.TimeZone)
		}
	}
	return &compiled{w: w, sched: s, duration: d, loc: loc}, nil
}

// Verdict is whether children may move now.
type Verdict struct {
	// Open: children may move.
	Open bool
	// Why, when held: which window holds and until when.
	Why string
	// Until, when held: when the holding window closes (a deny) or the
	// next allow window opens; zero when none opens within Horizon.
	Until time.Time
	// Next is when the verdict may next change (the earliest start or end
	// of any window after now); zero when none within Horizon.
	Next time.Time
}

// Evaluate is the verdict of the windows at now. A window that does not
// compile holds everything (its problem is the why): Check reports it
// before a rollout runs.
func Evaluate(ws []v1alpha2.Window, now time.Time) Verdict {
	if len(ws) == 0 {
		return Verdict{Open: true}
	}
	var denied, allowed []state
	allows := 0
	var next time.Time
	for i, w := range ws {
		c, p := compile(fmt.Sprintf("spec.rollout.windows[%d]", i), w)
		if p != nil {
			return Verdict{Why: "a window does not hold: " + p.Message}
		}
		st := c.at(now)
		next = earliest(next, st.change)
		if w.Kind == Allow {
			allows++
		}
		switch {
		case st.active && w.Kind == Deny:
			denied = append(denied, st)
		case st.active:
			allowed = append(allowed, st)
		}
	}
	if len(denied) > 0 {
		last := denied[0]
		for _, d := range denied[1:] {
			if d.end.After(last.end) {
				last = d
			}
		}
		return Verdict{Why: fmt.Sprintf("in %s until %s", last.c.describe(), stamp(last.end)), Until: last.end, Next: next}
	}
	if allows > 0 && len(allowed) == 0 {
		var opens time.Time
		var first *compiled
		for _, w := range ws {
			if w.Kind == Allow {
				c, _ := compile("", w)
				if s := c.at(now).start; !s.IsZero() && (opens.IsZero() || s.Before(opens)) {
					opens, first = s, c
				}
			}
		}
		why := "outside every allow window"
		if opens.IsZero() {
			why += fmt.Sprintf(": none opens within %d days", int(Horizon.Hours()/24))
		} else {
			why += " until " + stamp(opens)
			if first.w.Name != "" { // the window that opens then, by the name a person gave it
				why += fmt.Sprintf(", when allow window %q opens", first.w.Name)
			}
		}
		return Verdict{Why: why, Until: opens, Next: next}
	}
	return Verdict{Open: true, Next: next}
}

// state is a window at an instant: active (and its current occurrence's
// end) or not (and its next start); change is when that flips.
type state struct {
	c          *compiled
	active     bool
	start, end time.Time
	change     time.Time
}

func (c *compiled) at(now time.Time) state {
	st := state{c: c}
	if s, ok := c.sched.prevStart(now, now.Add(-c.duration), c.loc); ok && now.Before(s.Add(c.duration)) {
		st.active, st.start, st.end, st.change = true, s, s.Add(c.duration), s.Add(c.duration)
		return st
	}
	if s, ok := c.sched.nextStart(now, now.Add(Horizon), c.loc); ok {
		st.start, st.change = s, s
	}
	return st
}

// describe names a window in messages: its name, kind, schedule,
// duration and zone.
func (c *compiled) describe() string {
	name := ""
	if c.w.Name != "" {
		name = fmt.Sprintf(" %q", c.w.Name)
	}
	zone := "UTC"
	if c.w.TimeZone != "" {
		zone = c.w.TimeZone
	}
	return fmt.Sprintf("%s window%s (%s for %s, %s)", c.w.Kind, name, c.w.Schedule, c.w.Duration, zone)
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// stamp is an instant as the status writes it (RFC 3339, UTC).
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
