package cli

// pvctl run --until: a staged rollout's gates that are due
// at a known instant (a child's soak or progress deadline, a window
// opening or closing) are in each set's status.rollout.next; run says the
// soonest, and with --until runs again when it falls due, as long as it
// falls due before the --until instant, so that a script waits for the
// gate instead of polling. With --now the run's clock jumps to the gate
// instead of sleeping (a preview, and tests).

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
)

// maxUntilRuns bounds the runs of one --until (each jumps the clock
// forward, so this is a guard, not a budget).
const maxUntilRuns = 1000

// nextGate is the soonest gate due among the sets' rollouts.
type nextGate struct {
	at        time.Time
	set, what string
}

// soonestGate is the soonest status.rollout.next of sets (zero: none).
func soonestGate(sets []pvsapi.PackageVariantSet) nextGate {
	var g nextGate
	for _, s := range sets {
		r := s.Status.Rollout
		if r == nil || r.Next == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339, r.Next.At)
		if err != nil {
			continue // written by pvkit in RFC 3339; a hand-edited state file is not a gate
		}
		if g.at.IsZero() || at.Before(g.at) {
			g = nextGate{at: at, set: s.Name, what: r.Next.What}
		}
	}
	return g
}

func (g nextGate) String() string {
	return fmt.Sprintf("PackageVariantSet %s: %s at %s", g.set, g.what, g.at.UTC().Format(time.RFC3339))
}

// until is --until as an instant: RFC 3339, or a duration from start.
func (r *runFlags) untilAt(start time.Time) (time.Time, error) {
	if r.until == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, r.until); err == nil {
		return t, nil
	}
	d, err := time.ParseDuration(r.until)
	if err != nil || d <= 0 {
		return time.Time{}, usageErr("--until %q is neither an RFC 3339 instant such as 2026-11-27T18:00:00Z nor a positive duration such as 2h", r.until)
	}
	return start.Add(d), nil
}

// runUntil runs do once, and again at each next gate that falls due no
// later than --until: on the run's own clock (--now) by moving it there,
// else by sleeping. The report is the last run's, with every run's
// changes, held removals and warnings; waits are said on stderr.
func (r *runFlags) runUntil(ctx context.Context, stderr io.Writer, do func(context.Context, kit.Clock) (*local.Report, error)) (*local.Report, error) {
	clock, _ := r.clock()
	now := time.Now
	if clock != nil {
		now = clock.Now
	}
	until, err := r.untilAt(now())
	if err != nil {
		return nil, err
	}
	var changes, warnings []string
	for runs := 1; ; runs++ {
		rep, err := r.once(ctx, do, clock)
		if err != nil {
			return nil, err
		}
		changes, warnings = append(changes, rep.Changes...), appendNew(warnings, rep.Warnings)
		g := soonestGate(rep.Sets)
		if until.IsZero() || g.at.IsZero() || g.at.After(until) || rep.Unsettled != "" || runs >= maxUntilRuns {
			rep.Changes, rep.Warnings = changes, warnings
			return rep, nil
		}
		at := g.at
		if !at.After(now()) {
			at = now().Add(time.Second) // due already: a second on, so that each run moves the clock
		}
		fmt.Fprintf(stderr, "pvctl run: waiting for %s (--until %s)\n", g, until.UTC().Format(time.RFC3339))
		if clock != nil {
			clock = kit.Fixed(at)
			now = clock.Now
			continue
		}
		select {
		case <-ctx.Done():
			rep.Changes, rep.Warnings = changes, warnings
			rep.Unsettled = fmt.Sprintf("stopped while waiting for %s: %v", g, context.Cause(ctx))
			return rep, nil
		case <-time.After(time.Until(at)):
		}
	}
}

// once is one run, under --timeout.
func (r *runFlags) once(ctx context.Context, do func(context.Context, kit.Clock) (*local.Report, error), clock kit.Clock) (*local.Report, error) {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, r.timeout, fmt.Errorf("the run's --timeout (%s) passed", r.timeout))
		defer cancel()
	}
	return do(ctx, clock)
}

// appendNew is to with the strings of add it lacks.
func appendNew(to, add []string) []string {
	for _, s := range add {
		if !slices.Contains(to, s) {
			to = append(to, s)
		}
	}
	return to
}

// printNextGate says the soonest gate due, for a person or a script.
func printNextGate(w io.Writer, rep *local.Report) {
	if g := soonestGate(rep.Sets); !g.at.IsZero() {
		fmt.Fprintf(w, "\nNext gate: %s (pvctl run --until waits for it).\n", g)
	}
}
