package packagevariant

import (
	"context"
	"fmt"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
	"github.com/pvkit/pvkit/pkg/provenance"
	ctrl "sigs.k8s.io/controller-runtime"
)

// DraftUpgradeAnnotation chooses what happens to an owned, unapproved
// draft when the variant's upstream moves (rule: draft-upgrade); its
// spec.policy.draftUpgrade replaces it on a variant, and a set's is written
// into its children's spec.policy (rule policy-flows-down):
//
//   - "in-place" (the default, the design's "equivalent of a kpt pkg
//     update"): the draft is upgraded where it is, keeping a person's edits;
//   - "stall" (Porch v1.5.3's behaviour): the variant stalls, StaleDraft,
//     until the draft is approved or deleted.
//
// Any other value is read as "stall" (the reading that writes nothing) and
// the stall's message names it.
const DraftUpgradeAnnotation = pv.DraftUpgradeAnnotation

// The values of DraftUpgradeAnnotation.
const (
	DraftUpgradeInPlace = "in-place"
	DraftUpgradeStall   = "stall"
)

// EventDraftUpgradedInPlace: a stale draft upgraded where it is.
const EventDraftUpgradedInPlace = "DraftUpgradedInPlace"

// EventDraftRejected: a person rejected the variant's draft (seeLifecycles).
const EventDraftRejected = "DraftRejected"

// draftUpgradePolicy reads DraftUpgradeAnnotation on the variant, else on
// its set: "" for in place, or why the variant stalls instead.
func (r *Reconciler) draftUpgradePolicy(ctx context.Context, v *pvapi.PackageVariant) string {
	what, val, ok := v.PolicyOf(DraftUpgradeAnnotation)
	switch {
	case !ok || val == DraftUpgradeInPlace:
		return ""
	case val == DraftUpgradeStall:
		return fmt.Sprintf("%s asks for Porch's behaviour (%s: %q): approve or delete the draft", what, DraftUpgradeAnnotation, val)
	}
	return fmt.Sprintf("%s has %s: %q, neither %q nor %q (read as %q until fixed): approve or delete the draft, or fix the annotation",
		what, DraftUpgradeAnnotation, val, DraftUpgradeInPlace, DraftUpgradeStall, DraftUpgradeStall)
}

// staleDraft is the stall of a draft made from another upstream that is
// not upgraded in place.
func staleDraft(d store.Revision, up *store.Revision, why string) error {
	return kit.Stall(pvapi.ReasonStaleDraft, fmt.Errorf(
		"draft %s was made from upstream %s %s, but the PackageVariant wants %s; %s",
		d.Name, d.Lock.Package, d.Lock.Ref, store.LockFor(*up).Ref, why))
}

