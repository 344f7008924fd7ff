package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/memory"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/provenance"
	ctrl "sigs.k8s.io/controller-runtime"
)

// workspacePrefix starts the workspace names of the drafts pvkit creates.
const workspacePrefix = "packagevariant-"

// target is a downstream revision the variant reports, with the render
// outcome of the last update (nil when not updated this time).
type target struct {
	name   string
	render *store.RenderStatus
	// lastWrite is the digest of the draft as the variant last left it
	// (pvapi.DownstreamTarget.LastWrite); "" to keep the status's.
	lastWrite string
	// createdAt is the version of a draft this reconcile created and could
	// not read (pvapi.DownstreamTarget.CreatedAt); "" to keep the status's.
	createdAt string
	// unconfirmed is the digest of a write whose outcome is not known
	// (pvapi.DownstreamTarget.UnconfirmedWrite): answered with an error,
	// the draft not read back.
	unconfirmed string
	// checked: the chain ran on the draft this reconcile; overridden are
	// then its warnings that the blueprint undoes the variant
	// (variant.Result.Overridden).
	checked    bool
	overridden []string
	// lifecycle is the revision's as this reconcile read it ("": not
	// known); rejected: a person rejected the draft (seeLifecycles).
	lifecycle string
	rejected  bool
	// revision is the revision's number as listed (0: not published, or
	// not known).
	revision int
	// commit is the git commit that published it, where the store knows
	// it (pvapi.DownstreamTarget.Commit; "" to keep the status's).
	commit string
	// edited: the chain read the draft different from the variant's last
	// write of it (pvapi.DownstreamTarget.Edited, which stays once set).
	edited bool
	// lock is the upstream the revision is at, as this reconcile read or
	// made it (nil: not known, the status keeps what it has).
	lock *store.Lock
	// gate, when checked: why the draft as the chain left it cannot be
	// approved without a change (variant.Result.OpenGate), "" when
	// nothing holds it.
	gate string
	// kept: what the upgrade that made the draft kept of a person's
	// against the upstream (nil: the status keeps what it has).
	kept *pvapi.TargetKept
}

// reconcileDownstream makes the downstream what the variant wants and
// returns its targets (the owned drafts, or else the latest published
// one) and the variant's revisions of it as listed before any write.
func (r *Reconciler) reconcileDownstream(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision) (targets []target, listed []store.Revision, err error) {
	mine, held, err := r.ownedDownstream(ctx, v)
	if err != nil {
		return nil, nil, err
	}
	targets, err = r.reconcileMine(ctx, v, up, mine)
	if err == nil && held != nil {
		// The new downstream is made (Porch makes it in the same reconcile);
		// the old one's removal waits for the host (pvctl run --prune).
		err = held
	}
	return targets, mine, err
}

// reconcileMine brings the variant's revisions of its downstream package
// (mine) to what it asks for: a clone, an edit or upgrade draft, a draft's
// mutation. Three steps: what the listing holds (listed), the in-place
// upgrade of stale drafts (upgradeStale), the mutation of the drafts
// (mutateDrafts).
func (r *Reconciler) reconcileMine(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, mine []store.Revision) (targets []target, err error) {
	moved := map[string]bool{} // drafts this reconcile moved back to Draft
	defer func() {
		if err != nil { // what was moved is recorded all the same
			targets = withMoved(targets, moved)
		}
		r.seeLifecycles(v, targets, mine, up, moved)
	}()
	if mine, err = r.statusNamed(ctx, v, mine); err != nil {
		return nil, err
	}
	var drafts []store.Revision
	var published *store.Revision
	for i := range mine {
		if rev := &mine[i]; !rev.Lifecycle.IsPublished() {
			drafts = append(drafts, *rev)
		} else if published == nil || rev.Revision > published.Revision {
			published = rev
		}
	}
	if len(drafts) == 0 && published == nil {
		if err := r.precheck(ctx, v, up); err != nil {
			return nil, err
		}
		draft, err := r.createDraft(ctx, v, store.Task{Type: store.Clone, Upstream: up.Name})
		if err != nil {
			return nil, err
		}
		return r.mutateNew(ctx, v, up, draft)
	}
	if drafts, err = r.abandonUndone(ctx, v, up, drafts, published); err != nil {
		return nil, err
	}
	if len(drafts) == 0 {
		return r.reconcilePublished(ctx, v, up, *published)
	}
	upgrades, err := r.upgradeStale(ctx, v, up, drafts, moved)
	if err != nil {
		return nil, err
	}
	if len(upgrades) == 0 {
		if t, ok, conflict := r.unchanged(ctx, v, up, drafts); ok {
			return t, conflict
		}
	}
	return r.mutateDrafts(ctx, v, up, drafts, upgrades, published)
}

