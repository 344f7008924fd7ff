package kit

import (
	"errors"
	"fmt"
	"time"
)

// Stalling is a failure only a change by the user can fix (the spec, the
// package, the cluster): Reconcile reports it in Stalled=True and returns it
// as a terminal error, which controller-runtime logs and does not retry; the
// watches bring the next reconcile when something changes.
type Stalling struct {
	Reason string
	Err    error
	// ReadyReason and ReadyMessage, when set, are the Ready condition's
	// instead of Reason and the error (Porch's `Error` / `invalid
	// packagevariant object` for a validation error).
	ReadyReason, ReadyMessage string
}

func (e *Stalling) Error() string { return e.Err.Error() }
func (e *Stalling) Unwrap() error { return e.Err }

// Stallf returns a Stalling error with a formatted message.
func Stallf(reason, format string, a ...any) *Stalling {
	return &Stalling{Reason: reason, Err: fmt.Errorf(format, a...)}
}

// Stall wraps err as Stalling with reason.
func Stall(reason string, err error) *Stalling { return &Stalling{Reason: reason, Err: err} }

// Transient is a failure that may heal by itself (Porch or the apiserver
// unavailable, a conflict, a render refused while the function runner is
// down): Ready=False with its reason, Reconciling=True, retried with
// backoff. An error of no kit type is Transient with the summary's default
// reason.
type Transient struct {
	Reason string
	Err    error
}

func (e *Transient) Error() string { return e.Err.Error() }
func (e *Transient) Unwrap() error { return e.Err }

// Retry wraps err as Transient with reason.
func Retry(reason string, err error) *Transient { return &Transient{Reason: reason, Err: err} }

// Waiting is an outcome that decides nothing yet: the reconcile cannot
// tell what to do until something it is sure will happen has happened (the
// informer cache showing a draft it has just created). Summarize leaves the
// conditions as they are, records nothing, and asks for the reconcile again
// After; it is not an error and gets no backoff.
type Waiting struct {
	After time.Duration
	Why   string
}

func (e *Waiting) Error() string { return e.Why }

// Wait returns a Waiting outcome.
func Wait(after time.Duration, format string, a ...any) *Waiting {
	return &Waiting{After: after, Why: fmt.Sprintf(format, a...)}
}

// Partial is an outcome where some of the work was done and some could not
// be (a set whose target entries partly failed): Ready=False with its reason,
// not Stalled. It is retried only when Retry is set (some failure may heal).
type Partial struct {
	Reason string
	Err    error
	Retry  bool
}

func (e *Partial) Error() string { return e.Err.Error() }
func (e *Partial) Unwrap() error { return e.Err }

// ErrRemovalHeld is what a host's client or store wraps when it holds a
// removal back (pvctl run without --prune): the reconcilers do the rest of
// their work and report the removal as waiting (reason RemovalHeld), not as
// an error to retry.
var ErrRemovalHeld = errors.New("not removed: pvctl run removes only with --prune")

// Outcome classifies err: its reason (def for an error of no kit type), and
// which of the kinds it is.
type Outcome struct {
	Reason  string
	Stall   *Stalling
	Partial *Partial
}

func classify(err error, def string) Outcome {
	var s *Stalling
	var p *Partial
	var t *Transient
	switch {
	case errors.As(err, &s):
		return Outcome{Reason: s.Reason, Stall: s}
	case errors.As(err, &p):
		return Outcome{Reason: p.Reason, Partial: p}
	case errors.As(err, &t):
		return Outcome{Reason: t.Reason}
	}
	return Outcome{Reason: def}
}

// FirstOutcome is the outcome of steps run one after another whatever the
// ones before returned: the first that is not a wait, else the shortest
// wait, else nil.
func FirstOutcome(outcomes ...error) error {
	var wait *Waiting
	for _, o := range outcomes {
		var w *Waiting
		switch {
		case o == nil:
		case errors.As(o, &w):
			if wait == nil || w.After < wait.After {
				wait = w
			}
		default:
			return o
		}
	}
	if wait != nil {
		return wait
	}
	return nil
}

// Soonest is the shortest of requeue durations, 0 (none) left out.
func Soonest(ds ...time.Duration) time.Duration {
	var out time.Duration
	for _, d := range ds {
		if d > 0 && (out == 0 || d < out) {
			out = d
		}
	}
	return out
}
