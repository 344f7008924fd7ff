package packagevariantset

import (
	"context"
	"fmt"
	"sort"

	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/rollout"
)

// pin gives each unit the revision the plan pins it to, and every child
// the rollout's health check (rule: health-gated-rollouts). A child of a
// set of one package gets the pinned upstream. A target of a grouped set
// pinned to another group revision than the rollout's (not moved yet, or
// undone) gets the children that revision makes (the expansion at it),
// whose members replace the target's: its members stay, or go back,
// together.
func (u *units) pin(ctx context.Context, res rollout.Result) error {
	if u.grouped() {
		if err := u.pinGroups(ctx, res); err != nil {
			return err
		}
	}
	spec := u.set.Spec.Rollout
	for i := range u.x.Children {
		c := &u.x.Children[i]
		if p, ok := res.Pins[c.Name]; ok && !u.grouped() {
			c.Spec.Upstream = &p
		}
		if spec.Health != nil {
			h := *spec.Health
			c.Spec.Health = &h
		}
	}
	return nil
}

// pinGroups replaces the members of the targets pinned elsewhere than the
// rollout's group revision with the expansion at their revision.
func (u *units) pinGroups(ctx context.Context, res rollout.Result) error {
	elsewhere := map[string][]string{} // group revision -> targets pinned there
	for un, p := range res.Pins {
		if at(&p, u.target) {
			continue
		}
		for _, rev := range u.revs {
			if at(&p, refOf(rev)) {
				elsewhere[rev.Name] = append(elsewhere[rev.Name], un)
			}
		}
	}
	names := make([]string, 0, len(elsewhere))
	for n := range elsewhere {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		other, err := u.expandAt(ctx, name)
		if err != nil {
			return err
		}
		replace := map[string]bool{}
		for _, un := range elsewhere[name] {
			replace[un] = true
		}
		var kept []pvsexpand.Child
		for _, c := range u.x.Children {
			if !replace[unitOf(u.set, c.Name, c.Spec)] {
				kept = append(kept, c)
			}
		}
		for _, c := range other.Children {
			if replace[unitOf(u.set, c.Name, c.Spec)] {
				kept = append(kept, c)
			}
		}
		u.x.Children = kept
	}
	return nil
}

// expandAt is the set's expansion at another revision of its group.
func (u *units) expandAt(ctx context.Context, name string) (*pvsexpand.Expansion, error) {
	var rev *store.Revision
	for i := range u.revs {
		if u.revs[i].Name == name {
			rev = &u.revs[i]
		}
	}
	if err := u.r.addGroupOf(ctx, u.world, *rev); err != nil {
		return nil, err
	}
	at := *u.core
	g := *at.Spec.Group
	g.Revision, g.WorkspaceName, g.Semver = rev.Revision, rev.Workspace, ""
	at.Spec.Group = &g
	ectx, cancel := context.WithTimeout(ctx, ExpandTimeout)
	defer cancel()
	x, err := pvsexpand.Expand(ectx, &at, u.world)
	if err != nil {
		return nil, fmt.Errorf("the group at %s, where the rollout keeps targets: %w", name, err)
	}
	return x, nil
}

// approveWaves gives the members of the units of the waves a person
// approved for this target, moved there, the wave's approval (rule:
// wave-approval), each for the revision it is judged at; the others have
// none.
func (u *units) approveWaves(ctx context.Context, res rollout.Result) {
	approved := ApprovedWaves(u.set.Annotations, u.target.Name)
	if res.Status.Undone { // undone on failure too: no wave approved
		approved = nil
	}
	by := map[string]string{}
	for _, w := range res.Status.Waves {
		if approved[w.Name] {
			for _, m := range w.Members {
				by[m] = fmt.Sprintf("wave %s of PackageVariantSet %s, %s", w.Name, u.set.Name, RolloutApproveAnnotation)
			}
		}
	}
	for i := range u.x.Children {
		c := &u.x.Children[i]
		un := unitOf(u.set, c.Name, c.Spec)
		if by[un] == "" || !u.memberAt(c.Spec, c.GroupRevision, u.target) {
			continue
		}
		if rev, err := u.revisionOf(ctx, c.Spec.Upstream, u.up); err == nil && rev != nil {
			c.Spec.Approval = &pv.WaveApproval{UpstreamRef: store.LockFor(*rev).Ref, By: by[un]}
		}
	}
}
