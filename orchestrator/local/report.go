package local

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/upstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Report is what a run did and where each object stands.
type Report struct {
	// Changes are the repository changes, in order.
	Changes []string
	// Objects are the sets, then the variants, each sorted by name.
	Objects []ObjectStatus
	// Passes is how many reconcile passes it took to settle.
	Passes int
	// Held are the removals held back for want of --prune.
	Held []string
	// DryRun: nothing was written; Changes are what a run would do.
	DryRun bool
	// Diffs are the unified diffs of the revisions a dry run would change.
	Diffs []string
	// Variants and Sets are the objects as the state file keeps them.
	Variants []pvapi.PackageVariant
	Sets     []pvsapi.PackageVariantSet
	// Warnings are what the run left out and went on without (a ref of
	// the repositories that is not a readable revision).
	Warnings []string
	// Notes are what the run chose not to do that a reader may expect: a
	// semver upstream's newer versions outside its range (rule:
	// floating-versions).
	Notes []string
	// Drifts are the variants whose downstream package changed behind
	// their back (the condition PublishedDrift: rules published-drift,
	// content-drift), "PackageVariant NAME: message", by name.
	Drifts []string
	// Unsettled says why the run ended before nothing changed any more
	// (its deadline, or MaxPasses); "" when it settled. Its state is
	// written all the same.
	Unsettled string
}

// ObjectStatus is one object's Ready condition and downstream revisions.
type ObjectStatus struct {
	Kind, Name   string
	Ready        metav1.ConditionStatus
	Reason       string
	Message      string
	Downstream   []string
	Deleting     bool
	ReconcileErr string
	// Stalled: the object waits for a change of its input (Stalled=True);
	// running again unchanged cannot help.
	Stalled bool
}

// Counts are how many sets and variants are Ready, not Ready, and of the
// latter stalled.
func (r *Report) Counts() (ready, notReady, stalled int) {
	for _, o := range r.Objects {
		switch {
		case o.Ready == metav1.ConditionTrue && !o.Deleting:
			ready++
		case o.Reason == pvapi.ReasonRemovalHeld:
			// Not an error: what waits for --prune is Report.Held (exit 3).
		case o.Stalled:
			notReady++
			stalled++
		default:
			notReady++
		}
	}
	return ready, notReady, stalled
}

// AllReady reports whether every object is Ready and nothing was held back.
func (r *Report) AllReady() bool {
	if len(r.Held) > 0 {
		return false
	}
	for _, o := range r.Objects {
		if o.Ready != metav1.ConditionTrue {
			return false
		}
	}
	return true
}

