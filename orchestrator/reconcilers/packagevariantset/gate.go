package packagevariantset

import (
	"context"
	"fmt"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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
