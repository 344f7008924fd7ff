package packagevariantset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
	"github.com/pvkit/pvkit/pkg/upstream"
)

// A grouped set's staged rollout (rule package-groups, issue 59 #2): the
// unit of a wave is a target's whole group, its children (one a member)
// named by their downstream repository. rollout.Plan sees one child a
// target: at the group revision all its members come from, done when
// every member is published at the member's upstream of the target group
// revision (and healthy, with a health check), failed when any member
// fails (its why names the member). A target pinned to the from revision
// gets the children the group's from revision makes (an expansion at it):
// its members stay, or go back (undo), together.

// groupRollout is one reconcile's grouped rollout.
type groupRollout struct {
	r       *Reconciler
	set     *pvsapi.PackageVariantSet
	core    *v1alpha2.PackageVariantSet
	world   *pvsexpand.World
	revs    []store.Revision // the group package's
	members map[string]*store.Revision
}

// unitOf is the rollout unit of a grouped set's child: its target.
func unitOf(c pvsexpand.Child) string { return c.Spec.Downstream.Repo }

// applyGroupRollout is applyRollout for a grouped set.
func (r *Reconciler) applyGroupRollout(ctx context.Context, set *pvsapi.PackageVariantSet, core *v1alpha2.PackageVariantSet, x *pvsexpand.Expansion, existing []*pv.PackageVariant, revs []store.Revision, w *pvsexpand.World) (time.Duration, error) {
	spec, ref := set.Spec.Rollout, set.Spec.Group
	i := upstream.Select(*ref, candidates(revs))
	if i < 0 {
		return 0, nil
	}
	up := revs[i]
	target := v1alpha2.RevisionRef{Name: up.Name, Workspace: up.Workspace, Revision: up.Revision}
	gr := &groupRollout{r: r, set: set, core: core, world: w, revs: revs, members: map[string]*store.Revision{}}
	at := unitsAt(existing)
	prev := set.Status.Rollout
	restart, complete, confirmed := remembered(prev, target)
	g := gateOf(spec)
	var next due
	units, order := map[string][]pvsexpand.Child{}, []string(nil)
	for _, c := range x.Children {
		u := unitOf(c)
		if units[u] == nil {
			order = append(order, u)
		}
		units[u] = append(units[u], c)
	}
	children := make([]rollout.Child, 0, len(order))
	for _, u := range order {
		ch := rollout.Child{Name: u, Labels: units[u][0].Labels, Current: gr.current(at[u])}
		if at[u] == target.Name && !complete[u] && !restart {
			if confirmed[u] {
				ch.Done = true
			} else if err := gr.judge(ctx, &ch, units[u], g, &next); err != nil {
				return 0, err
			}
		}
		children = append(children, ch)
	}
	res, again := r.plan(set, prev, *ref, target, children, &next)
	if err := gr.pin(ctx, x, res, target); err != nil {
		return 0, err
	}
	pinChildren(x, rollout.Result{}, spec) // the health check on every child
	gr.approveWaves(ctx, x, res, target)
	held, err := gr.hold(ctx, x, res, target)
	if err != nil {
		return 0, err
	}
	if len(held) > 0 {
		res.Status.Message += "; " + heldWords(held)
	}
	if err := gr.undoProgress(ctx, x, &res.Status); err != nil {
		return 0, err
	}
	set.Status.Rollout = &res.Status
	r.setRolloutConditions(set, res)
	r.rolloutEvents(ctx, set, res.Events)
	return again, nil
}

// heldWords say which targets' members are held back, and by what (at
// most three named).
func heldWords(held map[string]string) string {
	units := make([]string, 0, len(held))
	for u := range held {
		units = append(units, u)
	}
	sort.Strings(units)
	var parts []string
	for i, u := range units {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(units)-i))
			break
		}
		parts = append(parts, u+" ("+held[u]+")")
	}
	return "held back, the other members of " + strings.Join(parts, ", ") + ": a target's members are published together"
}

// candidates are revisions as the upstream rule reads them.
func candidates(revs []store.Revision) []upstream.Candidate {
	out := make([]upstream.Candidate, len(revs))
	for i, rev := range revs {
		out[i] = upstream.Candidate{Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle}
	}
	return out
}

// mixed marks a target whose children come from different group
// revisions (a unit that has not settled: not done anywhere).
const mixed = "\x00mixed"

// unitsAt is the group revision each target's existing children come
// from (their pvkit.dev/group-revision), mixed when they disagree.
func unitsAt(existing []*pv.PackageVariant) map[string]string {
	at := map[string]string{}
	for _, c := range existing {
		if c.Spec.Downstream == nil {
			continue
		}
		u, rev := c.Spec.Downstream.Repo, c.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation]
		if was, seen := at[u]; seen && was != rev {
			at[u] = mixed
		} else if !seen {
			at[u] = rev
		}
	}
	return at
}

// current is a target's group revision as the plan reads it: the group's
// upstream pinned there; nil when it has none (a new target) or its
// children disagree (then it is at neither: the plan moves it).
func (gr *groupRollout) current(name string) *pv.Upstream {
	for _, rev := range gr.revs {
		if rev.Name == name {
			p := rollout.Pin(*gr.set.Spec.Group, v1alpha2.RevisionRef{Name: rev.Name, Workspace: rev.Workspace, Revision: rev.Revision})
			return &p
		}
	}
	return nil
}

