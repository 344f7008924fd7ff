package packagevariant

import (
	"context"
	"errors"
	"fmt"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"slices"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// EventPublishedDrift (Warning): the downstream package changed behind
// the variant's back (a newer published revision it did not make, or the
// branch's content).
const EventPublishedDrift = "PublishedDrift"

// Events of the drift policies: a draft made to resolve a drift (Normal).
const (
	EventDriftAdopted  = "DriftAdopted"
	EventDriftReverted = "DriftReverted"
)

// DriftPolicyAnnotation says what the variant does about a drift (rule
// drift-policy), on the variant or its set (the variant's own wins):
//
//   - "report" (the default): the drift is reported, nothing is written;
//   - "adopt": the change becomes the variant's base. A newer revision
//     made outside the variant is adopted (owned, then treated as the
//     variant's own); content changed on the branch is written into an
//     edit draft of the variant's revision and the mutations are applied
//     on top, for approval like any draft;
//   - "revert": an edit draft of the variant's own revision, the mutations
//     applied, for approval like any draft: once published, the branch is
//     what pvkit would write again.
//
// Any other value is read as "report" (the reading that writes nothing)
// and the drift's message names it. Never silent: each draft has an Event
// and the annotation DriftResolutionAnnotation; `pvctl plan` previews it.
const DriftPolicyAnnotation = pv.DriftPolicyAnnotation

// The values of DriftPolicyAnnotation.
const (
	DriftReport = "report"
	DriftAdopt  = "adopt"
	DriftRevert = "revert"
)

// DriftResolutionAnnotation is on a draft a drift policy made: which
// policy, and the revision whose drift it resolves ("revert of
// deploy.app.main").
const DriftResolutionAnnotation = "pvkit.dev/drift-resolution"

// maxDriftFiles bounds the files a drift names in the status.
const maxDriftFiles = 20

// drift is a change of the variant's newest published revision (pub) it
// did not make: a newer published revision (NewerRevision), or the
// package on the branch (ContentChanged: the placeholder, with the files
// that differ and, for adopt, what the branch holds).
type drift struct {
	reason string
	pub    store.Revision
	rev    store.Revision
	files  []variant.FileChange
	branch map[string]string
	// why the branch cannot be read (BranchUnreadable).
	why string
}

// status is the drift as the target's status says it.
func (d *drift) status() *pvapi.TargetDrift {
	td := &pvapi.TargetDrift{Reason: d.reason, Revision: d.rev.Name}
	if d.reason == pvapi.ReasonNewerRevision {
		td.Message = fmt.Sprintf("%s (revision %d of %s in %s) is newer than the variant's %s (revision %d) and was not made by it: "+
			"the variant's next upgrade starts from its own revision and waits for a person's approval; carry the change into the variant or the blueprint, delete %s, or set the variant's spec.policy.drift (adopt or revert)",
			d.rev.Name, d.rev.Revision, d.rev.Package, d.rev.Repository, d.pub.Name, d.pub.Revision, d.rev.Name)
		return td
	}
	if d.reason == pvapi.ReasonBranchUnreadable {
		td.Message = fmt.Sprintf("the package on the branch (%s) cannot be read: %s; a commit pvkit and Porch did not make broke it, and what the branch holds is not the variant's published %s (revision %d): "+
			"undo the commit, or set the variant's spec.policy.drift: revert (adopt has nothing to adopt)",
			d.rev.Name, d.why, d.pub.Name, d.pub.Revision)
		return td
	}
	how := make([]string, 0, len(d.files))
	for i, f := range d.files {
		if i < maxDriftFiles {
			td.Files = append(td.Files, f.Path)
		}
		if i < 5 {
			how = append(how, f.Path+" "+f.Change)
		}
	}
	if n := len(d.files) - len(how); n > 0 {
		how = append(how, fmt.Sprintf("%d more", n))
	}
	td.Message = fmt.Sprintf("the package on the branch (%s) is not the variant's published %s (revision %d): %s; "+
		"a commit pvkit and Porch did not make (pvctl diff %s --against %s shows it): the variant's next draft starts from %s and its approval replaces the branch's content; "+
		"undo the commit, carry the change into the variant or the blueprint, or set the variant's spec.policy.drift (adopt or revert)",
		d.rev.Name, d.pub.Name, d.pub.Revision, strings.Join(how, ", "), d.rev.Name, d.pub.Name, d.pub.Name)
	return td
}

// observeDrift (rules: published-drift, content-drift) reports the drift
// of the variant's newest published revision, as the listing of its
// package shows it: the target's Drift, the condition PublishedDrift and,
// when it appears, a Warning Event. It writes nothing to the package (the
// policies act in reconcilePublished). A variant with no published
// revision has no drift; one with a draft too is reported (the draft,
// once approved, replaces what drifted: a policy's draft, or an upgrade's).
// One listing of the package (Porch: the informer cache's index); the
// content is read only when the branch moved since the last check
// (driftMemo): a steady resync writes and reads nothing.
// It returns the branch as it read it, for the health check's
// revision.commits.
func (r *Reconciler) observeDrift(ctx context.Context, v *pvapi.PackageVariant) (branchHead, error) {
	var d *drift
	var head branchHead
	if len(v.Status.DownstreamTargets) > 0 {
		revs, err := r.porch().ListRevisions(ctx, downstreamKey(v))
		if err != nil {
			return head, err
		}
		if pub := newestOwned(v, revs); pub != nil {
			if d, head, err = r.driftOf(ctx, v, *pub, revs); err != nil {
				return head, err
			}
			if head.branch == "" {
				// Porch's watch does not announce the placeholder an
				// approval made: its cache may not list the branch.
				head.branch = pub.Branch
			}
		}
	}
	return head, r.reportDrift(ctx, v, d)
}

// branchHead is the deployment branch as the drift check read it: its
// name, its head's commit, and the name of the variant's published
// revision the package there still is ("" when it drifted, or the branch
// is not listed).
type branchHead struct{ branch, commit, holds string }

// reportDrift writes the drift d (nil: none) into the status.
func (r *Reconciler) reportDrift(ctx context.Context, v *pvapi.PackageVariant, d *drift) error {
	var td *pvapi.TargetDrift
	if d != nil {
		td = d.status()
		if why := r.driftPolicyProblem(ctx, v); why != "" {
			td.Message += "; " + why
		}
	}
	for i := range v.Status.DownstreamTargets {
		t := &v.Status.DownstreamTargets[i]
		switch {
		case td == nil || t.Name != d.pub.Name:
			t.Drift = nil
		case t.Drift == nil || !sameDrift(t.Drift, td):
			t.Drift = td
		}
	}
	if td == nil {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, pvapi.ConditionPublishedDrift)
		return nil
	}
	msg := td.Message
	if c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionPublishedDrift); c == nil || c.Message != msg {
		r.events().Warning(v, EventPublishedDrift, "%s", msg)
	}
	kit.Set(&v.Status.Conditions, v.Generation, r.Clock, pvapi.ConditionPublishedDrift, metav1.ConditionTrue, td.Reason, msg)
	return nil
}