// inPlaceUpgrade prepares the upgrade of an owned draft d, made from
// another upstream revision, to up (rule: draft-upgrade): the three-way
// merge of `kpt pkg update` (old upstream, new upstream, the draft), where
// both upstreams are taken as the variant makes them (cloned and run
// through the variant's chain), so that what the variant itself wrote is
// on both sides and only a person's edits count as the draft's. A field
// both the edit and the upstream changed, to different values, stalls
// (UpgradeConflict) naming file, object and field, and nothing is written.
// The returned function maps the draft's files to the merged package; the
// chain runs on it next and the one write carries both, so the draft's
// mutation gate is True only once the chain has run on the new upstream.
func (r *Reconciler) inPlaceUpgrade(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, up *store.Revision) (func(map[string]string) (map[string]string, error), error) {
	old, err := r.lockedUpstream(ctx, v, d.Lock)
	if err != nil {
		return nil, err
	}
	base, err := r.variantOf(ctx, v, &old)
	if err != nil {
		return nil, err
	}
	next, err := r.variantOf(ctx, v, up)
	if err != nil {
		return nil, err
	}
	// The three-way merge leaves the provenance record out on every side
	// (each side's would conflict; the variant writes its own after).
	base, next = provenance.WithoutRecord(base), provenance.WithoutRecord(next)
	return func(files map[string]string) (map[string]string, error) {
		// The files the new upstream dropped: gone unless a
		// person changed them, and then a conflict like any other.
		persons, known := r.personsOrigins(v, files, provenance.Found{Revision: d.Name})
		files = provenance.WithoutRecord(files)
		files, kept := tasks.Dropped{Base: base, Next: next, Local: files, Persons: persons.Words(), Known: known}.Apply(files)
		conflicts, err := tasks.Conflicts(base, next, files)
		if err != nil {
			return nil, kit.Stall(pvapi.ReasonMutationFailed, fmt.Errorf("upgrading draft %s in place: %w", d.Name, err))
		}
		conflicts = append(conflicts, tasks.DroppedFileConflicts(kept)...)
		if len(conflicts) > 0 {
			lines := make([]string, 0, len(conflicts))
			for i, c := range conflicts {
				if i == maxConflictsNamed {
					lines = append(lines, fmt.Sprintf("and %d more", len(conflicts)-i))
					break
				}
				lines = append(lines, c.String())
			}
			return nil, kit.Stall(pvapi.ReasonUpgradeConflict, fmt.Errorf(
				"draft %s cannot be upgraded in place from %s to %s: %d field(s) changed in the draft and upstream differently: %s; make the draft agree with the new upstream (or undo the edit), or approve or delete the draft",
				d.Name, old.Name, up.Name, len(conflicts), strings.Join(lines, "; ")))
		}
		lock, err := movedLock(files, d.Lock, old, *up)
		if err != nil {
			return nil, kit.Stall(pvapi.ReasonMutationFailed, fmt.Errorf("upgrading draft %s in place: %w", d.Name, err))
		}
		if cloned, err := tasks.LockOf(next); err == nil && cloned != nil && cloned.Commit != "" {
			lock.Commit = cloned.Commit // the new upstream's commit, as its clone pins it (rule provenance-record)
		}
		merged, err := tasks.Upgrade(base, next, files, lock)
		if err != nil {
			return nil, kit.Stall(pvapi.ReasonMutationFailed, fmt.Errorf("upgrading draft %s in place: %w", d.Name, err))
		}
		ctrl.LoggerFrom(ctx).Info("upgrading draft in place", "revision", d.Name, "from", old.Name, "to", up.Name)
		return merged, nil
	}, nil
}

// maxConflictsNamed bounds the conflicts a stall message lists.
const maxConflictsNamed = 10

// variantOf is what the variant makes of an upstream revision: its clone
// (as Porch writes it, store/tasks) run through the variant's chain.
func (r *Reconciler) variantOf(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision) (map[string]string, error) {
	files, err := r.upstreamFiles(ctx, up)
	if err != nil {
		return nil, err
	}
	clone, err := tasks.Clone(files, store.LockFor(*up), v.Spec.Downstream.Package, true)
	if err != nil {
		return nil, kit.Stall(pvapi.ReasonMutationFailed, fmt.Errorf("the clone of %s: %w", up.Name, err))
	}
	out, _, err := r.runChain(ctx, v, clone)
	if err != nil {
		return nil, err
	}
	return out.Files, nil
}

// movedLock is the draft's upstream lock moved from old to up: the form the
// draft has (the repository by URL or name, a directory-scoped ref's
// prefix) kept, the ref the new revision's, the commit the new revision's
// where the store knows it (store.Revision.Commit: the git store's tag,
// Porch v1.5.3's resource version), else none. Without it a draft upgraded
// in place recorded no upstream commit, and its provenance could not be
// rebuilt (found by make demo).
func movedLock(files map[string]string, lock *store.Lock, old, up store.Revision) (*store.Lock, error) {
	cur, err := tasks.LockOf(files)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		cur = lock
	}
	want := store.LockFor(up)
	if cur == nil {
		return want, nil
	}
	next := *cur
	prefix := ""
	if from := store.LockFor(old).Ref; strings.HasSuffix(cur.Ref, "/"+from) {
		prefix = strings.TrimSuffix(cur.Ref, from)
	}
	next.Ref, next.Commit = prefix+want.Ref, up.Commit
	return &next, nil
}

// EventUpgradeKeptFiles (Warning): an upgrade kept files the new upstream
// dropped, because a person changed them.
const EventUpgradeKeptFiles = "UpgradeKeptFiles"

