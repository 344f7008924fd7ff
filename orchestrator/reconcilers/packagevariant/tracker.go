package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/apimachinery/pkg/types"
)

// The tracker is the part of a variant's memory (memory.go) that remembers
// the drafts it asked Porch for that the listing of its owned revisions
// may not show: the controller lists revisions from its informer cache,
// which can lag behind a create, and Porch can lose a new draft's owner
// reference (its repository refresh got there first, or it was killed
// between writing the draft and its metadata), or record a draft whose
// create failed, without owner.
//
// Its one question is observe: given the owned revisions listed, what of
// the draft the variant created last? Present (or none to track), wait
// for the cache, reclaim it (it is there without owner), or lost (gone for
// good, published, someone else's: create again if need be).

// draftNote is what the memory keeps of one of a variant's drafts the
// listing shows, pruned when the listing no longer shows it.
type draftNote struct {
	// phantom: the listing shows the draft but it does not exist: Porch
	// lost it after creating it, and the informer cache, told nothing,
	// lists it still. It is left out of the listing.
	phantom bool
	// unread is when the listed draft was first read NotFound, until it
	// reads again or is taken for a phantom (phantomAfter); zero: not.
	unread time.Time
}

// phantomAfter is how long a listed draft must read NotFound, directly,
// before it is taken for lost. Porch v1.5.3 drops a draft it has just
// created from its cache when a repository refresh that listed the
// repository before the create finishes after it, and shows it again at
// its next refresh (a write to the repository or the periodic sync); a
// draft taken for lost sooner is made twice (e2e-porch
// TestDeletionPolicies, three variants cloning into one repository: the
// first reading NotFound, the second a second later, packagevariant-2
// beside a packagevariant-1 that came back).
const phantomAfter = time.Minute

// phantomRetry is how often a draft that reads NotFound is read again.
const phantomRetry = 2 * time.Second

// unreadable is the verdict on a listed draft a direct read found not
// there, at now: how long it has read so, since the first such read, and
// whether it is lost (phantomAfter passed: from now on it is a phantom,
// left out of the listing).
func (t *memory) unreadable(uid types.UID, draft string, now time.Time) (waited time.Duration, lost bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.note(uid, draft, true)
	if n.unread.IsZero() {
		n.unread = now
	}
	if waited = now.Sub(n.unread); waited >= phantomAfter {
		if !n.phantom {
			t.rec(uid, false).phantoms++
		}
		n.phantom, n.unread = true, time.Time{}
		return waited, true
	}
	return waited, false
}

// readable records that a draft read again.
func (t *memory) readable(uid types.UID, draft string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.note(uid, draft, false); n != nil {
		n.unread = time.Time{}
	}
}

// real leaves the known phantoms out of a listing.
func (t *memory) real(uid types.UID, revs []store.Revision) []store.Revision {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(uid, false)
	if r == nil || r.phantoms == 0 {
		return revs // the steady case: nothing to leave out, nothing allocated
	}
	var out []store.Revision
	for _, rev := range revs {
		if n := r.drafts[rev.Name]; n == nil || !n.phantom {
			out = append(out, rev)
		}
	}
	return out
}

// trackedDraft is the draft a variant created last.
type trackedDraft struct {
	pkg      store.PackageKey
	name     string
	at       time.Time
	listed   bool // the owned revisions showed it once
	notFound int  // direct reads that found no such revision, in a row
}

// createdTTL is how long a created draft the listing does not show is
// waited for: a draft deleted meanwhile must not block the variant for
// ever.
const createdTTL = 2 * time.Minute

// verdict is what observe says of the tracked draft.
type verdict int

const (
	present  verdict = iota // listed, or nothing tracked: go on
	wait                    // Porch does not show it yet: reconcile again shortly
	reclaim                 // in the package without owner: take it back
	unlisted                // the variant's, read directly: the listing lags; go on with it
	lost                    // gone for good, published or someone else's: forgotten
)

// read reads a revision directly, past the cache (store.Store.Read).
type read func(name string) (store.Revision, error)

// observe judges the draft created last for uid in package pkg against
// names, the owned revisions listed; the revision is the draft read
// directly (to reclaim, or to go on with), or, to wait for, its name.
// A draft missing from the listing is read directly (rule: listing-lags):
//   - the variant's (a draft, or published since): unlisted. The informer
//     cache can miss a revision for long (Porch v1.5.3 does not always
//     send the watch event: e2e-porch saw a variant wait on a draft that
//     existed until it gave it up and made another); the variant goes on
//     with what it read, and reads it directly until the listing shows it;
//   - without owner and not published: reclaimed;
//   - not found: waited for while younger than createdTTL unless direct
//     reads settle that it is gone (twice in a row, or once for a draft
//     listed before: deleted since);
//   - otherwise (published, someone else's, too old): lost.
//
// A tracked draft of another package (the downstream changed) is forgotten.
func (t *memory) observe(uid types.UID, pkg store.PackageKey, names []string, now time.Time, get read) (verdict, store.Revision, error) {
	d, missing := t.missing(uid, pkg, names)
	if !missing {
		return present, store.Revision{}, nil
	}
	rev, err := get(d.name)
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return present, store.Revision{}, err
	case err == nil && rev.OwnedBy(string(uid)):
		return unlisted, rev, nil
	case err == nil && !rev.Lifecycle.IsPublished() && len(rev.Owners) == 0:
		return reclaim, rev, nil
	case err != nil && now.Sub(d.at) < createdTTL && !t.gone(uid, d.name):
		return wait, store.Revision{Name: d.name}, nil
	}
	t.mu.Lock()
	if r := t.rec(uid, false); r != nil {
		r.created = nil // a create that failed since stays asked for
	}
	t.mu.Unlock()
	return lost, store.Revision{}, nil
}

