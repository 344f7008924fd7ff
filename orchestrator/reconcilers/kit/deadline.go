package kit

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultReconcileTimeout bounds one reconcile of a set or a variant
// (rule reconcile-deadline; the controller's --reconcile-timeout, Flux's
// spec.timeout): a write to
// Porch renders the package through its function runner, and a reconcile
// makes a few; past the bound something is stuck, and the worker is
// needed for the others.
const DefaultReconcileTimeout = 10 * time.Minute

// ReasonDeadlineExceeded is Ready=False's reason for a reconcile that
// passed its deadline: retried with backoff.
const ReasonDeadlineExceeded = "DeadlineExceeded"

// FinishTimeout bounds the finish step of a reconcile (its status patch),
// which runs past the reconcile's own deadline so that what it learned,
// and the deadline's condition, are written.
const FinishTimeout = 30 * time.Second

// Deadline is one reconcile's bound: Work is what the steps run under,
// and Finish what the status write runs under (not cancelled by Work's
// deadline, bounded by FinishTimeout).
type Deadline struct {
	parent  context.Context
	Timeout time.Duration
}

// NewDeadline bounds a reconcile of ctx by timeout (0:
// DefaultReconcileTimeout; negative: none).
func NewDeadline(ctx context.Context, timeout time.Duration) Deadline {
	if timeout == 0 {
		timeout = DefaultReconcileTimeout
	}
	return Deadline{parent: ctx, Timeout: timeout}
}

// Work is the steps' context.
func (d Deadline) Work() (context.Context, context.CancelFunc) {
	if d.Timeout < 0 {
		return context.WithCancel(d.parent)
	}
	return context.WithTimeout(d.parent, d.Timeout)
}

// Finish is the finish step's context: it outlives Work's deadline (not
// the process's: a cancelled parent is kept).
func (d Deadline) Finish() (context.Context, context.CancelFunc) {
	if d.parent.Err() != nil {
		return context.WithCancel(d.parent)
	}
	return context.WithTimeout(context.WithoutCancel(d.parent), FinishTimeout)
}

// Overrun is outcome as the reconcile reports it: an outcome that ended
// because work passed its deadline (and not because the process is
// stopping) is a Transient error of reason DeadlineExceeded naming the
// bound and what was under way.
func (d Deadline) Overrun(work context.Context, outcome error) error {
	if outcome == nil || d.parent.Err() != nil || !errors.Is(work.Err(), context.DeadlineExceeded) {
		return outcome
	}
	var w *Waiting
	if errors.As(outcome, &w) {
		outcome = errors.New(w.Why)
	}
	return &Transient{Reason: ReasonDeadlineExceeded,
		Err: fmt.Errorf("the reconcile passed its deadline of %s (--reconcile-timeout) and stopped; it is retried: %w", d.Timeout, outcome)}
}