// upgradeOf is the settlement of d when it may be an upgrade draft of
// published, the variant's newest published revision, that pvkit has not
// written yet (its first write failed): d at up, published at another
// upstream. nil otherwise.
func (r *Reconciler) upgradeOf(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, d store.Revision, published *store.Revision) *upgradeDraft {
	if published == nil || published.Lock == nil || published.Lock.Matches(*up) || d.Lock == nil || !d.Lock.Matches(*up) {
		return nil
	}
	return &upgradeDraft{r: r, ctx: ctx, v: v, pub: *published, up: up}
}

// statusNamed is mine with the revisions the variant's status names that
// the listing lacks (settled.Store.WithNamed; rule listing-lags). Steady
// state reads and allocates nothing: the listing shows them.
func (r *Reconciler) statusNamed(ctx context.Context, v *pvapi.PackageVariant, mine []store.Revision) ([]store.Revision, error) {
	var named []string
	for _, t := range v.Status.DownstreamTargets {
		if !slices.ContainsFunc(mine, func(rev store.Revision) bool { return rev.Name == t.Name }) {
			named = append(named, t.Name)
		}
	}
	if len(named) == 0 {
		return mine, nil
	}
	ctrl.LoggerFrom(ctx).Info("the listing does not show revisions the status names; read directly", "revisions", named)
	return r.porch().WithNamed(ctx, downstreamKey(v), string(v.UID), mine, named)
}

// upgradeStale prepares the in-place upgrade of the stale drafts (made
// from another upstream revision), unless the variant asks for Porch's
// stall (rule: draft-upgrade); a Proposed one is moved back to Draft
// first (drafts is updated, and moved names it). It returns each
// upgrade's preparation, by draft.
func (r *Reconciler) upgradeStale(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, drafts []store.Revision, moved map[string]bool) (map[string]func(map[string]string) (map[string]string, error), error) {
	upgrades := map[string]func(map[string]string) (map[string]string, error){}
	for i, d := range drafts {
		if d.Lock == nil || d.Lock.Matches(*up) {
			continue
		}
		if why := r.draftUpgradePolicy(ctx, v); why != "" {
			return nil, staleDraft(d, up, why)
		}
		prepare, err := r.inPlaceUpgrade(ctx, v, d, up)
		if err != nil {
			return nil, err
		}
		if d.Lifecycle == store.Proposed {
			// What was proposed is not what the draft becomes: back to Draft
			// (approval by policy proposes it again once it is finished).
			d.Lifecycle, d.ResourceVersion = store.Draft, ""
			if err := r.porch().Update(ctx, d); err != nil {
				return nil, fmt.Errorf("moving the proposed draft %s back to Draft to upgrade it: %w", d.Name, err)
			}
			drafts[i] = d
			moved[d.Name] = true
		}
		upgrades[d.Name] = prepare
	}
	return upgrades, nil
}

// withMoved is targets with an entry for each draft moved names that it
// lacks (a reconcile that failed after moving them records the move).
func withMoved(targets []target, moved map[string]bool) []target {
	for _, name := range slices.Sorted(maps.Keys(moved)) {
		if !slices.ContainsFunc(targets, func(t target) bool { return t.name == name }) {
			targets = append(targets, target{name: name})
		}
	}
	return targets
}

// revisionNames are the revisions' names.
func revisionNames(revs []store.Revision) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = r.Name
	}
	return out
}

// mutateDrafts runs the chain on each draft (after its upgrade, when it
// has one) and writes what changed; a render conflict is joined into the
// error, after the others are done.
//
// A draft that may be an upgrade draft of published pvkit has not written
// yet is settled as its creation would have (upgradeOf).
func (r *Reconciler) mutateDrafts(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, drafts []store.Revision, upgrades map[string]func(map[string]string) (map[string]string, error), published *store.Revision) ([]target, error) {
	var targets []target
	var ms []mutation
	var conflicts []error
	for _, d := range drafts {
		w := work{prepare: upgrades[d.Name]}
		settle := r.upgradeOf(ctx, v, up, d, published)
		if w.prepare == nil && settle != nil {
			w = settle.work()
		}
		m, err := r.mutate(ctx, v, d, w)
		if err == nil && settle != nil && w.prepare != nil {
			ts := []target{m.target}
			settle.named(d.Name, ts)
			m.target = ts[0]
		}
		if err == nil && upgrades[d.Name] != nil {
			r.events().Normal(v, EventDraftUpgradedInPlace, "upgraded draft %s in place from %s %s to %s", d.Name, d.Lock.Package, d.Lock.Ref, store.LockFor(*up).Ref)
			m.target.lock = store.LockFor(*up)
		}
		if err != nil {
			return append(targets, m.target), settledOutcome(ctx, err) // those written so far are recorded
		}
		if m.conflict != nil {
			conflicts = append(conflicts, m.conflict)
		}
		if m.wrote {
			ctrl.LoggerFrom(ctx).Info("updated draft", "revision", d.Name)
			if upgrades[d.Name] == nil { // an upgrade's write has its own Event, DraftUpgradedInPlace
				r.events().Normal(v, EventDraftUpdated, "updated draft %s", d.Name)
			}
		}
		targets, ms = append(targets, m.target), append(ms, m)
	}
	conflict := errors.Join(conflicts...)
	r.rememberSettled(v, up, drafts, ms, targets, conflict)
	return targets, conflict
}

