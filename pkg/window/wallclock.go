package window

import "time"

// A schedule names wall-clock times in its window's zone; the instants
// they stand for are found here, so that daylight saving time neither
// skips a window nor opens one twice:
//   - a start in the hour the clock skips (02:30 on the day 02:00 becomes
//     03:00) opens at the instant that wall-clock time maps to with the
//     offset before the change (03:30 after it): a freeze that skipped a day
//     would let a release through it;
//   - a start in the hour the clock repeats opens once, at its first
//     occurrence;
//   - a window lasts its duration in real time, across a change.

// maxShift bounds how far a zone's offset changes at once (a day's search
// is widened by it on both sides).
const maxShift = 3 * time.Hour

// wallOf is t's wall clock in loc, as a time in UTC with those fields.
func wallOf(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// instant is the instant the wall-clock time w (a time in UTC whose fields
// are read as loc's) stands for: the earlier of two in an hour the clock
// repeats, and the one with the offset before the change in an hour it
// skips.
func instant(w time.Time, loc *time.Location) time.Time {
	_, before := w.Add(-24 * time.Hour).In(loc).Zone()
	_, after := w.Add(24 * time.Hour).In(loc).Zone()
	var best time.Time
	for _, off := range []int{before, after} {
		c := w.Add(-time.Duration(off) * time.Second)
		if wallOf(c, loc).Equal(w) && (best.IsZero() || c.Before(best)) {
			best = c
		}
	}
	if best.IsZero() { // skipped by the clock
		best = w.Add(-time.Duration(before) * time.Second)
	}
	return best.In(loc)
}

// nextStart is the first start at or after t (to the minute), not after
// limit, as an instant; ok false when none.
func (s *schedule) nextStart(t, limit time.Time, loc *time.Location) (time.Time, bool) {
	// Away from a change of offset (the common case) the first wall-clock
	// match is the answer; near one, the search is widened.
	if m, ok := s.next(wallOf(t, loc), wallOf(limit, loc), time.UTC); ok {
		if i := instant(m, loc); steady(t, loc) && steady(i, loc) && !i.After(limit) {
			return i, true
		}
	} else if steady(t, loc) && steady(limit, loc) {
		return time.Time{}, false
	}
	w, stop := wallOf(t, loc).Add(-maxShift), wallOf(limit, loc).Add(maxShift)
	var best time.Time
	for {
		m, ok := s.next(w, stop, time.UTC)
		if !ok {
			break
		}
		if i := instant(m, loc); !i.Before(t) && !i.After(limit) && (best.IsZero() || i.Before(best)) {
			best = i
		}
		if !best.IsZero() && m.After(wallOf(best, loc).Add(maxShift)) {
			break // later wall times stand for later instants
		}
		w = m.Add(time.Minute)
	}
	return best, !best.IsZero()
}

// prevStart is the last start at or before t (to the minute), not before
// limit, as an instant; ok false when none.
func (s *schedule) prevStart(t, limit time.Time, loc *time.Location) (time.Time, bool) {
	if m, ok := s.prev(wallOf(t, loc), wallOf(limit, loc), time.UTC); ok {
		if i := instant(m, loc); steady(t, loc) && steady(i, loc) && !i.Before(limit) {
			return i, true
		}
	} else if steady(t, loc) && steady(limit, loc) {
		return time.Time{}, false
	}
	w, stop := wallOf(t, loc).Add(maxShift), wallOf(limit, loc).Add(-maxShift)
	var best time.Time
	for {
		m, ok := s.prev(w, stop, time.UTC)
		if !ok {
			break
		}
		if i := instant(m, loc); !i.After(t) && !i.Before(limit) && i.After(best) {
			best = i
		}
		if !best.IsZero() && m.Before(wallOf(best, loc).Add(-maxShift)) {
			break // earlier wall times stand for earlier instants
		}
		w = m.Add(-time.Minute)
	}
	return best, !best.IsZero()
}

// steady reports whether loc's offset is the same from maxShift before t
// to maxShift after it: no change of offset near t.
func steady(t time.Time, loc *time.Location) bool {
	_, a := t.Add(-maxShift).In(loc).Zone()
	_, b := t.Add(maxShift).In(loc).Zone()
	return a == b
}
