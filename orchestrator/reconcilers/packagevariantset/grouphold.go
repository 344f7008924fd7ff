package packagevariantset

import (
	"context"
	"fmt"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A moving target's members are published together or not at all (rule
// package-groups, issue 59 #2): while one member's draft at the rollout's
// group revision is not finished (not created: its render fails; its gate
// closed; rejected; its upstream not published), the others' approval
// (approval.nephio.org/*, a wave's approval) is held back, so that their
// finished drafts wait instead of being published beside a member at the
// previous group revision; the target's why names what holds it. Once
// every member's draft is finished, the approval is given back and the
// members are approved as their drafts allow (by policy: in one pass).

// memberState is where a member's child stands at the rollout's group
// revision: published there, its draft there finished (waiting for
// approval only), or neither (why says what it waits for).
type memberState struct {
	published, finished bool
	why                 string
}

// state reads a member's child and judges it at its upstream's revision.
func (gr *groupRollout) state(ctx context.Context, c pvsexpand.Child) (memberState, error) {
	mup, err := gr.memberRevision(ctx, c.Spec.Upstream)
	if err != nil || mup == nil {
		return memberState{why: fmt.Sprintf("member %s: its upstream is not published", c.Member)}, err
	}
	v := &pvapi.PackageVariant{}
	if err := gr.r.Client.Get(ctx, client.ObjectKey{Namespace: gr.set.Namespace, Name: c.Name}, v); err != nil {
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

// hold holds back the approval of the members of each target pinned to
// the rollout's group revision while one of them has no finished draft
// there, and returns, by target, what holds it.
//
// Not in the group's first revision (no From): there is no previous
// revision to hold a target at, and holding there cost every child two
// more writes (its approval taken and given back) when a fleet is made
// (make demo: 220 changes against 190).
func (gr *groupRollout) hold(ctx context.Context, x *pvsexpand.Expansion, res rollout.Result, target v1alpha2.RevisionRef) (map[string]string, error) {
	if res.Status.From == nil {
		return nil, nil
	}
	byUnit := map[string][]int{}
	for i, c := range x.Children {
		if p, ok := res.Pins[unitOf(c)]; ok && p.WorkspaceName == target.Workspace && p.Revision == target.Revision && c.GroupRevision == target.Name {
			byUnit[unitOf(c)] = append(byUnit[unitOf(c)], i)
		}
	}
	held := map[string]string{}
	for u, idx := range byUnit {
		var waiting []string
		pending := make([]int, 0, len(idx))
		for _, i := range idx {
			st, err := gr.state(ctx, x.Children[i])
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
		held[u] = strings.Join(waiting, "; ")
		for _, i := range pending {
			c := &x.Children[i]
			now, _ := approval.Split(c.Spec.Annotations)
			spec := *c.Spec
			spec.Annotations, spec.Approval = now, nil
			c.Spec = &spec
		}
	}
	return held, nil
}

// undoProgress counts an undone grouped rollout's way back by target
// (rule rollout-undo): pinned back when every member's child comes from
// the from revision, done when every member is published at its upstream
// there.
func (gr *groupRollout) undoProgress(ctx context.Context, x *pvsexpand.Expansion, st *v1alpha2.RolloutStatus) error {
	st.UndoProgress = nil
	if !st.Undone || st.From == nil {
		return nil
	}
	byUnit, order := map[string][]pvsexpand.Child{}, []string(nil)
	for _, c := range x.Children {
		if byUnit[unitOf(c)] == nil {
			order = append(order, unitOf(c))
		}
		byUnit[unitOf(c)] = append(byUnit[unitOf(c)], c)
	}
	p := &v1alpha2.UndoProgress{Children: len(order)}
	for _, u := range order {
		back, done := true, true
		for _, c := range byUnit[u] {
			if c.GroupRevision != st.From.Name {
				back, done = false, false
				break
			}
			ms, err := gr.state(ctx, c)
			if err != nil {
				return err
			}
			done = done && ms.published
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