// mutateNew mutates a draft just created and remembers it when the result
// is settled.
func (r *Reconciler) mutateNew(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, draft store.Revision) ([]target, error) {
	return r.mutateNewWith(ctx, v, up, draft, store.LockFor(*up), work{})
}

// mutateNewWith is mutateNew with the draft's lock as made (a drift
// policy's edit keeps its source's) and w's preparation and origins
// (mutate).
func (r *Reconciler) mutateNewWith(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, draft store.Revision, lock *store.Lock, w work) ([]target, error) {
	w.fresh = true
	m, err := r.mutate(ctx, v, draft, w)
	m.target.lock = lock
	if err != nil {
		return []target{m.target}, err
	}
	targets := []target{m.target}
	r.rememberSettled(v, up, []store.Revision{draft}, []mutation{m}, targets, m.conflict)
	return targets, m.conflict
}

// rememberSettled remembers a run over drafts when the chain is known to
// change none of them as they now are: those it did not write, and those
// it wrote whose result it checked (mutation.settled, at their new version).
func (r *Reconciler) rememberSettled(v *pvapi.PackageVariant, up *store.Revision, drafts []store.Revision, ms []mutation, targets []target, conflict error) {
	revs := make([]store.Revision, len(drafts))
	ins := make([]*inputs, len(ms))
	for i, m := range ms {
		revs[i], ins[i] = drafts[i], m.in
		if m.wrote {
			if m.settled == "" {
				return
			}
			revs[i].ResourceVersion = m.settled
		}
	}
	r.remember(v, up, revs, ins, targets, conflict)
}

