package packagevariantset

import (
	"context"
	"fmt"
	"sort"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A moving unit's members are published together or not at all (rule
// package-groups): while one member's draft at the rollout's revision is
// not finished (not created: its render fails; its gate closed; rejected;
// a person's edit in it, which a person approves; its upstream not
// published), the others' approval (approval.nephio.org/*, a wave's
// approval) is held back, so that their finished drafts wait
// instead of being published beside a member at the previous revision;
// the unit's why names what holds it. Once every member's draft is
// finished, the approval is given back and the members are approved as
// their drafts allow (by policy: in one pass). A unit of one member holds
// nothing: its own draft is what waits.

// memberState is where a member's child stands at the revision it is
// judged at: published there, its draft there finished (waiting for
// approval only), or neither (why says what it waits for).
type memberState struct {
	published, finished bool
	why                 string
}

// state reads a member's child and judges it at the revision its unit at
// rev gives it.
func (u *units) state(ctx context.Context, c pvsexpand.Child, rev store.Revision) (memberState, error) {
	mup, err := u.revisionOf(ctx, c.Spec.Upstream, rev)
	if err != nil || mup == nil {
		return memberState{why: fmt.Sprintf("member %s: its upstream is not published", c.Member)}, err
	}
	v := &pvapi.PackageVariant{}
	if err := u.r.Client.Get(ctx, client.ObjectKey{Namespace: u.set.Namespace, Name: c.Name}, v); err != nil {
		return memberState{why: fmt.Sprintf("member %s (%s) is not created yet", c.Member, c.Name)}, client.IgnoreNotFound(err)
	}
	ref := store.LockFor(*mup).Ref
	for _, t := range v.Status.DownstreamTargets {
		if l := t.UpstreamLock; l == nil || (l.Ref != ref && !strings.HasSuffix(l.Ref, "/"+ref)) {
			continue
		}
		switch {
		case t.Lifecycle == string(store.Published):
			return memberState{published: true}, nil
		case t.Edited: // a person's to approve; until then no approval moves the others
			return memberState{why: fmt.Sprintf("member %s (%s): its draft %s holds a person's edit: approve it by hand (pvctl approve %s), "+
				"and the target's other members follow", c.Member, c.Name, t.Name, t.Name)}, nil
		case t.RenderStatus.Err == "" && (t.Blocked == nil || t.Blocked.Reason == pvapi.ReasonAwaitingApproval):
			return memberState{finished: true}, nil
		case t.Blocked != nil:
			return memberState{why: fmt.Sprintf("member %s (%s): %s: %s", c.Member, c.Name, t.Blocked.Reason, t.Blocked.Message)}, nil
		}
	}
	why := fmt.Sprintf("member %s (%s) has no finished draft at %s", c.Member, c.Name, ref)
	if ready, stalled := conditionsOf(v); stalled != "" {
		why += ": " + stalled
	} else if ready != "" {
		why += ": " + ready
	}
	return memberState{why: why}, nil
}

// conditionsOf are a child's Ready and Stalled conditions in words, where
// they say something is wrong.
func conditionsOf(v *pvapi.PackageVariant) (ready, stalled string) {
	for _, c := range v.Status.Conditions {
		switch {
		case c.Type == pvapi.ConditionStalled && c.Status == "True":
			stalled = c.Reason + ": " + c.Message
		case c.Type == pvapi.ConditionReady && c.Status != "True":
			ready = c.Reason + ": " + c.Message
		}
	}
	return ready, stalled
}

// hold holds back the approval of the members of each unit pinned to the
// rollout's revision while one of them has no finished draft there, and
// returns, by unit, what holds it.
//
// Not in the first revision (no From): there is no previous revision to
// hold a unit at, and holding there cost every child two more writes (its
// approval taken and given back) when a fleet is made (make demo: 220
// changes against 190).
func (u *units) hold(ctx context.Context, res rollout.Result) (map[string]string, error) {
	if res.Status.From == nil {
		return nil, nil
	}
	held := map[string]string{}
	for _, un := range u.list() {
		if p, ok := res.Pins[un.name]; len(un.members) < 2 || !ok || !at(&p, u.target) {
			continue
		}
		var waiting []string
		pending := make([]int, 0, len(un.members))
		for _, i := range un.members {
			c := u.x.Children[i]
			if !u.memberAt(c.Spec, c.GroupRevision, u.target) {
				continue
			}
			st, err := u.state(ctx, c, u.up)
			if err != nil {
				return nil, err
			}
			if st.published {
				continue
			}
			pending = append(pending, i)
			if !st.finished {
				waiting = append(waiting, st.why)
			}
		}
		if len(waiting) == 0 {
			continue
		}
		held[un.name] = strings.Join(waiting, "; ")
		for _, i := range pending {
			c := &u.x.Children[i]
			now, _ := approval.Split(c.Spec.Annotations)
			spec := *c.Spec
			spec.Annotations, spec.Approval = now, nil
			c.Spec = &spec
		}
	}
	return held, nil
}

// heldWords say which units' members are held back, and by what (at most
// three named).
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

// undoProgress counts an undone rollout's units on their way back to its
// from revision (rule rollout-undo), from the cached children: a unit is
// pinned back when every member's child is pinned to from, and back
// (done) when every member is done there as a wave's member is (published
// and Ready at the revision it is judged at, and healthy for a rollout
// with a health check): the counts change as members come back, each
// change one status write. A member not created yet is neither. A rollout
// not undone has none. A member on its way back whose done is due at a
// known instant (its soak at from) is a gate in next, as a wave's member
// is, so that pvctl run --until waits for the undo too.
func (u *units) undoProgress(ctx context.Context, st *v1alpha2.RolloutStatus, g gate, next *due) error {
	st.UndoProgress = nil
	if !st.Undone || st.From == nil {
		return nil
	}
	var from *store.Revision
	for i := range u.revs {
		if u.revs[i].Name == st.From.Name {
			from = &u.revs[i]
		}
	}
	if from == nil { // gone from the listing: nothing to count against
		return nil
	}
	list := u.list()
	p := &v1alpha2.UndoProgress{Children: len(list)}
	now := u.r.now()
	for _, un := range list {
		back, done := true, true
		for _, i := range un.members {
			name := u.x.Children[i].Name
			v := &pvapi.PackageVariant{}
			if err := u.r.Client.Get(ctx, client.ObjectKey{Namespace: u.set.Namespace, Name: name}, v); err != nil {
				if client.IgnoreNotFound(err) != nil {
					return err
				}
				back, done = false, false // not created yet
				break
			}
			if !u.memberAt(&v.Spec, v.Annotations[v1alpha2.GroupRevisionAnnotation], *st.From) {
				back, done = false, false
				break
			}
			rev, err := u.revisionOf(ctx, v.Spec.Upstream, *from)
			if err != nil {
				return err
			}
			if rev == nil {
				done = false
				continue
			}
			vd := g.judge(factsOf(v), *rev, now)
			if !vd.Done {
				next.sooner(vd.Recheck, name+": "+vd.Due+" (on its way back to "+st.From.Name+")")
			}
			done = done && vd.Done
		}
		if back {
			p.Back++
		}
		if done {
			p.Done++
		}
	}
	st.UndoProgress = p
	return nil
}
