// Package approve is the PackageVariant reconciler's approval by policy
// (--approve-by-policy): it publishes a variant's finished drafts that ask
// for it (approval.nephio.org/policy, or a wave's spec.approval), by
// Nephio's rules (orchestrator/approval), once the variant is Ready. It
// writes the lifecycle of those drafts to Porch and what holds the others
// back to the variant's status (the condition ApprovalWaiting and each
// target's Blocked); it reads nothing but the drafts it is given, their
// files and their package's listing.
package approve

import (
	"context"
	"fmt"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Events of approval by policy.
const (
	EventDraftApproved   = "DraftApproved"   // a draft its variant asks to be approved, published
	EventApprovalRefused = "ApprovalRefused" // Warning: a bad approval.nephio.org annotation
	EventApprovalPending = "ApprovalPending" // a draft's approval.nephio.org/delay runs
)

// listingRetry is how soon a reconcile runs again when Porch's listing
// does not show an approval yet.
const listingRetry = 500 * time.Millisecond

// Approver approves by policy; the reconciler makes one for each
// reconcile.
type Approver struct {
	// Store is Porch, settled.
	Store store.Store
	// Clock stamps conditions and reads delays (nil: the real clock).
	Clock kit.Clock
	// Events records the variant's Events.
	Events kit.Events
	// Verify checks a provenance record's signature (nil: the content is
	// checked against the record, the signature is not).
	Verify provenance.Verifier
}

func (a Approver) now() time.Time {
	if a.Clock == nil {
		return time.Now()
	}
	return a.Clock.Now()
}

// Run approves, by Nephio's rules (approval.Decide), the
// variant's drafts that ask for it with approval.nephio.org/policy, once the
// variant is Ready (the caller runs it only then):
//   - every readiness gate of the draft's Kptfile True (the mutation gate
//     included, so never a draft whose mutation has not run);
//   - the draft as pvkit last left it (its digest in the variant's status,
//     DownstreamTarget.LastWrite, which only the controller writes): one
//     anyone changed since is left to a person;
//   - not rejected by a person (its target Blocked, Rejected): a draft
//     proposed and sent back to Draft is the person's to propose again;
//   - initial: only while the package has no published revision; always:
//     every time; approval.nephio.org/delay after the draft's creation
//     (the reconcile comes back when it is due: the duration returned).
//
// A Draft is proposed, then approved (Porch's approval subresource). A bad
// annotation is a Warning Event, ApprovalRefused: the variant stays Ready.
// What holds a draft back shows in the status: the condition
// ApprovalWaiting, True while a draft that asks for approval is not
// approved (reason ApprovalRefused for a bad annotation, ApprovalPending
// while its delay runs, with the time it is due, ApprovalWaiting
// otherwise), removed when none waits; a delay that starts is a Normal
// Event, ApprovalPending. Errors are Porch's, retried.
func (a Approver) Run(ctx context.Context, v *pvapi.PackageVariant, owned []store.Revision) (_ time.Duration, err error) {
	var again time.Duration
	var w approvalWait
	defer func() {
		if err == nil { // what every draft is waiting for, when all were seen
			a.setApprovalWaiting(v, w)
		}
	}()
	for _, d := range owned {
		wave := waveApproved(v, d)
		asked := d.Annotations // what the draft carries: a wave's approval adds no annotation to it
		if wave {
			d.Annotations = withPolicy(d.Annotations, approval.Always)
		}
		if d.Lifecycle.IsPublished() || d.Annotations[approval.PolicyAnnotation] == "" {
			continue
		}
		if why := a.personsToApprove(v, d); why != "" {
			w.waiting = append(w.waiting, why)
			continue
		}
		res, err := a.Store.GetResources(ctx, d.Namespace, d.Name)
		if err != nil {
			return 0, err
		}
		pkg, err := a.Store.ListRevisions(ctx, d.Key())
		if err != nil {
			return 0, err
		}
		published := false
		for _, p := range pkg {
			published = published || p.Lifecycle.IsPublished()
		}
		dec, err := approval.Decide(approval.Facts{Annotations: d.Annotations, Created: d.Created, Now: a.now(),
			VariantReady: true, GatesTrue: gatesTrue(res.Files), PublishedExists: published,
			EditedByPerson:    editedByPerson(v, d.Name, res.Files),
			ProvenanceProblem: a.provenanceProblem(ctx, v, d, res.Files),
			Replaces:          replacesAPerson(v, d, pkg)})
		if err != nil {
			a.Events.Warning(v, EventApprovalRefused, "%s: %v; not approved", d.Name, err)
			w.refused = append(w.refused, fmt.Sprintf("%s: %v", d.Name, err))
			setApprovalWait(v, d.Name, Awaiting(string(d.Lifecycle), fmt.Sprintf("its approval annotations are refused: %v", err)))
			continue
		}
		if !dec.Approve {
			ctrl.LoggerFrom(ctx).V(1).Info("not approved", "revision", d.Name, "why", dec.Why)
			if dec.Wait > 0 && (again == 0 || dec.Wait < again) {
				again = dec.Wait
			}
			if dec.Wait > 0 { // a stable message: the time it is due, not how long ago it was made
				due := fmt.Sprintf("approved at %s (%s: %s)", d.Created.Add(a.delayOf(d)).UTC().Format(time.RFC3339), approval.DelayAnnotation, d.Annotations[approval.DelayAnnotation])
				w.pending = append(w.pending, d.Name+" is "+due)
				setApprovalWait(v, d.Name, Awaiting(string(d.Lifecycle), due))
			} else {
				w.waiting = append(w.waiting, fmt.Sprintf("%s is not approved: %s", d.Name, dec.Why))
				why := dec.Why
				switch {
				case wave:
					why = fmt.Sprintf("wave approval (%s): %s", v.Spec.Approval.By, strings.TrimPrefix(why, "policy always met"))
				case !strings.HasPrefix(why, "policy "): // said once ("policy initial: policy initial: ...")
					why = fmt.Sprintf("policy %s: %s", d.Annotations[approval.PolicyAnnotation], why)
				}
				setApprovalWait(v, d.Name, Awaiting(string(d.Lifecycle), why))
			}
			continue
		}
		if d.Lifecycle == store.Draft {
			d.Lifecycle, d.ResourceVersion, d.Annotations = store.Proposed, "", asked
			if err := a.Store.Update(ctx, d); err != nil {
				return 0, fmt.Errorf("proposing %s for approval: %w", d.Name, err)
			}
		}
		pub, err := a.approve(ctx, d)
		if err != nil {
			return 0, err
		}
		a.approved(ctx, v, d.Name, pub, dec.Policy, wave)
	}
	return again, nil
}

// replacesAPerson (rule published-drift) names the newest published
// revision of the package that the variant did not make and that is newer
// than the variant's own newest published revision, which publishing d
// would replace with content that starts from the variant's ("" when
// there is none, or when d is the drift policy's revert of it: the policy
// a person set is that person's decision). Nephio's flow (a person copies
// the variant's revision, edits, approves) must not be undone by the next
// upgrade's approval by policy.
func replacesAPerson(v *pvapi.PackageVariant, d store.Revision, pkg []store.Revision) string {
	own := observe.NewestOwned(v, pkg)
	if own == nil {
		return ""
	}
	newer := observe.NewerUnowned(v, *own, pkg)
	if newer == nil || d.Annotations[observe.DriftResolutionAnnotation] == observe.DriftRevert+" of "+newer.Name {
		return ""
	}
	return fmt.Sprintf("%s (revision %d), newer than the variant's %s and not made by it; approve it by hand, or let the variant adopt it (%s: %s)",
		newer.Name, newer.Revision, own.Name, observe.DriftPolicyAnnotation, observe.DriftAdopt)
}

// approve approves d. The listing can be behind an approval already made
// (a reconcile brought by the branch's placeholder, which Porch sent
// before the published revision; Porch refuses the second approval, "can
// only be updated to 'ProposeDeletion'"): then d is read past the cache,
// and, published, the outcome is a wait for the listing, not an error
// whose backoff grows (seen in e2e-porch: a staged rollout stood a minute
// on one child retrying).
func (a Approver) approve(ctx context.Context, d store.Revision) (store.Revision, error) {
	pub, err := a.Store.ApproveRevision(ctx, d.Namespace, d.Name)
	if err == nil {
		return pub, nil
	}
	if cur, rerr := a.Store.Read(ctx, d.Namespace, d.Name); rerr == nil && cur.Lifecycle.IsPublished() {
		return store.Revision{}, kit.Wait(listingRetry, "%s is published; waiting for Porch's listing to show it", d.Name)
	}
	return store.Revision{}, fmt.Errorf("approving %s: %w", d.Name, err)
}

// approved records an approval by policy: the target Published in the
// status, as the next reconcile reads it (no status patch for it then),
// a log line and an Event saying whose decision it was.
func (a Approver) approved(ctx context.Context, v *pvapi.PackageVariant, name string, pub store.Revision, policy string, wave bool) {
	for i := range v.Status.DownstreamTargets {
		if t := &v.Status.DownstreamTargets[i]; t.Name == name && t.Lifecycle != "" {
			t.Lifecycle, t.Blocked = string(store.Published), nil
			if pub.Revision > 0 {
				t.Revision = pub.Revision
			}
		}
	}
	ctrl.LoggerFrom(ctx).Info("approved by policy", "revision", name, "policy", policy, "wave", wave)
	if wave {
		a.Events.Normal(v, EventDraftApproved, "approved %s (%s): revision %d of %s", name, v.Spec.Approval.By, pub.Revision, pub.Package)
	} else {
		a.Events.Normal(v, EventDraftApproved, "approved %s (%s: %s): revision %d of %s", name, approval.PolicyAnnotation, policy, pub.Revision, pub.Package)
	}
}

// waveApproved: the variant carries a wave's approval (spec.approval, rule
// wave-approval) for the upstream this draft was made from.
func waveApproved(v *pvapi.PackageVariant, d store.Revision) bool {
	a := v.Spec.Approval
	return a != nil && !d.Lifecycle.IsPublished() && d.Lock != nil && d.Lock.Ref == a.UpstreamRef &&
		(v.Spec.Upstream == nil || d.Lock.Package == "" || d.Lock.Package == v.Spec.Upstream.Package)
}

// withPolicy is a copy of the annotations with the approval policy set.
func withPolicy(ann map[string]string, policy string) map[string]string {
	out := make(map[string]string, len(ann)+1)
	for k, val := range ann {
		out[k] = val
	}
	out[approval.PolicyAnnotation] = policy
	return out
}

// gatesTrue reports whether every readiness gate of a package's Kptfile
// has a True condition (kptfile.NotReady); a package without a Kptfile has
// none to wait for.
func gatesTrue(files map[string]string) bool {
	kf, err := kptfile.FromFiles(files)
	if err != nil || kf == nil {
		return err == nil
	}
	gate, _, err := kf.NotReady()
	return err == nil && gate == ""
}

// editedByPerson reports whether a draft is not as its variant last left
// it (lastLeft), or the variant knows no last write of it.
func editedByPerson(v *pvapi.PackageVariant, draft string, files map[string]string) bool {
	fp := variant.Fingerprint(files)
	return approval.EditedSince(v.Target(draft).LastLeft(fp), fp)
}

// approvalWait is what holds a reconcile's drafts back from approval by
// policy: bad annotations, delays running (when each is due), anything
// else (a gate, a person's edit, policy initial after a publication).
type approvalWait struct{ refused, pending, waiting []string }

// setApprovalWaiting sets or removes the variant's ApprovalWaiting
// condition; a delay that starts (a new pending message) is an Event.
func (a Approver) setApprovalWaiting(v *pvapi.PackageVariant, w approvalWait) {
	all := append(append(append([]string(nil), w.refused...), w.pending...), w.waiting...)
	if len(all) == 0 {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, pvapi.ConditionApprovalWaiting)
		return
	}
	reason := pvapi.ReasonApprovalWaiting
	switch {
	case len(w.refused) > 0:
		reason = pvapi.ReasonApprovalRefused
	case len(w.pending) > 0:
		reason = pvapi.ReasonApprovalPending
	}
	msg := strings.Join(all, "; ")
	prev := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionApprovalWaiting)
	for _, p := range w.pending {
		if prev == nil || !strings.Contains(prev.Message, p) {
			a.Events.Normal(v, EventApprovalPending, "%s", p)
		}
	}
	kit.Set(&v.Status.Conditions, v.Generation, a.Clock, pvapi.ConditionApprovalWaiting, metav1.ConditionTrue, reason, msg)
}

