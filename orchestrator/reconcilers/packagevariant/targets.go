package packagevariant

import (
	"fmt"
	"sort"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/variant"
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
func blocked(dt pvapi.DownstreamTarget, t target) *pvapi.Blocked {
	if dt.Lifecycle == "" || store.Lifecycle(dt.Lifecycle).IsPublished() {
		return nil
	}
	gate := ""
	switch {
	case t.checked:
		gate = t.gate
	case dt.Blocked != nil && dt.Blocked.Reason == pvapi.ReasonGateClosed:
		gate = dt.Blocked.Message
	}
	switch {
	case dt.Rejected:
		return &pvapi.Blocked{Reason: pvapi.ReasonRejected, Message: "a person rejected it (Proposed, then Draft again): propose it again when it is fixed"}
	case gate != "":
		return &pvapi.Blocked{Reason: pvapi.ReasonGateClosed, Message: gate}
	case dt.Blocked != nil && dt.Blocked.Reason == pvapi.ReasonAwaitingApproval:
		return dt.Blocked // approval by policy's word on it, until it speaks again
	}
	return &pvapi.Blocked{Reason: pvapi.ReasonAwaitingApproval, Message: awaiting(dt.Lifecycle, "")}
}

// awaiting is AwaitingApproval's message, with what approval by policy
// said of it when it did (more).
func awaiting(lifecycle, more string) string {
	if more == "" {
		return lifecycle + ", not yet approved"
	}
	return lifecycle + ", not yet approved: " + more
}

// closedGate says why a draft's files cannot be approved without a
// change: a readiness gate of its Kptfile other than the mutation's
// (variant.MutationGate, which the chain closes itself) that is not True;
// "" when none is.
func closedGate(files map[string]string) string {
	kf, err := kptfile.FromFiles(files)
	if err != nil || kf == nil {
		return ""
	}
	gate, c, err := kf.NotReady()
	if err != nil || gate == "" || gate == variant.MutationGate || c == nil {
		return ""
	}
	return fmt.Sprintf("readiness gate %q is %s (%s: %s)", gate, c.Status, c.Reason, c.Message)
}

// setApprovalWait records approval by policy's word on a draft in its
// target's Blocked (AwaitingApproval): what the policy waits for. A gate
// or a rejection, which say more, are kept.
func setApprovalWait(v *pvapi.PackageVariant, name, msg string) {
	for i := range v.Status.DownstreamTargets {
		t := &v.Status.DownstreamTargets[i]
		if t.Name != name || (t.Blocked != nil && t.Blocked.Reason != pvapi.ReasonAwaitingApproval) {
			continue
		}
		t.Blocked = &pvapi.Blocked{Reason: pvapi.ReasonAwaitingApproval, Message: msg}
	}
}

// seeLifecycles (rule: rejected-drafts) records on the targets each
// revision's lifecycle as this reconcile read it, and whether a person
// rejected the draft: the variant read it Proposed (its status says so)
// and reads it Draft now, a move it did not make (the tracker remembers
// the drafts an upgrade in place moved back to Draft, until they are
// proposed again; their new content also ends an earlier rejection, and
// a status patch lost after the move does not turn it into one). Porch records no
// rejection ("TODO: signal rejection of the approval differently than by
// returning to draft?", v1.5.3): this is how pvkit tells it. A rejection
// holds while the draft stays a Draft, and is a Warning Event when seen.
//
// It also records each target's upstream lock as listed, unless the
// reconcile made it (a clone or an upgrade in place: the upstream's).
func (r *Reconciler) seeLifecycles(v *pvapi.PackageVariant, targets []target, mine []store.Revision, up *store.Revision) {
	lifecycle := map[string]store.Lifecycle{}
	locks := map[string]*store.Lock{}
	for _, rev := range mine {
		lifecycle[rev.Name], locks[rev.Name] = rev.Lifecycle, rev.Lock
	}
	prev := map[string]pvapi.DownstreamTarget{}
	for _, t := range v.Status.DownstreamTargets {
		prev[t.Name] = t
	}
	for i := range targets {
		t := &targets[i]
		lc, ok := lifecycle[t.name]
		if !ok {
			lc = store.Draft // created by this reconcile
			if t.lock == nil {
				t.lock = store.LockFor(*up)
			}
		}
		if t.lock == nil {
			t.lock = locks[t.name]
		}
		own := r.tracker.wasMovedBack(v.UID, t.name)
		if own {
			lc = store.Draft // mine was listed before the move
		}
		p := prev[t.name]
		t.lifecycle = string(lc)
		t.rejected = lc == store.Draft && !own && (p.Rejected || p.Lifecycle == string(store.Proposed))
		if lc == store.Proposed {
			r.tracker.movedBack(v.UID, t.name, false) // proposed again: a move back from now on is a person's
		}
		if t.rejected && !p.Rejected {
			r.events().Warning(v, EventDraftRejected, "draft %s was rejected (Proposed, then Draft again): approval by policy leaves it to a person, and a staged rollout counts this variant failed; propose it again when it is fixed", t.name)
		}
	}
}

// mergeTargets keeps the render status of targets not updated this time.
func mergeTargets(prev []pvapi.DownstreamTarget, targets []target) []pvapi.DownstreamTarget {
	old := map[string]pvapi.DownstreamTarget{}
	for _, t := range prev {
		old[t.Name] = t
	}
	out := make([]pvapi.DownstreamTarget, 0, len(targets))
	for _, t := range targets {
		dt, ok := old[t.name]
		if !ok {
			dt = pvapi.DownstreamTarget{Name: t.name}
		}
		if t.render != nil {
			dt.RenderStatus = *t.render.DeepCopy()
		}
		if t.lastWrite != "" {
			dt.LastWrite = t.lastWrite
		}
		if t.lifecycle != "" {
			dt.Lifecycle, dt.Rejected = t.lifecycle, t.rejected
		}
		dt.Edited = dt.Edited || t.edited
		if t.lock != nil {
			dt.UpstreamLock = &pvapi.UpstreamLock{Repo: t.lock.Repository, Package: t.lock.Package, Ref: t.lock.Ref, Commit: t.lock.Commit}
		}
		dt.Blocked = blocked(dt, t)
		out = append(out, dt)
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
