package packagevariantset

import (
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/rollout"
)

// due is the soonest of the gates a rollout waits on that are due at a
// known instant, and what happens then (rule: rollout-gates-due): the
// status's next gate, and when the set is reconciled again.
type due struct {
	at   time.Time
	what string
}

func (d *due) sooner(at time.Time, what string) {
	if !at.IsZero() && (d.at.IsZero() || at.Before(d.at)) {
		d.at, d.what = at, what
	}
}

// window is the plan's: a window opens or closes at its Recheck (rule:
// rollout-windows).
func (d *due) window(res rollout.Result) {
	what := "a window may hold the rollout back from then (spec.rollout.windows)"
	if h := res.Status.Window; h != nil {
		what = "the windows are read again: " + h.Reason
	}
	d.sooner(res.Recheck, what)
}

// after is how long after now to reconcile again: a second past the gate
// (0: none due).
func (d due) after(now time.Time) time.Duration {
	if d.at.IsZero() {
		return 0
	}
	return d.at.Sub(now) + time.Second
}

// gate is the status's NextGate (nil: none due).
func (d due) gate() *v1alpha2.NextGate {
	if d.at.IsZero() {
		return nil
	}
	return &v1alpha2.NextGate{At: d.at.UTC().Format(time.RFC3339), What: d.what}
}
