package observe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventPublishedDrift (Warning): the downstream package changed behind
// the variant's back (a newer published revision it did not make, or the
// branch's content).
const EventPublishedDrift = "PublishedDrift"

// DriftPolicyAnnotation says what the variant does about a drift (rule
// drift-policy; spec.policy.drift replaces it on a variant):
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

// Observer reads what a variant published; the reconciler makes one from
// its own settings for each reconcile.
type Observer struct {
	// Client reads the management cluster's health objects.
	Client client.Reader
	// Store is Porch, settled.
	Store store.Store
	// Kinds are the kinds a health check may read.
	Kinds kit.ReadableKinds
	// Clusters reads other clusters (nil: none).
	Clusters Clusters
	// Watch starts watching a kind, so that its objects' changes wake
	// their variants.
	Watch func(apiVersion, kind string) error
	// Clock stamps conditions and health (nil: the real clock).
	Clock kit.Clock
	// Events records the variant's Events.
	Events kit.Events
	// Memory keeps each variant's last content comparison.
	Memory Memory
}

// Memory is where a variant's last content comparison is kept, part of
// the reconciler's one record per variant (so forgotten with it).
type Memory interface {
	Drift(uid types.UID) (Entry, bool)
	SetDrift(uid types.UID, e Entry)
}

// Entry is the last content comparison of a variant: its versions, the
// drift found (nil for none), and the file digests of the published
// revision compared (which never changes), so that a branch that moved is
// read alone.
type Entry struct {
	key      string
	drift    *Drift
	pubKey   string
	pubFiles map[string]string
	// same: the branch holds pub's files (no change at all; a branch that
	// holds a draft's last write is no drift, but not pub either).
	same bool
	// commit is the branch's commit whose files were compared: the read's
	// own resource version where it is a commit and not the listing's
	// (an informer's listing of Porch's placeholder can lag behind the
	// branch, its files read from Porch do not), "" when none is known.
	commit string
}

func (o Observer) now() time.Time {
	if o.Clock == nil {
		return time.Now()
	}
	return o.Clock.Now()
}

// Drift is a change of the variant's newest published revision (Pub) it
// did not make: a newer published revision (NewerRevision), or the
// package on the branch (ContentChanged: the placeholder Rev, with the
// files that differ and, for adopt, what the branch holds).
type Drift struct {
	Reason string
	Pub    store.Revision
	Rev    store.Revision
	Files  []variant.FileChange
	Branch map[string]string
	// Why the branch cannot be read (BranchUnreadable).
	Why string
}

// status is the drift as the target's status says it.
func (d *Drift) status() *pvapi.TargetDrift {
	td := &pvapi.TargetDrift{Reason: d.Reason, Revision: d.Rev.Name}
	if d.Reason == pvapi.ReasonNewerRevision {
		td.Message = fmt.Sprintf("%s (revision %d of %s in %s) is newer than the variant's %s (revision %d) and was not made by it: "+
			"the variant's next upgrade starts from its own revision and waits for a person's approval; carry the change into the variant or the blueprint, delete %s, or set the variant's spec.policy.drift (adopt or revert)",
			d.Rev.Name, d.Rev.Revision, d.Rev.Package, d.Rev.Repository, d.Pub.Name, d.Pub.Revision, d.Rev.Name)
		return td
	}
	if d.Reason == pvapi.ReasonBranchUnreadable {
		td.Message = fmt.Sprintf("the package on the branch (%s) cannot be read: %s; a commit pvkit and Porch did not make broke it, and what the branch holds is not the variant's published %s (revision %d): "+
			"undo the commit, or set the variant's spec.policy.drift: revert (adopt has nothing to adopt)",
			d.Rev.Name, d.Why, d.Pub.Name, d.Pub.Revision)
		return td
	}
	how := make([]string, 0, len(d.Files))
	for i, f := range d.Files {
		if i < maxDriftFiles {
			td.Files = append(td.Files, f.Path)
		}
		if i < 5 {
			how = append(how, f.Path+" "+f.Change)
		}
	}
	if n := len(d.Files) - len(how); n > 0 {
		how = append(how, fmt.Sprintf("%d more", n))
	}
	td.Message = fmt.Sprintf("the package on the branch (%s) is not the variant's published %s (revision %d): %s; "+
		"a commit pvkit and Porch did not make (pvctl diff %s --against %s shows it): the variant's next draft starts from %s and its approval replaces the branch's content; "+
		"undo the commit, carry the change into the variant or the blueprint, or set the variant's spec.policy.drift (adopt or revert)",
		d.Rev.Name, d.Pub.Name, d.Pub.Revision, strings.Join(how, ", "), d.Rev.Name, d.Pub.Name, d.Pub.Name)
	return td
}

