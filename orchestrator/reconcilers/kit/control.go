package kit

// Operator controls on a set or a variant, the same in the controller and
// in pvctl (both run these reconcilers): suspend and resume, and reconcile
// now. Porch's YAML has no field for them, so they are annotations, as
// Flux's reconcile.fluxcd.io/requestedAt is.

import (
	"context"
	"fmt"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const (
	// SuspendAnnotation "true" suspends a set or a variant: its reconcile
	// writes nothing to Porch and no child, and says so in its status
	// (Suspended=True); removing it, or "false", resumes. A set's
	// suspension holds its children too. A value that is neither true nor
	// false suspends (the safe reading of a typo) and says so. Deleting a
	// suspended object is not suspended: its deletionPolicy applies.
	SuspendAnnotation = "pvkit.dev/suspend"
	// ReconcileRequestAnnotation set to a new value (pvctl reconcile
	// writes the time) asks for a reconcile now; the finished reconcile
	// records the value in status.lastHandledReconcileAt.
	ReconcileRequestAnnotation = "pvkit.dev/reconcile-requested-at"

	// ConditionSuspended is True while the object is suspended; absent
	// otherwise. The other conditions stay as the last reconcile left them.
	ConditionSuspended = pvapi.ConditionSuspended
	// ReasonSuspended is Suspended=True's reason.
	ReasonSuspended = pvapi.ReasonSuspended
	// EventSuspended and EventResumed are the Normal Events of a
	// suspension starting and ending.
	EventSuspended = "Suspended"
	EventResumed   = "Resumed"
)

// SuspendedBy reads an object's own suspension from its annotations: why it
// is suspended, or "" when it is not.
func SuspendedBy(what string, annotations map[string]string) string {
	v, ok := annotations[SuspendAnnotation]
	switch {
	case !ok || v == "false":
		return ""
	case v == "true":
		return fmt.Sprintf("%s is suspended (%s: \"true\")", what, SuspendAnnotation)
	default:
		return fmt.Sprintf("%s is suspended: %s is %q, neither \"true\" nor \"false\" (suspended until it is one of them)", what, SuspendAnnotation, v)
	}
}

// MarkSuspended sets Suspended=True with why, and reports whether the
// object was not suspended before (a new suspension: its Event).
func MarkSuspended(conds *[]metav1.Condition, generation int64, clock Clock, why string) bool {
	was := meta.IsStatusConditionTrue(*conds, ConditionSuspended)
	Set(conds, generation, clock, ConditionSuspended, metav1.ConditionTrue, ReasonSuspended, why+": nothing is written to Porch or to a child until it is resumed")
	return !was
}

// MarkResumed removes the Suspended condition and reports whether there was
// one (a resumption: its Event).
func MarkResumed(conds *[]metav1.Condition) bool {
	return meta.RemoveStatusCondition(conds, ConditionSuspended)
}

// SuspendChanged lets through the updates that change an object's
// suspension: a set's, for the watch that brings its children along.
func SuspendChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return e.ObjectOld != nil && e.ObjectNew != nil &&
				e.ObjectOld.GetAnnotations()[SuspendAnnotation] != e.ObjectNew.GetAnnotations()[SuspendAnnotation]
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// Suspended is a suspended object's whole reconcile: Suspended=True (a
// Normal Event and a log line when the suspension starts), the status
// patched when it changed, nothing else read or written.
func Suspended(ctx context.Context, obj runtime.Object, conds *[]metav1.Condition, generation int64, clock Clock, ev Events, why string, patch func() error) (ctrl.Result, error) {
	if MarkSuspended(conds, generation, clock, why) {
		ctrl.LoggerFrom(ctx).Info("suspended: writing nothing until resumed", "why", why)
		ev.Normal(obj, EventSuspended, "%s: nothing is written to Porch or to a child until it is resumed", why)
	}
	err := patch()
	if StatusLost(err) {
		return ctrl.Result{RequeueAfter: StatusLostRetry}, nil
	}
	return ctrl.Result{}, err
}

// Resumed removes a former suspension from the conditions, with a Normal
// Event; the reconcile goes on.
func Resumed(ctx context.Context, obj runtime.Object, conds *[]metav1.Condition, ev Events) {
	if MarkResumed(conds) {
		ctrl.LoggerFrom(ctx).Info("resumed: reconciling")
		ev.Normal(obj, EventResumed, "resumed: reconciling")
	}
}
