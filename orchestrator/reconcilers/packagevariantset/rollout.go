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
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
	"github.com/pvkit/pvkit/pkg/upstream"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// applyRollout pins each computed child's upstream as the set's rollout
// plans it (pkg/rollout; rule: staged-rollouts) and records the rollout in
// the status; a set without spec.rollout has none. The children of the
// open wave that were moved are read fresh (Reader: past the cache), with
// their downstream packages, to know whether they are done. revs are the
// upstream package's revisions, as world listed them.
//
// again is when to reconcile the set again though nothing changes: when
// the first child that waits, not Ready, reaches the progress deadline (a
// failing render changes nothing in its status while it is retried).
func (r *Reconciler) applyRollout(ctx context.Context, set *pvsapi.PackageVariantSet, x *pvsexpand.Expansion, existing []*pv.PackageVariant, revs []store.Revision) (again time.Duration, err error) {
	spec := set.Spec.Rollout
	if spec == nil {
		set.Status.Rollout = nil
		for _, c := range rolloutConditionTypes {
			apimeta.RemoveStatusCondition(&set.Status.Conditions, c)
		}
		return 0, nil
	}
	u := set.Spec.Upstream
	cands := make([]upstream.Candidate, len(revs))
	for i, rev := range revs {
		cands[i] = upstream.Candidate{Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle}
	}
	i := upstream.Select(*u, cands)
	if i < 0 {
		return 0, nil // Expand found it; a race with a deletion: the next reconcile
	}
	up := revs[i]
	target := v1alpha2.RevisionRef{Name: up.Name, Workspace: up.Workspace, Revision: up.Revision}
	current := map[string]*pv.Upstream{}
	for _, c := range existing {
		current[c.Metadata.Name] = c.Spec.Upstream
	}
	prev := set.Status.Rollout
	restart, complete, confirmed := remembered(prev, target)
	g := gateOf(spec)
	var next due // the next gate due at a known instant (issue 57 #8)
	children := make([]rollout.Child, 0, len(x.Children))
	for _, c := range x.Children {
		ch := rollout.Child{Name: c.Name, Labels: c.Labels, Current: current[c.Name]}
		if cur := ch.Current; cur != nil && cur.WorkspaceName == target.Workspace && cur.Revision == target.Revision && cur.Semver == "" && !complete[c.Name] && !restart {
			if confirmed[c.Name] {
				ch.Done = true
				children = append(children, ch)
				continue
			}
			vd, err := r.observe(ctx, set.Namespace, c.Name, up, g)
			if err != nil {
				return 0, err
			}
			ch.Done, ch.Failed, ch.Why = vd.Done, vd.Failed, vd.Why
			next.sooner(vd.Recheck, c.Name+": "+vd.Due)
		}
		children = append(children, ch)
	}
	res, again := r.plan(set, prev, *u, target, children, &next)
	pinChildren(x, res, spec)
	approveWaves(set, x, res, target, store.LockFor(up).Ref)
	if err := r.undoProgress(ctx, set, &res.Status, names(children), revs, g); err != nil {
		return 0, err
	}
	set.Status.Rollout = &res.Status
	r.setRolloutConditions(set, res)
	r.rolloutEvents(ctx, set, res.Events)
	return again, nil
}

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

// names are the children's names.
func names(cs []rollout.Child) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}

// pinChildren gives each computed child the upstream the plan pins and
// the rollout's health check (rule: health-gated-rollouts).
func pinChildren(x *pvsexpand.Expansion, res rollout.Result, spec *v1alpha2.Rollout) {
	for i := range x.Children {
		if pin, ok := res.Pins[x.Children[i].Name]; ok {
			x.Children[i].Spec.Upstream = &pin
		}
		if spec.Health != nil {
			h := *spec.Health
			x.Children[i].Spec.Health = &h
		}
	}
}

