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
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
	"github.com/pvkit/pvkit/pkg/upstream"
	"github.com/pvkit/pvkit/pkg/variant"
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
	restart := prev == nil || prev.Target.Name != target.Name
	complete := map[string]bool{} // children of waves complete before: not read again
	if !restart {
		for _, w := range prev.Waves {
			for _, m := range w.Members {
				complete[m] = w.State == rollout.WaveComplete
			}
		}
	}
	deadline := defaultProgressDeadline
	if spec.ProgressDeadlineSeconds != nil {
		deadline = time.Duration(*spec.ProgressDeadlineSeconds) * time.Second
	}
	children := make([]rollout.Child, 0, len(x.Children))
	for _, c := range x.Children {
		ch := rollout.Child{Name: c.Name, Labels: c.Labels, Current: current[c.Name]}
		if cur := ch.Current; cur != nil && cur.WorkspaceName == target.Workspace && cur.Revision == target.Revision && cur.Semver == "" && !complete[c.Name] && !restart {
			vd, err := r.observe(ctx, set.Namespace, c.Name, up, deadline)
			if err != nil {
				return 0, err
			}
			ch.Done, ch.Failed, ch.Why = vd.Done, vd.Failed, vd.Why
			if !vd.Recheck.IsZero() {
				if d := vd.Recheck.Sub(r.now()) + time.Second; again == 0 || d < again {
					again = d
				}
			}
		}
		children = append(children, ch)
	}
	sort.Slice(children, func(i, j int) bool { return children[i].Name < children[j].Name })
	res := rollout.Plan(spec, prev, *u, target, children, controls(set.Annotations))
	for i := range x.Children {
		if pin, ok := res.Pins[x.Children[i].Name]; ok {
			x.Children[i].Spec.Upstream = &pin
		}
	}
	set.Status.Rollout = &res.Status
	ev := kit.Events{Recorder: r.Recorder}
	for _, e := range res.Events {
		reason, msg, _ := strings.Cut(e, ": ")
		if reason == "RolloutPaused" {
			ev.Warning(set, reason, "%s", msg)
		} else {
			ev.Normal(set, reason, "%s", msg)
		}
		ctrl.LoggerFrom(ctx).Info("rollout", "event", reason, "message", msg)
	}
	if res.Status.Phase == rollout.Complete {
		again = 0
	}
	return again, nil
}

// verdict is how a moved child is doing: done, failed (Why says why) or
// neither (Why says what it waits for; Recheck, when set, is when it will
// have failed unless it changes).
type verdict struct {
	Done, Failed bool
	Why          string
	Recheck      time.Time
}

// observe judges a moved child: done when Ready at its generation with a
// published revision of its downstream, owned by it, at the target;
// failed when Stalled at its generation, not Ready for longer than the
// progress deadline, or when its draft at the target was rejected or
// cannot be approved without a change. It judges the cached child first:
// a cache only lags, so what it shows neither done nor failed is not
// (the child's next status change brings the set back, childProgressed);
// what it shows done or failed is read again fresh (Reader, past the
// cache) and judged on that, a child done once at the target only once.
// A fleet's rollout so reads each child fresh about once, not on every
// reconcile of the set.
func (r *Reconciler) observe(ctx context.Context, namespace, name string, up store.Revision, deadline time.Duration) (verdict, error) {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	v := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, key, v); err != nil {
		return verdict{}, client.IgnoreNotFound(err)
	}
	vd, err := r.judge(ctx, v, up, deadline)
	if err != nil || (!vd.Done && !vd.Failed) {
		return vd, err
	}
	reader := r.Reader
	confirmed := key.String() + "@" + up.Name
	if reader == nil || vd.Done && r.wasConfirmed(confirmed) {
		return vd, nil // the client reads past any cache (pvctl); or read fresh done before
	}
	if err := reader.Get(ctx, key, v); err != nil {
		return verdict{}, client.IgnoreNotFound(err)
	}
	if vd, err = r.judge(ctx, v, up, deadline); vd.Done {
		r.confirm(confirmed)
	}
	return vd, err
}

// confirm remembers a child read fresh done at a target ("ns/name@target"):
// published there, it stays done, and the open wave's done children are
// not read fresh again on each of the set's reconciles (at N=200, before
// this, 74 fresh reads per variant).
func (r *Reconciler) confirm(key string) {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	if r.done == nil || len(r.done) >= maxRemembered {
		r.done = map[string]bool{}
	}
	r.done[key] = true
}

func (r *Reconciler) wasConfirmed(key string) bool {
	r.gmu.Lock()
	defer r.gmu.Unlock()
	return r.done[key]
}

