package window

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// schedule is a parsed cron line: the minutes, hours, days of the month,
// months and days of the week it names, as bit sets.
type schedule struct {
	minute, hour, dom, month, dow uint64
	// domStar, dowStar: the field was "*" (or "*/n" from its first
	// value). When both day fields are restricted a day matches either
	// (cron's rule); otherwise both.
	domStar, dowStar bool
}

// descriptors are cron's shorthands.
var descriptors = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

var monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}
var dayNames = map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}

// parseCron parses a standard five-field cron line (minute hour
// day-of-month month day-of-week; *, lists, ranges, steps, month and day
// names, 7 for Sunday) or a descriptor (@daily, ...), as Argo CD's sync
// windows and robfig/cron's standard parser read them.
func parseCron(line string) (*schedule, error) {
	line = strings.TrimSpace(line)
	if d, ok := descriptors[strings.ToLower(line)]; ok {
		line = d
	}
	f := strings.Fields(line)
	if len(f) != 5 {
		return nil, fmt.Errorf("%q is not a cron line: want five fields (minute hour day-of-month month day-of-week) or a descriptor such as @daily, found %d field(s)", line, len(f))
	}
	s := &schedule{}
	var err error
	fields := []struct {
		name     string
		min, max int
		names    map[string]int
		out      *uint64
		star     *bool
	}{
		{"minute", 0, 59, nil, &s.minute, nil},
		{"hour", 0, 23, nil, &s.hour, nil},
		{"day of the month", 1, 31, nil, &s.dom, &s.domStar},
		{"month", 1, 12, monthNames, &s.month, nil},
		{"day of the week", 0, 7, dayNames, &s.dow, &s.dowStar},
	}
	for i, x := range fields {
		var star bool
		if *x.out, star, err = parseField(f[i], x.min, x.max, x.names); err != nil {
			return nil, fmt.Errorf("cron line %q: its %s field %q: %w", line, x.name, f[i], err)
		}
		if x.star != nil {
			*x.star = star
		}
	}
	if s.dow&(1<<7) != 0 { // 7 is Sunday too
		s.dow |= 1
	}
	return s, nil
}

// parseField parses one field into a bit set; star reports a field that
// starts with "*".
func parseField(f string, min, max int, names map[string]int) (bits uint64, star bool, err error) {
	for _, part := range strings.Split(f, ",") {
		rng, stepS, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			if step, err = strconv.Atoi(stepS); err != nil || step < 1 || step > max {
				return 0, false, fmt.Errorf("step %q must be a number from 1 to %d", stepS, max)
			}
		}
		lo, hi := min, max
		switch {
		case rng == "*":
			star = star || part == f
		default:
			a, b, isRange := strings.Cut(rng, "-")
			if lo, err = value(a, min, max, names); err != nil {
				return 0, false, err
			}
			hi = lo
			if isRange {
				if hi, err = value(b, min, max, names); err != nil {
					return 0, false, err
				}
				if hi < lo {
					return 0, false, fmt.Errorf("range %q ends before it starts", rng)
				}
			} else if hasStep {
				hi = max // a/n: from a to the end, every n
			}
		}
		for v := lo; v <= hi; v += step {
			bits |= 1 << uint(v)
		}
	}
	return bits, star, nil
}

func value(s string, min, max int, names map[string]int) (int, error) {
	if v, ok := names[strings.ToLower(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < min || v > max {
		return 0, fmt.Errorf("%q must be a number from %d to %d%s", s, min, max, map[bool]string{true: " or a name", false: ""}[names != nil])
	}
	return v, nil
}

func has(bits uint64, v int) bool { return bits&(1<<uint(v)) != 0 }

// dayMatches applies cron's day rule: both day fields restricted, either
// matches; else both must.
func (s *schedule) dayMatches(t time.Time) bool {
	dom, dow := has(s.dom, t.Day()), has(s.dow, int(t.Weekday()))
	if !s.domStar && !s.dowStar {
		return dom || dow
	}
	return dom && dow
}

// next is the first start at or after t (to the minute, in loc), before
// limit; ok false when none.
func (s *schedule) next(t, limit time.Time, loc *time.Location) (time.Time, bool) {
	t = t.In(loc)
	if t.Second() != 0 || t.Nanosecond() != 0 {
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute()+1, 0, 0, loc)
	}
	for !t.After(limit) {
		switch {
		case !has(s.month, int(t.Month())):
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
		case !has(s.hour, t.Hour()):
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, loc)
		case !has(s.minute, t.Minute()):
			t = t.Add(time.Minute)
		default:
			return t, true
		}
	}
	return time.Time{}, false
}

// prev is the last start at or before t (to the minute, in loc), not
// before limit; ok false when none.
func (s *schedule) prev(t, limit time.Time, loc *time.Location) (time.Time, bool) {
	t = t.In(loc)
	t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, loc)
	for !t.Before(limit) {
		switch {
		case !has(s.month, int(t.Month())):
			t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc).Add(-time.Minute)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).Add(-time.Minute)
		case !has(s.hour, t.Hour()):
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, loc).Add(-time.Minute)
		case !has(s.minute, t.Minute()):
			t = t.Add(-time.Minute)
		default:
			return t, true
		}
	}
	return time.Time{}, false
}