// delayOf is a draft's approval.nephio.org/delay (0 when none parses; the
// caller has Decide's word that it does).
func (a Approver) delayOf(d store.Revision) time.Duration {
	v, _ := time.ParseDuration(d.Annotations[approval.DelayAnnotation])
	return v
}

// personsToApprove says why a draft that asks for approval is left to a
// person before anything of it is read ("" when not): rejected
// (proposed, then sent back to Draft).
func (a Approver) personsToApprove(v *pvapi.PackageVariant, d store.Revision) string {
	switch {
	case d.Lifecycle == store.Draft && v.Target(d.Name).Rejected():
		return fmt.Sprintf("%s was rejected: left to a person (propose it again)", d.Name)
	}
	return ""
}

// provenanceProblem is why a draft's provenance does not hold, when the
// draft, its variant or its set requires it ("" otherwise, or when it
// holds).
func (a Approver) provenanceProblem(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, files map[string]string) string {
	required := d.Annotations[pv.RequireProvenanceAnnotation] == "true"
	if !required {
		_, val, _ := v.PolicyOf(pv.RequireProvenanceAnnotation)
		required = val == "true"
	}
	if !required {
		return ""
	}
	res, err := provenance.Check(files, a.Verify)
	if err != nil {
		return err.Error()
	}
	if !res.Record.For(d.Name) {
		return fmt.Sprintf("the record (%s) was not written for %s", provenance.FileName, d.Name)
	}
	if marked := res.Record.Marked(); len(marked) > 0 {
		return "the record says pvkit did not build " + notBuilt(marked)
	}
	return ""
}

// notBuilt names the files a record marks as not pvkit's build, with
// their origin (at most five, and how many more).
func notBuilt(marked map[string]string) string {
	names := krm.SortedKeys(marked)
	parts := make([]string, 0, 6)
	for i, n := range names {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(names)-i))
			break
		}
		parts = append(parts, n+" ("+marked[n]+")")
	}
	return strings.Join(parts, ", ")
}

// Awaiting is AwaitingApproval's message, with what approval by policy
// said of it when it did (more).
func Awaiting(lifecycle, more string) string {
	if more == "" {
		return lifecycle + ", not yet approved"
	}
	return lifecycle + ", not yet approved: " + more
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