// ObserveDrift reports the drift of the variant's newest published
// revision in its package's listing (key): the target's Drift, the
// condition PublishedDrift and, when it appears or changes, a Warning
// Event; a bad drift policy (DriftPolicy) is said in its message. A variant with no published revision has no drift; one with a
// draft too is reported (the draft, once approved, replaces what drifted).
// It returns the branch as it read it, for the health check's
// revision.commits.
func (o Observer) ObserveDrift(ctx context.Context, v *pvapi.PackageVariant, key store.PackageKey) (BranchHead, error) {
	var d *Drift
	var head BranchHead
	if len(v.Status.DownstreamTargets) > 0 {
		revs, err := o.Store.ListRevisions(ctx, key)
		if err != nil {
			return head, err
		}
		if pub := NewestOwned(v, revs); pub != nil {
			if d, head, err = o.DriftOf(ctx, v, *pub, revs); err != nil {
				return head, err
			}
			if head.branch == "" {
				// Porch's watch does not announce the placeholder an
				// approval made: its cache may not list the branch.
				head.branch = pub.Branch
			}
		}
	}
	_, problem := DriftPolicy(v)
	o.reportDrift(v, d, problem)
	return head, nil
}

// BranchHead is the deployment branch as the drift check read it: its
// name, its head's commit, and the name of the variant's published
// revision the package there still is ("" when it drifted, or the branch
// is not listed).
type BranchHead struct{ branch, commit, holds string }

// reportDrift writes the drift d (nil: none) into the status.
func (o Observer) reportDrift(v *pvapi.PackageVariant, d *Drift, problem string) {
	var td *pvapi.TargetDrift
	if d != nil {
		td = d.status()
		if problem != "" {
			td.Message += "; " + problem
		}
	}
	for i := range v.Status.DownstreamTargets {
		t := &v.Status.DownstreamTargets[i]
		switch {
		case td == nil || t.Name != d.Pub.Name:
			t.Drift = nil
		case t.Drift == nil || !sameDrift(t.Drift, td):
			t.Drift = td
		}
	}
	if td == nil {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, pvapi.ConditionPublishedDrift)
		return
	}
	msg := td.Message
	if c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionPublishedDrift); c == nil || c.Message != msg {
		o.Events.Warning(v, EventPublishedDrift, "%s", msg)
	}
	kit.Set(&v.Status.Conditions, v.Generation, o.Clock, pvapi.ConditionPublishedDrift, metav1.ConditionTrue, td.Reason, msg)
}

func sameDrift(a, b *pvapi.TargetDrift) bool {
	return a.Reason == b.Reason && a.Revision == b.Revision && a.Message == b.Message && slices.Equal(a.Files, b.Files)
}

// NewestOwned is the variant's newest published revision in revs (nil:
// none).
func NewestOwned(v *pvapi.PackageVariant, revs []store.Revision) *store.Revision {
	var pub *store.Revision
	for i := range revs {
		if r := &revs[i]; r.Lifecycle.IsPublished() && r.Revision > 0 && r.OwnedBy(string(v.UID)) && (pub == nil || r.Revision > pub.Revision) {
			pub = r
		}
	}
	return pub
}

// NewerUnowned is the newest published revision in revs newer than pub
// that the variant does not own (nil: none).
func NewerUnowned(v *pvapi.PackageVariant, pub store.Revision, revs []store.Revision) *store.Revision {
	var newer *store.Revision
	for i := range revs {
		if rev := &revs[i]; !rev.Placeholder && rev.Lifecycle.IsPublished() && rev.Revision > pub.Revision && !rev.OwnedBy(string(v.UID)) && (newer == nil || rev.Revision > newer.Revision) {
			newer = rev
		}
	}
	return newer
}