func sameDrift(a, b *pvapi.TargetDrift) bool {
	return a.Reason == b.Reason && a.Revision == b.Revision && a.Message == b.Message && slices.Equal(a.Files, b.Files)
}

// newestOwned is the variant's newest published revision in revs (nil:
// none).
func newestOwned(v *pvapi.PackageVariant, revs []store.Revision) *store.Revision {
	var pub *store.Revision
	for i := range revs {
		if r := &revs[i]; r.Lifecycle.IsPublished() && r.Revision > 0 && r.OwnedBy(string(v.UID)) && (pub == nil || r.Revision > pub.Revision) {
			pub = r
		}
	}
	return pub
}

// newerUnowned is the newest published revision in revs newer than pub
// that the variant does not own (nil: none).
func newerUnowned(v *pvapi.PackageVariant, pub store.Revision, revs []store.Revision) *store.Revision {
	var newer *store.Revision
	for i := range revs {
		if rev := &revs[i]; !rev.Placeholder && rev.Lifecycle.IsPublished() && rev.Revision > pub.Revision && !rev.OwnedBy(string(v.UID)) && (newer == nil || rev.Revision > newer.Revision) {
			newer = rev
		}
	}
	return newer
}

// driftOf is the drift of pub, the variant's newest published revision,
// in revs, its package's listing (nil: none). A newer published revision
// the variant does not own comes first (NewerRevision); else the branch's
// placeholder against pub (ContentChanged): the same commit, or the same
// git tree where the store knows it, is no drift without a read; else
// the branch is read (and pub, once: its file digests are remembered) and
// compared file by file, by meaning (a reformatted file is no change),
// and the answer is remembered for these two versions.
// The branch holding what the variant last wrote of a draft (its approval
// the listing does not show yet) is no drift either.
func (r *Reconciler) driftOf(ctx context.Context, v *pvapi.PackageVariant, pub store.Revision, revs []store.Revision) (*drift, branchHead, error) {
	newer := newerUnowned(v, pub, revs)
	var branch *store.Revision
	for i := range revs {
		if revs[i].Placeholder {
			branch = &revs[i]
		}
	}
	var head branchHead
	if branch != nil {
		head.branch, head.commit = branch.Workspace, branch.Commit
	}
	holds := func(d *drift) (*drift, branchHead, error) {
		if d == nil && branch != nil {
			head.holds = pub.Name
		}
		return d, head, nil
	}
	switch {
	case newer != nil:
		return &drift{reason: pvapi.ReasonNewerRevision, pub: pub, rev: *newer}, head, nil
	case branch != nil && branch.Unreadable != "":
		return &drift{reason: pvapi.ReasonBranchUnreadable, pub: pub, rev: *branch, why: branch.Unreadable}, head, nil
	case branch == nil || branch.ResourceVersion == pub.ResourceVersion || (branch.Content != "" && branch.Content == pub.Content):
		return holds(nil)
	}
	pubKey := pub.Name + "@" + pub.ResourceVersion
	key := pubKey + "|" + branch.Name + "@" + branch.ResourceVersion
	e, ok := r.mem.drift(v.UID)
	if ok && e.key == key {
		if e.drift == nil && !e.same {
			return nil, head, nil
		}
		return holds(e.drift)
	}
	pubFiles := e.pubFiles
	if !ok || e.pubKey != pubKey { // a published revision never changes: read once
		from, err := r.porch().GetResources(ctx, v.Namespace, pub.Name)
		if err != nil {
			return nil, head, fmt.Errorf("reading %s to compare it with the branch: %w", pub.Name, err)
		}
		pubFiles = variant.FileDigests(from.Files)
	}
	to, err := r.porch().GetResources(ctx, v.Namespace, branch.Name)
	if errors.Is(err, store.ErrUnreadable) { // listed, not served: not remembered, it is read again
		return &drift{reason: pvapi.ReasonBranchUnreadable, pub: pub, rev: *branch, why: err.Error()}, head, nil
	}
	if err != nil {
		return nil, head, fmt.Errorf("reading the branch's %s to compare it with %s: %w", branch.Name, pub.Name, err)
	}
	var d *drift
	files := variant.ChangedFiles(pubFiles, variant.FileDigests(to.Files))
	if len(files) > 0 && !wroteLast(v, to.Files) {
		d = &drift{reason: pvapi.ReasonContentChanged, pub: pub, rev: *branch, files: files, branch: to.Files}
	}
	r.mem.setDrift(v.UID, driftEntry{key: key, drift: d, pubKey: pubKey, pubFiles: pubFiles, same: len(files) == 0})
	if len(files) > 0 {
		return d, head, nil
	}
	return holds(d)
}

// wroteLast reports whether files are what the variant last wrote of one
// of its targets.
func wroteLast(v *pvapi.PackageVariant, files map[string]string) bool {
	fp := ""
	for _, t := range v.Status.DownstreamTargets {
		if t.LastWrite == "" {
			continue
		}
		if fp == "" {
			fp = variant.Fingerprint(files)
		}
		if fp == t.LastWrite {
			return true
		}
	}
	return false
}

// driftEntry is the last content comparison of a variant (part of its
// memory, memory.go): its versions, the drift found (nil for none), and the
// file digests of the published revision compared (which never changes),
// so that a branch that moved is read alone.
type driftEntry struct {
	key      string
	drift    *drift
	pubKey   string
	pubFiles map[string]string
	// same: the branch holds pub's files (no change at all; a branch that
	// holds a draft's last write is no drift, but not pub either).
	same bool
}

// drift is the variant's last content comparison, if any.
func (t *memory) drift(uid types.UID) (driftEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil && r.drift != nil {
		return *r.drift, true
	}
	return driftEntry{}, false
}

// setDrift records the variant's content comparison.
func (t *memory) setDrift(uid types.UID, e driftEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).drift = &e
}