// collect reads every set and variant back for the report and the state.
func (rep *Report) collect(ctx context.Context, c client.Client, gs allLister, namespace string, errs map[string]error) error {
	var sets pvsapi.PackageVariantSetList
	if err := c.List(ctx, &sets, client.InNamespace(namespace)); err != nil {
		return err
	}
	var variants pvapi.PackageVariantList
	if err := c.List(ctx, &variants, client.InNamespace(namespace)); err != nil {
		return err
	}
	sort.Slice(sets.Items, func(i, j int) bool { return sets.Items[i].Name < sets.Items[j].Name })
	sort.Slice(variants.Items, func(i, j int) bool { return variants.Items[i].Name < variants.Items[j].Name })
	status := func(kind, name string, conds []metav1.Condition) ObjectStatus {
		s := ObjectStatus{Kind: kind, Name: name}
		s.Ready, s.Reason, s.Message, s.Stalled = kit.Readiness(conds)
		if err := errs[kind+"/"+name]; err != nil {
			s.ReconcileErr = err.Error()
			if s.Ready == metav1.ConditionTrue {
				s.Ready = metav1.ConditionFalse
			}
		}
		return s
	}
	for _, s := range sets.Items {
		st := status("PackageVariantSet", s.Name, s.Status.Conditions)
		// A paused rollout waits for someone (rule: rollout-conditions): the
		// set is not done, and the run says so with the stalled exit code.
		// The set's Ready is False then too; the run's own
		// line keeps the pause's reason and message.
		if c := apimeta.FindStatusCondition(s.Status.Conditions, pvapi.ConditionRolloutPaused); c != nil && c.Status == metav1.ConditionTrue && pausedOrReady(s.Status.Conditions) && st.ReconcileErr == "" {
			st.Ready, st.Stalled, st.Reason, st.Message = metav1.ConditionFalse, true, pvapi.ConditionRolloutPaused, c.Reason+": "+c.Message
		}
		// Each target failure, not only their count: what to fix.
		for _, f := range s.Status.TargetFailures {
			st.Message += "; " + f.Target + ": " + f.Message
		}
		rep.Objects = append(rep.Objects, st)
		rep.Sets = append(rep.Sets, s)
	}
	for _, v := range variants.Items {
		s := status("PackageVariant", v.Name, v.Status.Conditions)
		for _, t := range v.Status.DownstreamTargets {
			s.Downstream = append(s.Downstream, t.Name)
			// A draft whose readiness gate is not True (a required injection
			// point left empty) cannot be approved: not ready.
			if rev, err := find(gs, namespace, t.Name); err == nil && !rev.Lifecycle.IsPublished() && s.Ready == metav1.ConditionTrue {
				if err := CheckReady(ctx, gs, rev); err != nil {
					s.Ready, s.Reason, s.Message = metav1.ConditionFalse, "ReadinessGate", err.Error()
				}
			}
		}
		s.Deleting = !v.DeletionTimestamp.IsZero()
		if c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionPublishedDrift); c != nil && c.Status == metav1.ConditionTrue {
			rep.Drifts = append(rep.Drifts, fmt.Sprintf("PackageVariant %s: %s: %s", v.Name, c.Reason, c.Message))
		}
		rep.Objects = append(rep.Objects, s)
		rep.Variants = append(rep.Variants, v)
		if owner := metav1.GetControllerOf(&v); owner == nil || owner.Kind != "PackageVariantSet" { // a set's children follow the set's note
			rep.semverNote(gs, namespace, "PackageVariant "+v.Name, v.Spec.Upstream)
		}
	}
	for _, s := range sets.Items {
		rep.semverNote(gs, namespace, "PackageVariantSet "+s.Name, s.Spec.Upstream)
		if r := s.Status.Rollout; s.Spec.Rollout != nil && r != nil && (r.Phase != "Complete" || len(r.Held) > 0 || r.FailedCount > 0) {
			// Which children move in this run, which wait and which failed
			// (rule: staged-rollouts), a failure within a budget too.
			note := fmt.Sprintf("PackageVariantSet %s rollout to %s: %s: %s", s.Name, r.Target.Name, r.Phase, r.Message)
			for _, w := range r.Waves {
				if w.State != "Complete" || w.Failed > 0 {
					note += fmt.Sprintf("; wave %s %s (%d/%d moved", w.Name, w.State, w.Moved, len(w.Members))
					if w.Failed > 0 {
						note += fmt.Sprintf(", %d failed", w.Failed)
					}
					note += ")"
				}
			}
			rep.Notes = append(rep.Notes, note)
		}
	}
	return nil
}

// semverNote notes, for a semver upstream, the version it follows and the
// newer ones outside its range, not taken (rule: floating-versions).
func (rep *Report) semverNote(gs allLister, namespace, what string, u *pv.Upstream) {
	if u == nil || u.Semver == "" {
		return
	}
	var revs []store.Revision
	var cands []upstream.Candidate
	for _, r := range gs.All(namespace) {
		if r.Repository == u.Repo && r.Package == u.Package {
			revs = append(revs, r)
			cands = append(cands, upstream.Candidate{Workspace: r.Workspace, Revision: r.Revision, Lifecycle: r.Lifecycle})
		}
	}
	picked := "no published version in range"
	if i := upstream.Select(*u, cands); i >= 0 {
		picked = revs[i].Name + " (" + revs[i].Workspace + ")"
	}
	note := fmt.Sprintf("%s follows semver %q of %s/%s: %s", what, u.Semver, u.Repo, u.Package, picked)
	if ign := upstream.Ignored(*u, cands); len(ign) > 0 {
		note += "; not taken, outside the range: " + strings.Join(ign, ", ")
	}
	rep.Notes = append(rep.Notes, note)
}

// pausedOrReady: the set's Ready is True, or False only for its paused
// rollout (not for an error or a stall the run must show instead).
func pausedOrReady(conds []metav1.Condition) bool {
	c := apimeta.FindStatusCondition(conds, pvapi.ConditionReady)
	return c != nil && (c.Status == metav1.ConditionTrue || c.Reason == pvapi.ConditionRolloutPaused || c.Reason == pvapi.ReasonRolledBack)
}
