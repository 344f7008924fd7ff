package packagevariantset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/rollout"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The operator's controls of a staged rollout, annotations on the set (as
// pvkit.dev/suspend; pvctl rollout pause|resume|hold|skip writes them):
const (
	// RolloutPauseAnnotation "true" pauses the rollout: no child moves;
	// those moved stay.
	RolloutPauseAnnotation = "pvkit.dev/rollout-pause"
	// RolloutHoldAnnotation lists children (comma-separated names) that
	// keep their upstream whatever the rollout does (maintenance).
	RolloutHoldAnnotation = "pvkit.dev/rollout-hold"
	// RolloutSkipAnnotation lists failed children the rollout stops
	// waiting for.
	RolloutSkipAnnotation = "pvkit.dev/rollout-skip"
	// RolloutUndoAnnotation names the target revision whose rollout is
	// undone (rule: rollout-undo): every child goes back to the rollout's
	// from revision at once; removing it (pvctl rollout resume) rolls the
	// target out again from wave one.
	RolloutUndoAnnotation = "pvkit.dev/rollout-undo"
	// RolloutRetryAnnotation (TARGET@STAMP) rolls TARGET out again from
	// wave one after the rollout undid itself on failure (spec.rollout.
	// onFailure: undo); each new value retries once (pvctl rollout resume
	// writes the time as the stamp).
	RolloutRetryAnnotation = "pvkit.dev/rollout-retry"
	// RolloutApproveAnnotation lists waves a person approved, each as
	// WAVE@TARGET (rule: wave-approval): the wave's children moved to
	// TARGET get spec.approval, and approval by policy approves their
	// finished drafts; an entry for another target is ignored.
	RolloutApproveAnnotation = "pvkit.dev/rollout-approve"
)

// defaultProgressDeadline: a moved child not Ready after this is failed.
const defaultProgressDeadline = 10 * time.Minute

// plan plans the rollout of the children (pkg/rollout), in name order,
// with the operator's controls, and says when to come back though
// nothing changes (the next gate due).
func (r *Reconciler) plan(set *pvsapi.PackageVariantSet, prev *v1alpha2.RolloutStatus, base pv.Upstream, target v1alpha2.RevisionRef, children []rollout.Child, next *due) (rollout.Result, time.Duration) {
	sort.Slice(children, func(i, j int) bool { return children[i].Name < children[j].Name })
	ctl := controls(set.Annotations)
	ctl.Now = r.now()
	res := rollout.Plan(set.Spec.Rollout, prev, base, target, children, ctl)
	next.window(res)
	var again time.Duration
	if res.Status.Phase != rollout.Complete {
		res.Status.Next, again = next.gate(), next.after(ctl.Now)
	}
	return res, again
}

// remembered is what the last plan knew: restart when it was of another
// target (or none); else the children of waves complete before, and those
// confirmed done in the open wave, which are not read again.
func remembered(prev *v1alpha2.RolloutStatus, target v1alpha2.RevisionRef) (restart bool, complete, confirmed map[string]bool) {
	restart = prev == nil || prev.Target.Name != target.Name
	complete, confirmed = map[string]bool{}, map[string]bool{}
	if restart {
		return restart, complete, confirmed
	}
	for _, w := range prev.Waves {
		for _, m := range w.Members {
			complete[m] = w.State == rollout.WaveComplete
		}
		for _, m := range w.DoneMembers {
			confirmed[m] = true
		}
	}
	return restart, complete, confirmed
}

// ApprovedWaves are the waves the annotation approves for a target: none
// while the target's rollout is undone (RolloutUndoAnnotation names it).
func ApprovedWaves(ann map[string]string, target string) map[string]bool {
	out := map[string]bool{}
	if ann[RolloutUndoAnnotation] == target {
		return out
	}
	for _, e := range strings.Split(ann[RolloutApproveAnnotation], ",") {
		if w, t, ok := strings.Cut(strings.TrimSpace(e), "@"); ok && t == target && w != "" {
			out[w] = true
		}
	}
	return out
}

// rolloutConditionTypes are the set's conditions of its rollout's phase.
var rolloutConditionTypes = []string{pvapi.ConditionRolloutProgressing, pvapi.ConditionRolloutPaused, pvapi.ConditionRolloutComplete}

// setRolloutConditions sets the rollout's phase as the set's conditions
// (rule: rollout-conditions): the one of the phase True with its reason
// and the rollout's message, the other two False with the phase.
func (r *Reconciler) setRolloutConditions(set *pvsapi.PackageVariantSet, res rollout.Result) {
	st := res.Status
	on := map[v1alpha2.RolloutPhase]struct{ typ, reason string }{
		rollout.Progressing: {pvapi.ConditionRolloutProgressing, pvapi.ReasonWaveOpen},
		rollout.Paused:      {pvapi.ConditionRolloutPaused, string(res.Pause)},
		rollout.Complete:    {pvapi.ConditionRolloutComplete, pvapi.ReasonAtTarget},
	}[st.Phase]
	if st.Phase == rollout.Complete && len(st.Held)+len(st.Skipped) > 0 {
		on.reason = pvapi.ReasonNotAllAtTarget // held or skipped children still run what they ran
	}
	for _, typ := range rolloutConditionTypes {
		if typ == on.typ {
			kit.Set(&set.Status.Conditions, set.Generation, r.Clock, typ, metav1.ConditionTrue, on.reason, st.Message)
		} else {
			kit.Set(&set.Status.Conditions, set.Generation, r.Clock, typ, metav1.ConditionFalse, pvapi.ReasonRolloutPhase, fmt.Sprintf("the rollout is %s", st.Phase))
		}
	}
}

// rolloutEvents records a plan's events on the set (a pause is a
// Warning) and logs them.
func (r *Reconciler) rolloutEvents(ctx context.Context, set *pvsapi.PackageVariantSet, events []rollout.Event) {
	ev := kit.Events{Recorder: r.Recorder}
	for _, e := range events {
		if e.Warning() {
			ev.Warning(set, string(e.Reason), "%s", e.Message)
		} else {
			ev.Normal(set, string(e.Reason), "%s", e.Message)
		}
		ctrl.LoggerFrom(ctx).Info("rollout", "event", e.Reason, "message", e.Message)
	}
}

// controls reads the rollout's controls from the set's annotations.
func controls(ann map[string]string) rollout.Controls {
	list := func(key string) map[string]bool {
		out := map[string]bool{}
		for _, n := range strings.Split(ann[key], ",") {
			if n = strings.TrimSpace(n); n != "" {
				out[n] = true
			}
		}
		return out
	}
	c := rollout.Controls{Hold: list(RolloutHoldAnnotation), Skip: list(RolloutSkipAnnotation), Undo: strings.TrimSpace(ann[RolloutUndoAnnotation]),
		Retry: strings.TrimSpace(ann[RolloutRetryAnnotation])}
	if v, ok := ann[RolloutPauseAnnotation]; ok && v != "false" {
		c.Paused, c.PauseMessage = true, fmt.Sprintf("%s is %q", RolloutPauseAnnotation, v)
	}
	return c
}

func (r *Reconciler) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}
