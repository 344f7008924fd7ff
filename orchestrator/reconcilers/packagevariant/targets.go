package packagevariant

import (
	"context"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/approve"
	"slices"
	"sort"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// A variant's status is all its set reads of it (rule:
// child-status-contract): each downstream target carries the upstream it
// is locked to (UpstreamLock) and what keeps it from being published
// (Blocked). They are the variant's facts, set where the reconcile learns
// them: the lock where it lists, clones or upgrades a revision, the gate
// where the chain runs on a draft, the approval wait where approval by
// policy decides.

// blocked is what keeps target dt (as mergeTargets made it from t) from
// being published: nothing once published; a person's rejection; a gate
// other than the mutation's that is not True (what the chain saw this
// reconcile, or what the status said when it did not run: the memo vouched
// for the draft); else the wait for approval, with the message approval by
// policy gave it, if any.
func blocked(dt pvapi.DownstreamTarget, t target) (pvapi.Blocked, bool) {
	if dt.Lifecycle == "" || store.Lifecycle(dt.Lifecycle).IsPublished() {
		return pvapi.Blocked{}, false
	}
	rejected := dt.Rejected() // what the status said, unless this reconcile read the lifecycle
	if t.lifecycle != "" {
		rejected = t.rejected
	}
	gate := ""
	switch {
	case t.checked:
		gate = t.gate
	case dt.Blocked != nil && dt.Blocked.Reason == pvapi.ReasonGateClosed:
		gate = dt.Blocked.Message
	}
	switch {
	case rejected:
		return pvapi.Blocked{Reason: pvapi.ReasonRejected, Message: "a person rejected it (Proposed, then Draft again): propose it again when it is fixed"}, true
	case gate != "":
		return pvapi.Blocked{Reason: pvapi.ReasonGateClosed, Message: gate}, true
	case dt.Blocked != nil && dt.Blocked.Reason == pvapi.ReasonAwaitingApproval:
		return *dt.Blocked, true // approval by policy's word on it, until it speaks again
	}
	return pvapi.Blocked{Reason: pvapi.ReasonAwaitingApproval, Message: approve.Awaiting(dt.Lifecycle, "")}, true
}

// sameUpstream reports whether a target's recorded lock and a lock read
// or made now name the same upstream revision: the same package and ref
// (a directory-scoped repository's ref may carry the directory), the
// repository and commit compared only when both have them. The lock a
// clone or an upgrade makes has the repository and no commit, the one
// Porch then lists the commit and no repository: the status keeps the
// first, so that the next reconcile does not patch it again (the release
// bench counted a second status patch per variant before).
func sameUpstream(u *pvapi.UpstreamLock, l *store.Lock) bool { return kit.StoreLock(u).Same(l) }

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

// mergeTargets keeps the render status of targets not updated this time.
func mergeTargets(prev []pvapi.DownstreamTarget, targets []target) []pvapi.DownstreamTarget {
	out := make([]pvapi.DownstreamTarget, 0, len(targets))
	for _, t := range targets {
		dt := pvapi.DownstreamTarget{Name: t.name}
		for i := range prev {
			if prev[i].Name == t.name {
				dt = prev[i]
				break
			}
		}
		if t.render != nil {
			dt.RenderStatus = *t.render.DeepCopy()
		}
		if t.lastWrite != "" || t.checked { // a write confirmed, or the draft read at another digest
			dt.UnconfirmedWrite = ""
		}
		if t.lastWrite != "" {
			dt.LastWrite, dt.CreatedAt = t.lastWrite, ""
		}
		if t.createdAt != "" {
			dt.CreatedAt = t.createdAt
		}
		if t.unconfirmed != "" {
			dt.UnconfirmedWrite = t.unconfirmed
		}
		if t.lifecycle != "" {
			dt.Lifecycle = t.lifecycle
		}
		if t.revision > 0 {
			dt.Revision = t.revision
		}
		if t.commit != "" {
			dt.Commit = t.commit
		}
		dt.Edited = dt.Edited || t.edited
		if t.kept != nil {
			dt.Kept = t.kept
		}
		if l := t.lock; l != nil && !sameUpstream(dt.UpstreamLock, l) {
			dt.UpstreamLock = kit.StatusLock(l)
		}
		switch b, ok := blocked(dt, t); {
		case !ok:
			dt.Blocked = nil
		case dt.Blocked == nil || *dt.Blocked != b: // else kept: a steady resync allocates nothing
			dt.Blocked = &b
		}
		out = append(out, dt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// upsertTargets records targets of a reconcile that failed after writing
// them (mergeTargets' merge of each), keeping every other entry as it is.
func upsertTargets(prev []pvapi.DownstreamTarget, targets []target) []pvapi.DownstreamTarget {
	var named []target
	for _, t := range targets {
		if t.name != "" {
			named = append(named, t)
		}
	}
	if len(named) == 0 {
		return prev
	}
	out := mergeTargets(prev, named)
	for _, p := range prev {
		if !slices.ContainsFunc(named, func(t target) bool { return t.name == p.Name }) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// recordRender sets one target's render status and keeps every other entry
// (a failed reconcile reports the render that failed and nothing else).
func recordRender(prev []pvapi.DownstreamTarget, t target) []pvapi.DownstreamTarget {
	out := append([]pvapi.DownstreamTarget(nil), prev...)
	for i := range out {
		if out[i].Name == t.name {
			out[i].RenderStatus = *t.render.DeepCopy()
			return out
		}
	}
	out = append(out, pvapi.DownstreamTarget{Name: t.name, RenderStatus: *t.render.DeepCopy()})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// intend records, before a write to Porch, the digest the write sends as
// the draft's unconfirmed write (DownstreamTarget.UnconfirmedWrite), in a
// status patch of its own: whatever becomes of the reconcile's status
// write after it (conflicts past its rebases, the process killed), the
// next reconcile finds the draft at that digest and takes it for the
// variant's write (lastLeft), as it does a write whose answer was lost.
// Already recorded (a retry of the same write): no patch. A patch that
// fails stops the write: nothing is sent to Porch that the status could
// not name (a patch lost to conflicts past its rebases is a short wait).
func (r *Reconciler) intend(ctx context.Context, v *pvapi.PackageVariant, draft, digest string) error {
	i := slices.IndexFunc(v.Status.DownstreamTargets, func(t pvapi.DownstreamTarget) bool { return t.Name == draft })
	if i >= 0 && v.Status.DownstreamTargets[i].UnconfirmedWrite == digest {
		return nil
	}
	base, next := v.DeepCopy(), v.DeepCopy()
	record := func(o *pvapi.PackageVariant) {
		ts := slices.Clone(o.Status.DownstreamTargets)
		if j := slices.IndexFunc(ts, func(t pvapi.DownstreamTarget) bool { return t.Name == draft }); j >= 0 {
			ts[j].UnconfirmedWrite = digest
		} else {
			ts = append(ts, pvapi.DownstreamTarget{Name: draft, Lifecycle: string(store.Draft), UnconfirmedWrite: digest})
		}
		o.Status.DownstreamTargets = ts
	}
	record(next)
	if err := r.patchStatus(ctx, base, next); kit.StatusLost(err) {
		// Rewritten as fast as it is read: nothing sent, run again afresh.
		return kit.Wait(kit.StatusLostRetry, "recording the write of %s before sending it lost to other writes of the variant; trying again", draft)
	} else if err != nil {
		return fmt.Errorf("recording the write of %s before sending it: %w", draft, err)
	}
	record(v)
	v.ResourceVersion = next.ResourceVersion
	return nil
}