// approveWaves gives the children of the waves a person approved for
// this target, moved there, the wave's approval (rule: wave-approval);
// the others have none.
func approveWaves(set *pvsapi.PackageVariantSet, x *pvsexpand.Expansion, res rollout.Result, target v1alpha2.RevisionRef, ref string) {
	approved := ApprovedWaves(set.Annotations, target.Name)
	if res.Status.Undone { // undone on failure too: no wave approved
		approved = nil
	}
	by := map[string]string{}
	for _, w := range res.Status.Waves {
		if approved[w.Name] {
			for _, m := range w.Members {
				by[m] = fmt.Sprintf("wave %s of PackageVariantSet %s, %s", w.Name, set.Name, RolloutApproveAnnotation)
			}
		}
	}
	for i := range x.Children {
		c := &x.Children[i]
		if u := c.Spec.Upstream; by[c.Name] != "" && u != nil && u.WorkspaceName == target.Workspace && u.Revision == target.Revision {
			c.Spec.Approval = &pv.WaveApproval{UpstreamRef: ref, By: by[c.Name]}
		}
	}
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

// verdict is how a moved child is doing: done, failed (Why says why) or
// neither (Why says what it waits for; Recheck, when set, is when it will
// have failed unless it changes).
type verdict struct {
	Done, Failed bool
	Why          string
	Recheck      time.Time
	// Due says what happens at Recheck ("its soak ends").
	Due string
}

// observe judges a moved child from its status alone (rule:
// child-status-contract): judge. It judges the cached child first: a cache
// only lags, so what it shows neither done nor failed is not (the child's
// next status change brings the set back, childProgressed); what it shows
// done or failed is read once more past the cache (Reader) and judged on
// that. A child confirmed done is recorded in the open wave's status
// (WaveStatus.DoneMembers) and not read again while the wave is open.
func (r *Reconciler) observe(ctx context.Context, namespace, name string, up store.Revision, g gate) (verdict, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	v := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, key, v); err != nil {
		return verdict{}, client.IgnoreNotFound(err)
	}
	vd := g.judge(factsOf(v), up, r.now())
	if (!vd.Done && !vd.Failed) || r.Reader == nil {
		return vd, nil // or the client reads past any cache (pvctl)
	}
	if err := r.Reader.Get(ctx, key, v); err != nil {
		return verdict{}, client.IgnoreNotFound(err)
	}
	return g.judge(factsOf(v), up, r.now()), nil
}

// childFacts are what a staged rollout reads of a child (rule:
// child-status-contract), one list: judge reads nothing else, and
// childProgressed lets through exactly the status changes that change it.
type childFacts struct {
	Generation, ObservedGeneration int64
	Ready, Stalled                 *metav1.Condition
	Targets                        []targetFacts
}

// targetFacts are what judge reads of a downstream target.
type targetFacts struct {
	Name, Lifecycle string
	UpstreamLock    *pvapi.UpstreamLock
	Blocked         *pvapi.Blocked
	Health          *pvapi.TargetHealth
	Drift           *pvapi.TargetDrift
}

// factsOf are a child's childFacts.
func factsOf(v *pvapi.PackageVariant) childFacts {
	f := childFacts{Generation: v.Generation, ObservedGeneration: v.Status.ObservedGeneration,
		Ready:   apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady),
		Stalled: apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionStalled)}
	for _, t := range v.Status.DownstreamTargets {
		f.Targets = append(f.Targets, targetFacts{Name: t.Name, Lifecycle: t.Lifecycle, UpstreamLock: t.UpstreamLock, Blocked: t.Blocked, Health: t.Health, Drift: t.Drift})
	}
	return f
}

// gate is what a moved child must show to be done: a published target at
// the rollout's revision, and, with a health check, that target healthy
// for minSuccess; deadline bounds the wait for either.
type gate struct {
	deadline, minSuccess time.Duration
	health               bool
}

func gateOf(spec *v1alpha2.Rollout) gate {
	g := gate{deadline: defaultProgressDeadline, health: spec.Health != nil}
	if spec.ProgressDeadlineSeconds != nil {
		g.deadline = time.Duration(*spec.ProgressDeadlineSeconds) * time.Second
	}
	if spec.MinSuccessSeconds != nil {
		g.minSuccess = time.Duration(*spec.MinSuccessSeconds) * time.Second
	}
	return g
}

// healthy judges a published target by its health (rule:
// health-gated-rollouts): done once healthy for minSuccess; failed at once
// when the cluster reports it failed (the check's failed expression);
// failed when not healthy for longer than the deadline (counted from when its health
// was first read not healthy: its publication, or its last change);
// waiting otherwise, saying until when. The messages name times, not
// durations, so that a wait does not rewrite the set's status each pass.
func (g gate) healthy(t targetFacts, now time.Time) verdict {
	h := t.Health
	switch {
	case h == nil:
		return verdict{Why: fmt.Sprintf("%s is published; its health check is not read yet", t.Name)}
	case h.Status == metav1.ConditionFalse && h.Reason == pvapi.ReasonHealthFailed:
		return verdict{Failed: true, Why: fmt.Sprintf("%s failed on the cluster: %s", t.Name, reported(h))}
	case h.Status != metav1.ConditionTrue:
		at := h.Since.Add(g.deadline)
		if now.After(at) {
			return verdict{Failed: true, Why: fmt.Sprintf("%s not healthy for %s: %s", t.Name, g.deadline, reported(h))}
		}
		return verdict{Why: fmt.Sprintf("%s is published, the cluster has not reported it healthy (%s: %s)", t.Name, h.Reason, h.Message), Recheck: at,
			Due: "fails unless reported healthy by then (progressDeadlineSeconds)"}
	}
	if at := h.Since.Add(g.minSuccess); now.Before(at) {
		return verdict{Why: fmt.Sprintf("%s healthy since %s, done at %s if it stays so (minSuccessSeconds)", t.Name,
			h.Since.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339)), Recheck: at, Due: "done if still healthy then (minSuccessSeconds)"}
	}
	return verdict{Done: true}
}

