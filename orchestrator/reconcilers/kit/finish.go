package kit

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Finish is a reconcile's finish step, the same for every kind: a Waiting
// result changes no condition and comes back later, its facts (a write it
// made before it waited) patched all the same; a new stall is logged and
// recorded as a Warning Event; observedGeneration moves only when the
// result settles the generation (Result.Observed); the status is patched
// when it changed, and a patch lost to a newer write (a lagging cache) is
// reconciled again soon rather than reported as an error.
type Finish struct {
	Result  Result
	Outcome error
	// Object is the reconciled object, for the Event.
	Object runtime.Object
	Events Events
	// SetObserved sets the object's status.observedGeneration.
	SetObserved func()
	// Patch patches the object's status from what it was.
	Patch func() error
	// Observe records the reconcile's metrics: waiting, or stalled and the
	// error it returns.
	Observe func(waiting, stalled bool, err error)
	// Again is when to reconcile again when nothing else says (0: on the
	// next change).
	Again time.Duration
}

// Do runs the finish step and returns the reconcile's result.
func (f Finish) Do(ctx context.Context) (ctrl.Result, error) {
	res := f.Result
	if res.Waiting != nil {
		ctrl.LoggerFrom(ctx).V(1).Info(res.Waiting.Why)
		if err := f.Patch(); err != nil && !StatusLost(err) {
			f.Observe(false, false, err)
			return ctrl.Result{}, err
		}
		f.Observe(true, false, nil)
		return ctrl.Result{RequeueAfter: res.Waiting.After}, nil
	}
	if res.StallChanged {
		ctrl.LoggerFrom(ctx).Info("stalled: waiting for a change", "reason", res.Stalled.Reason, "message", f.Outcome.Error())
		f.Events.Warning(f.Object, res.Stalled.Reason, "%s", f.Outcome.Error())
	}
	if res.Observed() {
		f.SetObserved()
	}
	patchErr := f.Patch()
	if res.Err == nil && StatusLost(patchErr) {
		ctrl.LoggerFrom(ctx).V(1).Info("status patch lost to a newer write (the cache lagged): reconciling again")
		f.Observe(true, false, nil)
		return ctrl.Result{RequeueAfter: StatusLostRetry}, nil
	}
	err := errors.Join(res.Err, patchErr)
	f.Observe(false, res.Stalled != nil, err)
	return ctrl.Result{RequeueAfter: f.Again}, err
}
