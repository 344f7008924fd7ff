package kit

import (
	"errors"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Condition types both kinds carry, defined once, in the API
// (orchestrator/api/v1alpha1).
const (
	ConditionReady       = pvapi.ConditionReady
	ConditionStalled     = pvapi.ConditionStalled
	ConditionReconciling = pvapi.ConditionReconciling
)

// Readiness reads an object's conditions as status, events and metrics
// show them: the Ready status ("Unknown" before any reconcile), and the
// reason and message that say what to do, the Stalled ones when it is
// stalled (Ready's may be Porch's generic "invalid packagevariant object"),
// Suspended's when it is suspended.
func Readiness(conds []metav1.Condition) (ready metav1.ConditionStatus, reason, message string, stalled bool) {
	ready = metav1.ConditionUnknown
	if c := meta.FindStatusCondition(conds, ConditionReady); c != nil {
		ready, reason, message = c.Status, c.Reason, c.Message
	}
	if c := meta.FindStatusCondition(conds, ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		reason, message, stalled = c.Reason, c.Message, true
	}
	// A suspension is what the operator needs to know first: the other
	// conditions are as the last reconcile before it left them.
	if c := meta.FindStatusCondition(conds, ConditionSuspended); c != nil && c.Status == metav1.ConditionTrue {
		reason, message = c.Reason, c.Message
	}
	return ready, reason, message, stalled
}

// Reasons Summarize sets itself.
const (
	// ReasonValid is Stalled=False: nothing waits for the user (Porch's).
	ReasonValid = pvapi.ReasonValid
	// ReasonProgressingWithRetry is Reconciling=True after a transient failure.
	ReasonProgressingWithRetry = pvapi.ReasonProgressingWithRetry
)

// validMessage is Porch's Stalled=False message.
const validMessage = "all validation checks passed"

// Summary sets an object's conditions from the outcome of its steps.
type Summary struct {
	Conditions *[]metav1.Condition
	Generation int64
	Clock      Clock
	// ReadyReason and ReadyMessage are Ready=True's on success.
	ReadyReason, ReadyMessage string
	// ErrorReason is Ready=False's reason for an error of no kit type.
	ErrorReason string
}

// Result is what Summarize decided.
type Result struct {
	// Err is what Reconcile returns: nil, a terminal error (stalling: logged,
	// not retried) or the error itself (retried with backoff).
	Err error
	// Stalled is the Stalling error when the outcome stalled.
	Stalled *Stalling
	// StallChanged reports a Stalled condition that is new or says something
	// new: the moment to record an Event (a steady stall records none).
	StallChanged bool
	// Waiting is the Waiting outcome, when that was it: nothing was
	// decided, the conditions are as they were, and the reconcile runs again
	// after Waiting.After.
	Waiting *Waiting
}

// Observed reports whether the outcome settles the object's current
// generation, so that status.observedGeneration may say so: a success, a
// stall, or a partial outcome that is not retried. A retried error and a
// wait do not (Flux's: observedGeneration means "decided").
// (rule: observed-when-settled)
func (r Result) Observed() bool { return r.Waiting == nil && (r.Err == nil || r.Stalled != nil) }

// Summarize sets Ready, Stalled and Reconciling from err (nil: success).
func (s Summary) Summarize(err error) Result {
	if err == nil {
		s.set(ConditionStalled, metav1.ConditionFalse, ReasonValid, validMessage)
		s.set(ConditionReady, metav1.ConditionTrue, s.ReadyReason, s.ReadyMessage)
		meta.RemoveStatusCondition(s.Conditions, ConditionReconciling)
		return Result{}
	}
	var w *Waiting
	if errors.As(err, &w) {
		return Result{Waiting: w}
	}
	o := classify(err, s.ErrorReason)
	switch {
	case o.Stall != nil:
		prev := meta.FindStatusCondition(*s.Conditions, ConditionStalled)
		changed := prev == nil || prev.Status != metav1.ConditionTrue || prev.Reason != o.Reason || prev.Message != err.Error()
		s.set(ConditionStalled, metav1.ConditionTrue, o.Reason, err.Error())
		reason, msg := o.Reason, err.Error()
		if o.Stall.ReadyReason != "" {
			reason, msg = o.Stall.ReadyReason, o.Stall.ReadyMessage
		}
		s.set(ConditionReady, metav1.ConditionFalse, reason, msg)
		meta.RemoveStatusCondition(s.Conditions, ConditionReconciling)
		return Result{Err: reconcile.TerminalError(err), Stalled: o.Stall, StallChanged: changed}
	case o.Partial != nil && !o.Partial.Retry:
		s.set(ConditionStalled, metav1.ConditionFalse, ReasonValid, validMessage)
		s.set(ConditionReady, metav1.ConditionFalse, o.Reason, err.Error())
		meta.RemoveStatusCondition(s.Conditions, ConditionReconciling)
		return Result{}
	}
	s.set(ConditionStalled, metav1.ConditionFalse, ReasonValid, validMessage)
	s.set(ConditionReady, metav1.ConditionFalse, o.Reason, err.Error())
	s.set(ConditionReconciling, metav1.ConditionTrue, ReasonProgressingWithRetry, err.Error())
	return Result{Err: err}
}

func (s Summary) set(typ string, status metav1.ConditionStatus, reason, msg string) {
	Set(s.Conditions, s.Generation, s.Clock, typ, status, reason, msg)
}