// reported is what a target's cluster says of it in its own words (the
// health check's message, with the reason and the object), else the
// health's message and reason.
func reported(h *pvapi.TargetHealth) string {
	if h.Reported != "" {
		return fmt.Sprintf("%s (%s, %s)", h.Reported, h.Reason, h.Object)
	}
	return fmt.Sprintf("%s (%s)", h.Message, h.Reason)
}

// judge is a moved child's verdict from its status: done when Ready at its
// generation with a Published downstream target locked to the rollout's
// target (with a health check: reported healthy, for minSuccess; healthy); failed when Stalled at its generation, not Ready for longer than
// the progress deadline, or when its target at the rollout's revision is
// Blocked GateClosed or Rejected (it cannot be approved without a change);
// else waiting, saying for what (the target's Blocked message: the
// approval it waits for). No read of the child's packages: the child's
// reconciler owns those facts and writes them in its status.
func (g gate) judge(v childFacts, up store.Revision, now time.Time) verdict {
	deadline := g.deadline
	ready := v.Ready
	if v.ObservedGeneration != v.Generation {
		// Not settled at this generation. A retried error (a render that
		// fails) keeps observedGeneration behind for as long as it fails,
		// but writes Ready=False at this generation: past the deadline the
		// child has failed like any other, named (it used to be skipped for
		// ever: "200 of 200 moved, 0 done").
		if ready == nil || ready.ObservedGeneration != v.Generation || ready.Status == metav1.ConditionTrue {
			return verdict{Why: "not reconciled since it moved"}
		}
		return notReady(ready, deadline, now)
	}
	if c := v.Stalled; c != nil && c.Status == metav1.ConditionTrue {
		return verdict{Failed: true, Why: fmt.Sprintf("%s: %s", c.Reason, c.Message)}
	}
	if ready == nil {
		return verdict{}
	}
	if ready.Status != metav1.ConditionTrue {
		return notReady(ready, deadline, now)
	}
	var at []targetFacts
	for _, t := range v.Targets {
		if kit.StoreLock(t.UpstreamLock).Matches(up) {
			at = append(at, t)
		}
	}
	for _, t := range at {
		if t.Lifecycle == string(store.Published) {
			if d := t.Drift; d != nil { // rule published-drift: a person decides first
				return verdict{Why: fmt.Sprintf("%s drifted (%s): %s", t.Name, d.Reason, d.Message)}
			}
			if g.health {
				return g.healthy(t, now)
			}
			return verdict{Done: true}
		}
	}
	for _, t := range at {
		switch b := t.Blocked; {
		case b == nil:
		case b.Reason == pvapi.ReasonRejected:
			return verdict{Failed: true, Why: fmt.Sprintf("draft %s was rejected", t.Name)}
		case b.Reason == pvapi.ReasonGateClosed:
			return verdict{Failed: true, Why: fmt.Sprintf("draft %s is not approvable: %s", t.Name, b.Message)}
		default:
			return verdict{Why: fmt.Sprintf("draft %s is %s", t.Name, b.Message)}
		}
	}
	if len(at) > 0 {
		return verdict{Why: fmt.Sprintf("draft %s is %s, not yet approved", at[0].Name, at[0].Lifecycle)}
	}
	return verdict{Why: "no draft at the target yet"}
}

// notReady judges a child whose Ready condition is not True: failed once
// it has been so for longer than the progress deadline, else waiting, and
// why.
func notReady(ready *metav1.Condition, deadline time.Duration, now time.Time) verdict {
	at := ready.LastTransitionTime.Add(deadline)
	if now.After(at) {
		return verdict{Failed: true, Why: fmt.Sprintf("not Ready for %s (%s: %s)", deadline, ready.Reason, ready.Message)}
	}
	return verdict{Why: fmt.Sprintf("%s: %s", ready.Reason, ready.Message), Recheck: at, Due: "fails unless Ready by then (progressDeadlineSeconds)"}
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
