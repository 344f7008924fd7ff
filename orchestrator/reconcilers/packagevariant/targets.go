package packagevariant

import (
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// A variant's status is all its set reads of it (rule:
// child-status-contract): each downstream target carries the upstream it
// is locked to (UpstreamLock) and what keeps it from being published
// (Blocked). They are the variant's facts, set where the reconcile learns
// them: the lock where it lists, clones or upgrades a revision, the gate
// where the chain runs on a draft, the approval wait where approval by
// policy decides.

// seeLifecycles (rule: rejected-drafts) records on the targets each
// revision's lifecycle as this reconcile read it, and whether a person
// rejected the draft: the variant read it Proposed (its status says so)
// and reads it Draft now, a move it did not make (moved: the drafts this
// reconcile's upgrade in place moved back to Draft, read Proposed in the
// listing it made before the move; the status records the move, even when
// a later step fails, and their new content also ends an earlier
// rejection). Porch records no
// rejection ("TODO: signal rejection of the approval differently than by
// returning to draft?", v1.5.3): this is how pvkit tells it. A rejection
// holds while the draft stays a Draft, and is a Warning Event when seen.
//
// It also records each target's upstream lock as listed, unless the
// reconcile made it (a clone or an upgrade in place: the upstream's).
func (r *Reconciler) seeLifecycles(v *pvapi.PackageVariant, targets []target, mine []store.Revision, up *store.Revision, moved map[string]bool) {
	// A variant has a target or two: found by looking, not by a map (a
	// steady resync of 1,000 variants allocates nothing here).
	listed := func(name string) *store.Revision {
		for i := range mine {
			if mine[i].Name == name {
				return &mine[i]
			}
		}
		return nil
	}
	prev := func(name string) *pvapi.DownstreamTarget {
		for i := range v.Status.DownstreamTargets {
			if v.Status.DownstreamTargets[i].Name == name {
				return &v.Status.DownstreamTargets[i]
			}
		}
		return &pvapi.DownstreamTarget{}
	}
	for i := range targets {
		t := &targets[i]
		lc := store.Draft // created by this reconcile
		switch rev := listed(t.name); {
		case rev != nil:
			lc, t.revision = rev.Lifecycle, rev.Revision
			if lc.IsPublished() && rev.Revision > 0 {
				t.commit = rev.Commit
			}
			if t.lock == nil {
				t.lock = rev.Lock
			}
		case t.lock == nil:
			t.lock = store.LockFor(*up)
		}
		own := moved[t.name]
		if own {
			lc = store.Draft // mine was listed before the move
		}
		p := prev(t.name)
		t.lifecycle = string(lc)
		t.rejected = lc == store.Draft && !own && (p.Rejected() || p.Lifecycle == string(store.Proposed))
		if t.rejected && !p.Rejected() {
			r.events().Warning(v, EventDraftRejected, "draft %s was rejected (Proposed, then Draft again): approval by policy leaves it to a person, and a staged rollout counts this variant failed; propose it again when it is fixed", t.name)
		}
	}
}
