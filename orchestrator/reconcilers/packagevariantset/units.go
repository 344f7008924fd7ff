package packagevariantset

import (
	"context"
	"fmt"
	"time"

	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
	"github.com/pvkit/pvkit/pkg/upstream"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// One staged rollout (rule staged-rollouts) moves units: a unit is what a
// wave moves as one, with its member children. A set of one package has a
// unit per child, the child its one member; a grouped set (rule
// package-groups) has a unit per target, named by its downstream
// repository, its members the target's children, one a member of the
// group. The rollout moves the set's reference (its upstream, or its
// group) from revision to revision; a member is judged at the revision of
// its own upstream that the unit's revision gives it (for a set of one
// package, the rollout's revision itself). Everything the rollout does is
// said once, over units: the plan (pkg/rollout sees one child a unit), the
// pins, a wave's approval, the hold of a unit's members until all are
// finished, the count of an undo's way back, and the order a deleted set's
// children go in (deletion.go).

// unitOf is the unit a child of the set belongs to: its target's
// downstream repository in a grouped set, else the child itself.
func unitOf(set *pvsapi.PackageVariantSet, name string, spec *pv.PackageVariantSpec) string {
	if set.Spec.Group != nil && spec != nil && spec.Downstream != nil {
		return spec.Downstream.Repo
	}
	return name
}

// unit is one unit of the rollout: its name, the labels its waves select
// by, and its members' indexes in the expansion.
type unit struct {
	name    string
	labels  map[string]string
	members []int
}

// units is one reconcile's rollout of a set.
type units struct {
	r      *Reconciler
	set    *pvsapi.PackageVariantSet
	core   *v1alpha2.PackageVariantSet
	world  *pvsexpand.World
	x      *pvsexpand.Expansion
	revs   []store.Revision // the revisions of what the rollout moves (the upstream, or the group package)
	base   pv.Upstream      // the set's reference the rollout moves
	target v1alpha2.RevisionRef
	up     store.Revision // the target revision
	live   map[string]*pv.PackageVariant
	// groupAt is each target's group revision as its live members agree
	// on it (mixed when they do not), for a grouped set.
	groupAt map[string]string
	cache   map[string]*store.Revision // member upstreams as selected, once a reconcile each
}

// mixed marks a target whose children come from different group
// revisions (a unit that has not settled: not done anywhere).
const mixed = "\x00mixed"

// grouped: the set moves a group.
func (u *units) grouped() bool { return u.set.Spec.Group != nil }

// list is the expansion's units in the order of their first member.
func (u *units) list() []unit {
	var out []unit
	at := map[string]int{}
	for i, c := range u.x.Children {
		name := unitOf(u.set, c.Name, c.Spec)
		j, ok := at[name]
		if !ok {
			j, at[name] = len(out), len(out)
			out = append(out, unit{name: name, labels: c.Labels})
		}
		out[j].members = append(out[j].members, i)
	}
	return out
}

// current is the revision a unit runs as the plan reads it: a child's
// pinned upstream; a target's group revision (its members' agreed
// pvkit.dev/group-revision), nil when it has none (a new target) or its
// members disagree (at neither: the plan moves it).
func (u *units) current(un unit) *pv.Upstream {
	if !u.grouped() {
		if c := u.live[u.x.Children[un.members[0]].Name]; c != nil {
			return c.Spec.Upstream
		}
		return nil
	}
	for _, rev := range u.revs {
		if rev.Name == u.groupAt[un.name] {
			p := rollout.Pin(u.base, refOf(rev))
			return &p
		}
	}
	return nil
}

// refOf is a revision as a rollout names it.
func refOf(rev store.Revision) v1alpha2.RevisionRef {
	return v1alpha2.RevisionRef{Name: rev.Name, Workspace: rev.Workspace, Revision: rev.Revision}
}

// at reports whether a pin is exactly the revision ref.
func at(p *pv.Upstream, ref v1alpha2.RevisionRef) bool {
	return p != nil && p.Semver == "" && p.WorkspaceName == ref.Workspace && p.Revision == ref.Revision
}

// memberAt reports whether a child (its spec, the group revision it comes
// from) is pinned to the set's revision ref: its upstream, or its group
// revision.
func (u *units) memberAt(spec *pv.PackageVariantSpec, groupRev string, ref v1alpha2.RevisionRef) bool {
	if u.grouped() {
		return groupRev == ref.Name
	}
	return spec != nil && at(spec.Upstream, ref)
}

// revisionOf is the revision a member is judged at when its unit is at
// rev: rev itself for a set of one package; in a group, the revision its
// upstream there (p) selects, nil when none is published.
func (u *units) revisionOf(ctx context.Context, p *pv.Upstream, rev store.Revision) (*store.Revision, error) {
	if !u.grouped() {
		return &rev, nil
	}
	if p == nil {
		return nil, nil
	}
	key := fmt.Sprintf("%s/%s/%d/%s/%s", p.Repo, p.Package, p.Revision, p.WorkspaceName, p.Semver)
	if rev, ok := u.cache[key]; ok {
		return rev, nil
	}
	revs, err := u.r.Store.ListRevisions(ctx, store.PackageKey{Namespace: u.set.Namespace, Repository: p.Repo, Package: p.Package})
	if err != nil {
		return nil, err
	}
	var sel *store.Revision
	if i := upstream.Select(*p, candidates(revs)); i >= 0 {
		sel = &revs[i]
	}
	u.cache[key] = sel
	return sel, nil
}

// candidates are revisions as the upstream rule reads them.
func candidates(revs []store.Revision) []upstream.Candidate {
	out := make([]upstream.Candidate, len(revs))
	for i, rev := range revs {
		out[i] = upstream.Candidate{Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle}
	}
	return out
}

// memberWords names a member in a unit's why: nothing for a set of one
// package (the unit is the child), the member and its child in a group.
func memberWords(c pvsexpand.Child) string {
	if c.Member == "" {
		return ""
	}
	return fmt.Sprintf("member %s (%s): ", c.Member, c.Name)
}

// judge judges a unit at the rollout's revision by its members: done when
// each is, failed when one is (naming it), else waiting on the first that
// waits.
func (u *units) judge(ctx context.Context, ch *rollout.Child, un unit, g gate, next *due) error {
	ch.Done = true
	for _, i := range un.members {
		c := u.x.Children[i]
		rev, err := u.revisionOf(ctx, c.Spec.Upstream, u.up)
		if err != nil {
			return err
		}
		if rev == nil {
			ch.Done, ch.Why = false, fmt.Sprintf("member %s: its upstream (%s) is not published", c.Member, upstream.Describe(*c.Spec.Upstream))
			continue
		}
		vd, err := u.r.observe(ctx, u.set.Namespace, c.Name, *rev, g)
		if err != nil {
			return err
		}
		next.sooner(vd.Recheck, c.Name+": "+vd.Due)
		switch {
		case vd.Failed:
			ch.Done, ch.Failed, ch.Why = false, true, memberWords(c)+vd.Why
			return nil
		case !vd.Done:
			if ch.Done {
				ch.Why = memberWords(c) + vd.Why
			}
			ch.Done = false
		}
	}
	return nil
}

// applyRollout pins each computed child's upstream as the set's rollout
// plans it (pkg/rollout; rule: staged-rollouts), over units, and records
// the rollout in the status; a set without spec.rollout has none. The
// members of the open wave's units that were moved are read (past the
// cache when they read done or failed) to know whether they are done.
// revs are the revisions of what the rollout moves, as world listed them.
//
// again is when to reconcile the set again though nothing changes: when
// the first child that waits, not Ready, reaches the progress deadline (a
// failing render changes nothing in its status while it is retried).
func (r *Reconciler) applyRollout(ctx context.Context, set *pvsapi.PackageVariantSet, core *v1alpha2.PackageVariantSet, x *pvsexpand.Expansion, existing []*pv.PackageVariant, revs []store.Revision, w *pvsexpand.World) (time.Duration, error) {
	spec := set.Spec.Rollout
	if spec == nil {
		set.Status.Rollout = nil
		for _, c := range rolloutConditionTypes {
			apimeta.RemoveStatusCondition(&set.Status.Conditions, c)
		}
		return 0, nil
	}
	base := set.Spec.Upstream
	if set.Spec.Group != nil {
		base = set.Spec.Group
	}
	i := upstream.Select(*base, candidates(revs))
	if i < 0 {
		return 0, nil // Expand found it; a race with a deletion: the next reconcile
	}
	u := &units{r: r, set: set, core: core, world: w, x: x, revs: revs, base: *base, target: refOf(revs[i]), up: revs[i],
		live: map[string]*pv.PackageVariant{}, cache: map[string]*store.Revision{}}
	for _, c := range existing {
		u.live[c.Metadata.Name] = c
	}
	if u.grouped() {
		u.groupAt = groupRevisions(set, existing)
	}
	res, again, err := u.plan(ctx)
	if err != nil {
		return 0, err
	}
	if err := u.pin(ctx, res); err != nil {
		return 0, err
	}
	u.approveWaves(ctx, res)
	held, err := u.hold(ctx, res)
	if err != nil {
		return 0, err
	}
	if len(held) > 0 {
		res.Status.Message += "; " + heldWords(held)
	}
	var back due // the undo's next gate: a member's soak at from
	if err := u.undoProgress(ctx, &res.Status, gateOf(spec), &back); err != nil {
		return 0, err
	}
	if res.Status.UndoProgress != nil {
		res.Status.Next = back.gate()
		if a := back.after(r.now()); a > 0 && (again == 0 || a < again) {
			again = a
		}
	}
	set.Status.Rollout = &res.Status
	r.setRolloutConditions(set, res)
	r.rolloutEvents(ctx, set, res.Events)
	return again, nil
}

// plan judges the units at the target that the last plan did not settle
// and plans the rollout (Reconciler.plan).
func (u *units) plan(ctx context.Context) (rollout.Result, time.Duration, error) {
	prev := u.set.Status.Rollout
	restart, complete, confirmed := remembered(prev, u.target)
	g := gateOf(u.set.Spec.Rollout)
	var next due // the next gate due at a known instant (rule rollout-gates-due)
	list := u.list()
	children := make([]rollout.Child, 0, len(list))
	for _, un := range list {
		ch := rollout.Child{Name: un.name, Labels: un.labels, Current: u.current(un)}
		if at(ch.Current, u.target) && !complete[un.name] && !restart {
			if confirmed[un.name] {
				ch.Done = true
			} else if err := u.judge(ctx, &ch, un, g, &next); err != nil {
				return rollout.Result{}, 0, err
			}
		}
		children = append(children, ch)
	}
	res, again := u.r.plan(u.set, prev, u.base, u.target, children, &next)
	return res, again, nil
}

// groupRevisions is the group revision each target's live children come
// from (their pvkit.dev/group-revision), mixed when they disagree.
func groupRevisions(set *pvsapi.PackageVariantSet, existing []*pv.PackageVariant) map[string]string {
	out := map[string]string{}
	for _, c := range existing {
		if c.Spec.Downstream == nil {
			continue
		}
		un, rev := unitOf(set, c.Metadata.Name, &c.Spec), c.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation]
		if was, seen := out[un]; seen && was != rev {
			out[un] = mixed
		} else if !seen {
			out[un] = rev
		}
	}
	return out
}