// DriftOf is the drift of pub, the variant's newest published revision,
// in revs, its package's listing (nil: none). A newer published revision
// the variant does not own comes first (NewerRevision); else the branch's
// placeholder against pub (ContentChanged): the same commit, or the same
// git tree where the store knows it, is no drift without a read; else
// the branch is read (and pub, once: its file digests are remembered) and
// compared file by file, by meaning (a reformatted file is no change),
// and the answer is remembered for these two versions.
// The branch holding what the variant last wrote of a draft (its approval
// the listing does not show yet) is no drift either.
func (o Observer) DriftOf(ctx context.Context, v *pvapi.PackageVariant, pub store.Revision, revs []store.Revision) (*Drift, BranchHead, error) {
	newer := NewerUnowned(v, pub, revs)
	var branch *store.Revision
	for i := range revs {
		if revs[i].Placeholder {
			branch = &revs[i]
		}
	}
	var head BranchHead
	if branch != nil {
		head.branch, head.commit = branch.Workspace, branch.Commit
	}
	holds := func(d *Drift) (*Drift, BranchHead, error) {
		if d == nil && branch != nil {
			head.holds = pub.Name
		}
		return d, head, nil
	}
	switch {
	case newer != nil:
		return &Drift{Reason: pvapi.ReasonNewerRevision, Pub: pub, Rev: *newer}, head, nil
	case branch != nil && branch.Unreadable != "":
		return &Drift{Reason: pvapi.ReasonBranchUnreadable, Pub: pub, Rev: *branch, Why: branch.Unreadable}, head, nil
	case branch == nil || branch.ResourceVersion == pub.ResourceVersion || (branch.Content != "" && branch.Content == pub.Content):
		return holds(nil)
	}
	pubKey := pub.Name + "@" + pub.ResourceVersion
	key := pubKey + "|" + branch.Name + "@" + branch.ResourceVersion
	e, ok := o.Memory.Drift(v.UID)
	if ok && e.key == key {
		head.commit = e.commit
		if e.drift == nil && !e.same {
			return nil, head, nil
		}
		return holds(e.drift)
	}
	d, same, commit, err := o.compare(ctx, v, pub, *branch, e, ok && e.pubKey == pubKey, key, pubKey)
	if err != nil {
		return nil, head, err
	}
	head.commit = commit
	if d != nil || !same {
		return d, head, nil
	}
	return holds(nil)
}

// readCommit is the commit of the branch's files as read: the listing's,
// unless the read answered another resource version (the listing lags):
// then that version where it is a commit, else none.
func readCommit(branch store.Revision, read store.Resources) string {
	if read.ResourceVersion == "" || read.ResourceVersion == branch.ResourceVersion {
		return branch.Commit
	}
	if store.IsCommit(read.ResourceVersion) {
		return read.ResourceVersion
	}
	return ""
}

// compare reads the branch (and pub, unless known) and compares them file
// by file, with the commit the branch's files were read at (readCommit);
// the answer is remembered, but for an unreadable branch, which is read
// again.
func (o Observer) compare(ctx context.Context, v *pvapi.PackageVariant, pub, branch store.Revision, e Entry, pubKnown bool, key, pubKey string) (*Drift, bool, string, error) {
	pubFiles := e.pubFiles
	if !pubKnown { // a published revision never changes: read once
		from, err := o.Store.GetResources(ctx, v.Namespace, pub.Name)
		if err != nil {
			return nil, false, "", fmt.Errorf("reading %s to compare it with the branch: %w", pub.Name, err)
		}
		pubFiles = variant.FileDigests(from.Files)
	}
	to, err := o.Store.GetResources(ctx, v.Namespace, branch.Name)
	if errors.Is(err, store.ErrUnreadable) { // listed, not served: not remembered, it is read again
		return &Drift{Reason: pvapi.ReasonBranchUnreadable, Pub: pub, Rev: branch, Why: err.Error()}, false, "", nil
	}
	if err != nil {
		return nil, false, "", fmt.Errorf("reading the branch's %s to compare it with %s: %w", branch.Name, pub.Name, err)
	}
	var d *Drift
	files := variant.ChangedFiles(pubFiles, variant.FileDigests(to.Files))
	if len(files) > 0 && !wroteLast(v, to.Files) {
		d = &Drift{Reason: pvapi.ReasonContentChanged, Pub: pub, Rev: branch, Files: files, Branch: to.Files}
	}
	commit := readCommit(branch, to)
	o.Memory.SetDrift(v.UID, Entry{key: key, drift: d, pubKey: pubKey, pubFiles: pubFiles, same: len(files) == 0, commit: commit})
	return d, len(files) == 0, commit, nil
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

// AdoptedOrigins are the origins of an adoption's draft: the files of the
// revision it starts from that pvkit did not build (origins) and the files
// the adopted commit changed or added, each said adopted, from where, at
// which commit: the record never vouches for them as pvkit's build, and
// approval by policy leaves the draft to a person when provenance is
// required.
func AdoptedOrigins(d *Drift, origins provenance.Origins) provenance.Origins {
	at := d.Rev.Commit
	if at == "" {
		at = "version " + d.Rev.ResourceVersion
	} else {
		at = "commit " + at
	}
	for _, f := range d.Files {
		if f.Change == variant.FileRemoved {
			continue
		}
		if origins == nil {
			origins = provenance.Origins{}
		}
		origins[f.Path] = provenance.Origin{Words: fmt.Sprintf("adopted from %s at %s (%s: %s); not built by pvkit, approved by a person when provenance is required", d.Rev.Name, at, DriftPolicyAnnotation, DriftAdopt),
			Digest: strings.TrimPrefix(variant.Fingerprint(map[string]string{f.Path: d.Branch[f.Path]}), "sha256:")}
	}
	return origins
}