// reconcilePublished handles a downstream whose newest owned revision is
// published: un-propose its deletion, upgrade it when its upstream moved,
// edit it when the mutations changed.
func (r *Reconciler) reconcilePublished(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, pub store.Revision) ([]target, error) {
	if pub.Lifecycle == store.DeletionProposed { // the target is wanted again
		pub.Lifecycle = store.Published
		if err := r.porch().Update(ctx, pub); err != nil {
			return nil, fmt.Errorf("withdrawing the proposed deletion of %s: %w", pub.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("withdrew the proposed deletion", "revision", pub.Name)
		r.events().Normal(v, EventDeletionWithdrawn, "withdrew the proposed deletion of %s: it is wanted again", pub.Name)
	}
	if targets, ok, err := r.resolveDrift(ctx, v, up, pub); ok || err != nil {
		return targets, err
	}
	if pub.Lock != nil && !pub.Lock.Matches(*up) {
		old, err := r.lockedUpstream(ctx, v, pub.Lock)
		if err != nil {
			return nil, err
		}
		draft, err := r.createDraft(ctx, v, store.Task{Type: store.Upgrade, OldUpstream: old.Name, NewUpstream: up.Name, Local: pub.Name})
		if err != nil {
			return nil, err
		}
		u := &upgradeDraft{r: r, ctx: ctx, v: v, pub: pub, old: old, up: up, fresh: true}
		targets, err := r.mutateNewWith(ctx, v, up, draft, store.LockFor(*up), u.work())
		u.named(draft.Name, targets)
		return targets, err
	}
	if t, ok, conflict := r.unchanged(ctx, v, up, []store.Revision{pub}); ok {
		return t, conflict
	}
	res, err := r.porch().GetResources(ctx, v.Namespace, pub.Name)
	if err != nil {
		return nil, err
	}
	out, in, err := r.runChain(ctx, v, res.Files)
	if err != nil {
		return nil, err
	}
	if !out.Changed {
		targets := []target{{name: pub.Name}}
		r.remember(v, up, []store.Revision{pub}, []*inputs{in}, targets, nil)
		return targets, nil
	}
	draft, err := r.createDraft(ctx, v, store.Task{Type: store.Edit, Source: pub.Name})
	if err != nil {
		return nil, err
	}
	origins, _ := r.personsOrigins(v, res.Files, found(pub))
	return r.mutateNewWith(ctx, v, up, draft, store.LockFor(*up), work{origins: func(map[string]string) provenance.Origins { return origins }})
}

// lockedUpstream finds the published upstream revision a lock points at (a
// lock without a repository is taken to be in the variant's upstream one).
func (r *Reconciler) lockedUpstream(ctx context.Context, v *pvapi.PackageVariant, lock *store.Lock) (store.Revision, error) {
	repo := lock.Repository
	if repo == "" {
		repo = v.Spec.Upstream.Repo
	}
	revs, err := r.porch().ListRevisions(ctx, store.PackageKey{Namespace: v.Namespace, Repository: repo, Package: lock.Package})
	if err != nil {
		return store.Revision{}, err
	}
	for _, rev := range revs {
		if lock.Matches(rev) {
			return rev, nil
		}
	}
	return store.Revision{}, kit.Stallf(pvapi.ReasonLockedUpstreamNotFound, "cannot upgrade: the downstream's upstream %s %s (repository %q) no longer exists", lock.Package, lock.Ref, lock.Repository)
}

// ownedDownstream lists the variant's revisions of its downstream package:
// revisions it owns elsewhere (an old downstream) are pruned; with
// adoptExisting, the package's unowned revisions are adopted first. A
// removal the host holds back (kit.ErrRemovalHeld) does not stop the rest:
// it is held, a RemovalHeld outcome for the end of the reconcile.
func (r *Reconciler) ownedDownstream(ctx context.Context, v *pvapi.PackageVariant) (mine []store.Revision, held *kit.Partial, err error) {
	owned, err := r.porch().ListOwned(ctx, v.Namespace, string(v.UID))
	r.reclaimed(ctx, v)
	if err != nil {
		return nil, nil, settledOutcome(ctx, err)
	}
	key := downstreamKey(v)
	var errs []error
	var kept []string
	for _, rev := range owned {
		if rev.Key() == key {
			mine = append(mine, rev)
		} else if err := r.deleteOrOrphan(ctx, v, rev); errors.Is(err, kit.ErrRemovalHeld) {
			kept = append(kept, rev.Name)
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	if len(kept) > 0 {
		held = &kit.Partial{Reason: pvapi.ReasonRemovalHeld, Err: fmt.Errorf("the revisions of the previous downstream are kept (%s): %w", strings.Join(kept, ", "), kit.ErrRemovalHeld)}
	}
	if v.Spec.AdoptionPolicy != pv.AdoptionPolicyAdoptExisting {
		return mine, held, nil
	}
	all, err := r.porch().ListRevisions(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	for _, rev := range all {
		if rev.OwnedBy(string(v.UID)) {
			continue
		}
		rev.Owners = append(rev.Owners, ownerRef(v))
		rev.Labels = store.Overlay(rev.Labels, v.Spec.Labels)
		rev.Annotations = store.Overlay(rev.Annotations, v.Spec.Annotations)
		if err := r.porch().Update(ctx, rev); err != nil {
			return nil, nil, fmt.Errorf("adopting %s: %w", rev.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("adopted revision", "revision", rev.Name)
		r.events().Normal(v, EventRevisionAdopted, "adopted %s", rev.Name)
		mine = append(mine, rev)
	}
	return mine, held, nil
}

// unchanged returns the remembered targets (their names: what the run
// wrote is in the status, which loses nothing) when the inputs are the
// ones of a run that changed nothing, or the render conflict that run
// ended in.
func (r *Reconciler) unchanged(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision) ([]target, bool, error) {
	e, ok := r.mem.Memo(v.UID)
	if !ok {
		return nil, false, nil
	}
	_, fp, err := r.candidates(ctx, v.Namespace, e.Types)
	if err != nil || memory.Fingerprint(v, up, revs, fp) != e.Fingerprint {
		return nil, false, nil
	}
	out := make([]target, len(e.Names))
	for i, name := range e.Names {
		out[i] = target{name: name}
	}
	return out, true, e.Conflict
}

// remember records a run that changed nothing.
func (r *Reconciler) remember(v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision, ins []*inputs, targets []target, conflict error) {
	if len(ins) != 1 || ins[0] == nil {
		return // several drafts: no memo (rare; adoption)
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.name
	}
	r.mem.SetMemo(v.UID, memory.Memo{Fingerprint: memory.Fingerprint(v, up, revs, ins[0].candidates), Types: ins[0].types, Names: names, Conflict: conflict})
}

// ownerRef is the variant as the owner of its revisions.
func ownerRef(v *pvapi.PackageVariant) store.OwnerRef {
	return store.OwnerRef{APIVersion: pv.APIVersion, Kind: pv.Kind, Name: v.Name, UID: string(v.UID), Controller: true}
}
