package packagevariant

import (
	"fmt"

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