// upgradeDraft settles an upgrade draft of pub, the variant's newest
// published revision, from old to up (rule upgrade-dropped-files): the files the new
// upstream dropped are removed unless a person changed them in pub; those
// are kept as pub has them, even where the store's merge dropped them
// (Porch's resource-merge drops a changed resource the upstream removed:
// kptdev/porch#1165), and named (kept). The draft's origins are pub's: it
// holds pub's record until pvkit writes it.
//
// It applies to a draft just created (fresh) and to one whose record is
// still pub's (pvkit's first write of it failed): so the next reconcile
// settles what the first did not. Either side is computed once, when
// needed.
type upgradeDraft struct {
	r        *Reconciler
	ctx      context.Context
	v        *pvapi.PackageVariant
	pub, old store.Revision // old: found from pub's lock when not given
	up       *store.Revision
	fresh    bool
	dropped  *tasks.Dropped
	origins  provenance.Origins // pub's files pvkit did not build (dropped's Persons, with where each came from)
	kept     []string
}

// unsettled reports whether files are an upgrade draft of u.pub that
// pvkit has not written yet.
func (u *upgradeDraft) unsettled(files map[string]string) bool {
	if u.fresh {
		return true
	}
	rec, err := provenance.Read(files)
	return err == nil && rec.For(u.pub.Name)
}

// settle computes the dropped files' settlement, once.
func (u *upgradeDraft) settle() (*tasks.Dropped, error) {
	if u.dropped != nil {
		return u.dropped, nil
	}
	if u.old.Name == "" {
		old, err := u.r.lockedUpstream(u.ctx, u.v, u.pub.Lock)
		if err != nil {
			return nil, err
		}
		u.old = old
	}
	local, err := u.r.porch().GetResources(u.ctx, u.v.Namespace, u.pub.Name)
	if err != nil {
		return nil, fmt.Errorf("reading %s, which the upgrade starts from: %w", u.pub.Name, err)
	}
	base, err := u.r.variantOf(u.ctx, u.v, &u.old)
	if err != nil {
		return nil, err
	}
	next, err := u.r.variantOf(u.ctx, u.v, u.up)
	if err != nil {
		return nil, err
	}
	d := &tasks.Dropped{Base: provenance.WithoutRecord(base), Next: provenance.WithoutRecord(next), Local: provenance.WithoutRecord(local.Files)}
	u.origins, d.Known = provenance.PersonsOrigins(local.Files, found(u.pub))
	d.Persons = u.origins.Words()
	u.dropped = d
	return d, nil
}

// work is the draft's preparation and origins.
func (u *upgradeDraft) work() work {
	return work{
		prepare: func(files map[string]string) (map[string]string, error) {
			if !u.unsettled(files) {
				return files, nil
			}
			d, err := u.settle()
			if err != nil {
				return nil, err
			}
			out, kept := d.Apply(files)
			u.kept = kept
			return out, nil
		},
		origins: func(files map[string]string) provenance.Origins {
			if !u.unsettled(files) || u.dropped == nil {
				return nil
			}
			return u.origins
		},
	}
}

// maxKeptFiles bounds the files an upgrade's Kept names in the status.
const maxKeptFiles = 20

// named records what the upgrade kept: the target's Kept, a Warning Event
// and a log line.
func (u *upgradeDraft) named(draft string, targets []target) {
	if len(u.kept) == 0 {
		return
	}
	files := u.kept
	more := ""
	if len(files) > maxKeptFiles {
		more = fmt.Sprintf(" and %d more", len(files)-maxKeptFiles)
		files = files[:maxKeptFiles]
	}
	msg := fmt.Sprintf("kept %s%s: the upstream %s dropped them, a person changed them (in %s); delete them from %s if they should go",
		strings.Join(files, ", "), more, u.up.Name, u.pub.Name, draft)
	for i := range targets {
		if targets[i].name == draft {
			targets[i].kept = &pvapi.TargetKept{Files: files, Message: msg}
		}
	}
	ctrl.LoggerFrom(u.ctx).Info("the upgrade kept files the upstream dropped", "revision", draft, "files", u.kept)
	u.r.events().Warning(u.v, EventUpgradeKeptFiles, "%s", msg)
}