// judge judges a target at the rollout's group revision by its members:
// done when each is, failed when one is (naming it), else waiting on the
// first that waits.
func (gr *groupRollout) judge(ctx context.Context, ch *rollout.Child, members []pvsexpand.Child, g gate, next *due) error {
	ch.Done = true
	for _, c := range members {
		mup, err := gr.memberRevision(ctx, c.Spec.Upstream)
		if err != nil {
			return err
		}
		if mup == nil {
			ch.Done, ch.Why = false, fmt.Sprintf("member %s: its upstream (%s) is not published", c.Member, upstream.Describe(*c.Spec.Upstream))
			continue
		}
		vd, err := gr.r.observe(ctx, gr.set.Namespace, c.Name, *mup, g)
		if err != nil {
			return err
		}
		next.sooner(vd.Recheck, c.Name+": "+vd.Due)
		switch {
		case vd.Failed:
			ch.Done, ch.Failed, ch.Why = false, true, fmt.Sprintf("member %s (%s): %s", c.Member, c.Name, vd.Why)
			return nil
		case !vd.Done:
			if ch.Done {
				ch.Why = fmt.Sprintf("member %s (%s): %s", c.Member, c.Name, vd.Why)
			}
			ch.Done = false
		}
	}
	return nil
}

// memberRevision is the revision a member's upstream selects (once a
// reconcile for each upstream), nil when none is published.
func (gr *groupRollout) memberRevision(ctx context.Context, u *pv.Upstream) (*store.Revision, error) {
	key := fmt.Sprintf("%s/%s/%d/%s/%s", u.Repo, u.Package, u.Revision, u.WorkspaceName, u.Semver)
	if rev, ok := gr.members[key]; ok {
		return rev, nil
	}
	revs, err := gr.r.Store.ListRevisions(ctx, store.PackageKey{Namespace: gr.set.Namespace, Repository: u.Repo, Package: u.Package})
	if err != nil {
		return nil, err
	}
	var rev *store.Revision
	if i := upstream.Select(*u, candidates(revs)); i >= 0 {
		rev = &revs[i]
	}
	gr.members[key] = rev
	return rev, nil
}

// pin gives each target the children of the group revision the plan
// pins it to: the expansion at the target revision (x) as it is, or the
// expansion at that other revision (the rollout's from: not moved yet, or
// undone), whose members replace the target's.
func (gr *groupRollout) pin(ctx context.Context, x *pvsexpand.Expansion, res rollout.Result, target v1alpha2.RevisionRef) error {
	elsewhere := map[string][]string{} // group revision -> targets pinned there
	for u, p := range res.Pins {
		if p.WorkspaceName == target.Workspace && p.Revision == target.Revision {
			continue
		}
		for _, rev := range gr.revs {
			if rev.Workspace == p.WorkspaceName && rev.Revision == p.Revision {
				elsewhere[rev.Name] = append(elsewhere[rev.Name], u)
			}
		}
	}
	names := make([]string, 0, len(elsewhere))
	for n := range elsewhere {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		other, err := gr.expandAt(ctx, name)
		if err != nil {
			return err
		}
		replace := map[string]bool{}
		for _, u := range elsewhere[name] {
			replace[u] = true
		}
		var kept []pvsexpand.Child
		for _, c := range x.Children {
			if !replace[unitOf(c)] {
				kept = append(kept, c)
			}
		}
		for _, c := range other.Children {
			if replace[unitOf(c)] {
				kept = append(kept, c)
			}
		}
		x.Children = kept
	}
	return nil
}

// expandAt is the set's expansion at another revision of its group.
func (gr *groupRollout) expandAt(ctx context.Context, name string) (*pvsexpand.Expansion, error) {
	var rev *store.Revision
	for i := range gr.revs {
		if gr.revs[i].Name == name {
			rev = &gr.revs[i]
		}
	}
	if err := gr.r.addGroupOf(ctx, gr.world, *rev); err != nil {
		return nil, err
	}
	at := *gr.core
	g := *at.Spec.Group
	g.Revision, g.WorkspaceName, g.Semver = rev.Revision, rev.Workspace, ""
	at.Spec.Group = &g
	ectx, cancel := context.WithTimeout(ctx, ExpandTimeout)
	defer cancel()
	x, err := pvsexpand.Expand(ectx, &at, gr.world)
	if err != nil {
		return nil, fmt.Errorf("the group at %s, where the rollout keeps targets: %w", name, err)
	}
	return x, nil
}

// approveWaves gives the members of the targets of the waves a person
// approved, moved to the rollout's group revision, the wave's approval
// (rule wave-approval), each for its member's upstream revision.
func (gr *groupRollout) approveWaves(ctx context.Context, x *pvsexpand.Expansion, res rollout.Result, target v1alpha2.RevisionRef) {
	approved := ApprovedWaves(gr.set.Annotations, target.Name)
	if res.Status.Undone {
		approved = nil
	}
	by := map[string]string{}
	for _, w := range res.Status.Waves {
		if approved[w.Name] {
			for _, m := range w.Members {
				by[m] = fmt.Sprintf("wave %s of PackageVariantSet %s, %s", w.Name, gr.set.Name, RolloutApproveAnnotation)
			}
		}
	}
	for i := range x.Children {
		c := &x.Children[i]
		if by[unitOf(*c)] == "" || c.GroupRevision != target.Name {
			continue
		}
		if mup, err := gr.memberRevision(ctx, c.Spec.Upstream); err == nil && mup != nil {
			c.Spec.Approval = &pv.WaveApproval{UpstreamRef: store.LockFor(*mup).Ref, By: by[unitOf(*c)]}
		}
	}
}
