package soak

import (
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// check holds the invariants after a round:
//   - no ownerless draft in a pvkit workspace, no package with two drafts
//     of its variant;
//   - every write recorded in status: a draft pvkit made, seen for two
//     rounds and not edited by a person, has its target, whose lastWrite
//     is the draft's digest;
//   - no approval waiting on a fact that was lost: a draft of a variant
//     that asks for approval by policy, finished, neither edited nor
//     rejected by a person, is published within eight rounds;
//   - the memory holds a record per variant at most.
func (s *soak) check() {
	vs := s.variants()
	byUID := map[string]pvapi.PackageVariant{}
	for _, v := range vs {
		byUID[string(v.UID)] = v
	}
	drafts := map[string]int{}
	for _, r := range s.store.All(s.ns()) {
		if r.Repository == "blueprints" || r.Placeholder || r.Lifecycle.IsPublished() {
			continue
		}
		if strings.HasPrefix(r.Workspace, "packagevariant-") && len(r.Owners) == 0 {
			s.t.Errorf("round %d: %s is an ownerless draft in a pvkit workspace", s.round, r.Name)
		}
		for _, o := range r.Owners {
			v, ok := byUID[o.UID]
			if !ok {
				continue
			}
			drafts[r.Repository]++
			if drafts[r.Repository] > 1 {
				s.t.Errorf("round %d: %s is a second draft of %s's package", s.round, r.Name, v.Name)
			}
			s.checkDraft(v, r)
		}
	}
	if n := s.memRecords(); n > len(vs)+len(s.gone) {
		s.t.Errorf("round %d: the memory holds %d records for %d variants", s.round, n, len(vs))
	}
}

// checkDraft holds a draft of variant v to the invariants.
func (s *soak) checkDraft(v pvapi.PackageVariant, r store.Revision) {
	first, ok := s.seen[r.Name]
	if !ok { // made this round
		s.seen[r.Name] = s.round
		first = s.round
	}
	age := s.round - first
	if s.edited[r.Name] > 0 || age < 2 || !v.DeletionTimestamp.IsZero() {
		return
	}
	var t *pvapi.DownstreamTarget
	for i := range v.Status.DownstreamTargets {
		if v.Status.DownstreamTargets[i].Name == r.Name {
			t = &v.Status.DownstreamTargets[i]
		}
	}
	files := s.store.Files(s.ns(), r.Name)
	switch {
	case t == nil:
		s.t.Errorf("round %d: %s's draft %s (seen at round %d) has no target in its status", s.round, v.Name, r.Name, s.seen[r.Name])
		return
	case t.LastWrite != digest(files):
		s.t.Errorf("round %d: %s's draft %s: lastWrite %q is not its digest %q", s.round, v.Name, r.Name, t.LastWrite, digest(files))
	}
	policy := v.Spec.Annotations["approval.nephio.org/policy"] == "always"
	rejected := t.Blocked != nil && t.Blocked.Reason == pvapi.ReasonRejected
	if policy && !rejected && gateTrue(files) && age > 8 {
		s.t.Errorf("round %d: %s's draft %s, finished, unedited, asking for approval by policy, is not approved after %d rounds (blocked: %+v; its annotations %v; the variant's conditions %s)",
			s.round, v.Name, r.Name, age, t.Blocked, r.Annotations, conditions(v))
	}
}

func (s *soak) ns() string { return ns }

// conditions says a variant's conditions, for a failure's message.
func conditions(v pvapi.PackageVariant) string {
	var out []string
	for _, c := range v.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+" "+c.Reason+": "+c.Message)
	}
	return strings.Join(out, "; ")
}