// judge is observe's verdict on the child as read; why says why it failed,
// or what it waits for.
func (r *Reconciler) judge(ctx context.Context, v *pvapi.PackageVariant, up store.Revision, deadline time.Duration) (verdict, error) {
	ready := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
	if v.Status.ObservedGeneration != v.Generation {
		// Not settled at this generation. A retried error (a render that
		// fails) keeps observedGeneration behind for as long as it fails,
		// but writes Ready=False at this generation: past the deadline the
		// child has failed like any other, named (it used to be skipped for
		// ever: "200 of 200 moved, 0 done").
		if ready == nil || ready.ObservedGeneration != v.Generation || ready.Status == metav1.ConditionTrue {
			return verdict{Why: "not reconciled since it moved"}, nil
		}
		return r.notReady(ready, deadline)
	}
	if c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		return verdict{Failed: true, Why: fmt.Sprintf("%s: %s", c.Reason, c.Message)}, nil
	}
	if ready == nil || ready.Status != metav1.ConditionTrue {
		if ready == nil {
			return verdict{}, nil
		}
		return r.notReady(ready, deadline)
	}
	revs, err := r.Store.ListRevisions(ctx, store.PackageKey{Namespace: v.Namespace, Repository: v.Spec.Downstream.Repo, Package: v.Spec.Downstream.Package})
	if err != nil {
		return verdict{}, err
	}
	for _, rev := range revs {
		if rev.Lifecycle == store.Published && rev.OwnedBy(string(v.UID)) && rev.Lock != nil && rev.Lock.Matches(up) {
			return verdict{Done: true}, nil
		}
	}
	// Not published yet: a draft at the target a person rejected, or that
	// cannot be approved without a change (a readiness gate False other
	// than the mutation's own, which the chain closes: a required
	// injection point left empty), has failed.
	rejected := map[string]bool{}
	for _, t := range v.Status.DownstreamTargets {
		rejected[t.Name] = t.Rejected
	}
	for _, rev := range revs {
		if rev.Lifecycle.IsPublished() || !rev.OwnedBy(string(v.UID)) || rev.Lock == nil || !rev.Lock.Matches(up) {
			continue
		}
		if rev.Lifecycle == store.Draft && rejected[rev.Name] {
			return verdict{Failed: true, Why: fmt.Sprintf("draft %s was rejected", rev.Name)}, nil
		}
		if why, err := r.gateClosed(ctx, rev); err != nil || why != "" {
			return verdict{Failed: why != "", Why: why}, err
		}
		waits := fmt.Sprintf("draft %s is %s, not yet approved", rev.Name, rev.Lifecycle)
		return verdict{Why: waits}, nil
	}
	return verdict{Why: "no draft at the target yet"}, nil
}

// notReady judges a child whose Ready condition is not True: failed once
// it has been so for longer than the progress deadline, else waiting, and
// why.
func (r *Reconciler) notReady(ready *metav1.Condition, deadline time.Duration) (verdict, error) {
	at := ready.LastTransitionTime.Add(deadline)
	if r.now().After(at) {
		return verdict{Failed: true, Why: fmt.Sprintf("not Ready for %s (%s: %s)", deadline, ready.Reason, ready.Message)}, nil
	}
	return verdict{Why: fmt.Sprintf("%s: %s", ready.Reason, ready.Message), Recheck: at}, nil
}

// gateClosed says why a draft cannot be approved without a change (a
// readiness gate False other than the mutation's), or "". The verdict is
// remembered per draft version (its resourceVersion, from the listing):
// the set reconciles on every step of its children while a rollout runs,
// and reading each draft's resources each time was most of a rollout's
// requests to Porch.
func (r *Reconciler) gateClosed(ctx context.Context, rev store.Revision) (string, error) {
	key := rev.Namespace + "/" + rev.Name + "@" + rev.ResourceVersion
	r.gmu.Lock()
	why, ok := r.gates[key]
	r.gmu.Unlock()
	if ok && rev.ResourceVersion != "" {
		return why, nil
	}
	res, err := r.Store.GetResources(ctx, rev.Namespace, rev.Name)
	if err != nil {
		return "", err
	}
	why = ""
	if kf, err := kptfile.FromFiles(res.Files); err == nil && kf != nil {
		if gate, c, err := kf.NotReady(); err == nil && gate != "" && gate != variant.MutationGate && c != nil {
			why = fmt.Sprintf("draft %s is not approvable: readiness gate %q is %s (%s: %s)", rev.Name, gate, c.Status, c.Reason, c.Message)
		}
	}
	r.gmu.Lock()
	if r.gates == nil || len(r.gates) >= maxRemembered {
		r.gates = map[string]string{} // bounded: a fleet's drafts in flight are few
	}
	r.gates[key] = why
	r.gmu.Unlock()
	return why, nil
}

// maxRemembered bounds what gateClosed and confirm remember.
const maxRemembered = 4096

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
	c := rollout.Controls{Hold: list(RolloutHoldAnnotation), Skip: list(RolloutSkipAnnotation)}
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