// last is the draft created last for uid, if any.
func (t *memory) last(uid types.UID) (trackedDraft, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil && r.created != nil {
		return *r.created, true
	}
	return trackedDraft{}, false
}

// missing returns the draft created for uid in package pkg when names lack
// it. It is remembered for as long as it is the draft the variant created
// last, listed or not: Porch can drop a draft's owner reference at any
// time (a repository refresh racing a write), an upgrade draft's too, and
// the variant must then take it back rather than create another.
func (t *memory) missing(uid types.UID, pkg store.PackageKey, names []string) (trackedDraft, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(uid, false)
	if r == nil || r.created == nil {
		return trackedDraft{}, false
	}
	d := r.created
	if d.pkg != pkg {
		r.created = nil
		return trackedDraft{}, false
	}
	if slices.Contains(names, d.name) {
		d.listed, d.notFound = true, 0
		return *d, false
	}
	return *d, true
}

// gone records a direct read that found no revision name, and reports
// whether that settles it: twice in a row, or once for a draft that was
// listed before. A draft Porch lost right after creating it is then
// created again within a second or so, not after createdTTL.
func (t *memory) gone(uid types.UID, name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(uid, false)
	if r == nil || r.created == nil || r.created.name != name {
		return true
	}
	d := r.created
	d.notFound++
	return d.listed || d.notFound >= 2
}

// didCreate records the draft a variant created (or took back); the
// create it asked for is no longer pending.
func (t *memory) didCreate(uid types.UID, pkg store.PackageKey, name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(uid, true)
	r.created, r.asked = &trackedDraft{pkg: pkg, name: name, at: now}, ""
}

// didAsk records a create that failed: Porch may still record the draft,
// without owner, and the variant then takes it back (createDraft).
func (t *memory) didAsk(uid types.UID, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).asked = name
}

// askedFor is the draft whose create failed, if any.
func (t *memory) askedFor(uid types.UID) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil && r.asked != "" {
		return r.asked, true
	}
	return "", false
}

// cacheBehind: Porch does not show the draft this variant just created;
// a Waiting outcome, so Reconcile runs again shortly, changing nothing
// meanwhile.
func cacheBehind(name string) *kit.Waiting {
	return kit.Wait(cacheRetry, "waiting for Porch to show draft %s", name)
}

// emptyDraft deals with a draft that holds no file at all (store.
// ErrNoResources; e2e-porch TestShardsOnPorch: three controllers creating
// drafts in one repository at once, Porch v1.5.3 answered one create 500,
// its rollback could not delete the draft's branch, and it listed the
// draft with no resources for good; the variant retried reading it until
// the test gave up). Only the draft this variant asked for last (created,
// or taken back after a failed create) is its to delete: it holds nothing
// of anyone's, so it is deleted, said in a Warning Event, forgotten, and
// the next reconcile makes the downstream again. Any other is an error that
// names it, for a person.
func (r *Reconciler) emptyDraft(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, cause error) error {
	last, ok := r.mem.last(v.UID)
	asked, _ := r.mem.askedFor(v.UID)
	mine := d.Lifecycle == store.Draft && (len(d.Owners) == 0 || d.OwnedBy(string(v.UID))) && ((ok && last.name == d.Name) || asked == d.Name)
	if !mine {
		return fmt.Errorf("%w: it is not the draft this variant made last, so it is left for a person to delete (porchctl rpkg del %s)", cause, d.Name)
	}
	if err := r.Store.Delete(ctx, d.Namespace, d.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w; deleting it to make it again: %v", cause, err)
	}
	r.mem.forgetDraft(v.UID, d.Name)
	r.events().Warning(v, EventEmptyDraftDeleted, "draft %s holds no file (Porch's create of it failed half-way): deleted; the downstream is made again", d.Name)
	ctrl.LoggerFrom(ctx).Info("deleted an empty draft the variant asked for", "revision", d.Name)
	return kit.Wait(cacheRetry, "draft %s held no file (Porch's create of it failed half-way): deleted, made again", d.Name)
}

// forgetDraft drops the draft created or asked for, when it is name.
func (t *memory) forgetDraft(uid types.UID, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil {
		if r.created != nil && r.created.name == name {
			r.created = nil
		}
		if r.asked == name {
			r.asked = ""
		}
	}
}
