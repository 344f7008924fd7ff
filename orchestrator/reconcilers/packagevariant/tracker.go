package packagevariant

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/apimachinery/pkg/types"
)

// tracker remembers, per variant, the drafts it asked Porch for that the
// listing of its owned revisions may not show: the controller lists
// revisions from its informer cache, which can lag behind a create, and
// Porch can lose a new draft's owner reference (its repository refresh got
// there first, or it was killed between writing the draft and its
// metadata), or record a draft whose create failed, without owner. It
// lives in memory, like the memo.
//
// Its one question is observe: given the owned revisions listed, what of
// the draft the variant created last? Present (or none to track), wait
// for the cache, reclaim it (it is there without owner), or lost (gone for
// good, published, someone else's: create again if need be).
type tracker struct {
	mu      sync.Mutex
	created map[types.UID]trackedDraft
	asked   map[types.UID]string // the draft whose create failed, by name
	// written is the digest of each draft as the variant last wrote it
	// (DownstreamTarget.LastWrite), so that a status patch lost after the
	// write (a conflict) does not lose it.
	written map[types.UID]map[string]string
	// phantoms are owned drafts the listing shows that do not exist:
	// Porch lost them after creating them, and the informer cache, told
	// nothing, lists them still. They are left out of the listing.
	phantoms map[types.UID]map[string]bool
	// unread is when each listed draft was first read NotFound, until it
	// reads again or is taken for a phantom (phantomAfter).
	unread map[types.UID]map[string]time.Time
	// back are the drafts the variant itself moved from Proposed back to
	// Draft (an upgrade in place), until they are proposed again: not a
	// rejection, even when the status patch that recorded the move was
	// lost.
	back map[types.UID]map[string]bool
}

// movedBack records (on) or forgets (off) that the variant moved a draft
// back to Draft itself.
func (t *tracker) movedBack(uid types.UID, draft string, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !on {
		delete(t.back[uid], draft)
		return
	}
	inner(&t.back, uid)
	t.back[uid][draft] = true
}

// inner makes sure (*m)[uid] is a map, and returns it.
func inner[V any](m *map[types.UID]map[string]V, uid types.UID) map[string]V {
	if *m == nil {
		*m = map[types.UID]map[string]V{}
	}
	if (*m)[uid] == nil {
		(*m)[uid] = map[string]V{}
	}
	return (*m)[uid]
}

// wasMovedBack reports whether the variant moved the draft back itself.
func (t *tracker) wasMovedBack(uid types.UID, draft string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.back[uid][draft]
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

// unreadable records that a listed draft read NotFound at now and returns
// how long it has, since the first such read.
func (t *tracker) unreadable(uid types.UID, draft string, now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	inner(&t.unread, uid)
	first, ok := t.unread[uid][draft]
	if !ok {
		first = now
		t.unread[uid][draft] = now
	}
	return now.Sub(first)
}

// readable records that a draft read again.
func (t *tracker) readable(uid types.UID, draft string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.unread[uid], draft)
}

// phantom records a listed draft that does not exist.
func (t *tracker) phantom(uid types.UID, draft string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	inner(&t.phantoms, uid)
	t.phantoms[uid][draft] = true
	delete(t.unread[uid], draft)
}

// real leaves the known phantoms out of a listing.
func (t *tracker) real(uid types.UID, revs []store.Revision) []store.Revision {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.phantoms[uid]) == 0 {
		return revs
	}
	var out []store.Revision
	for _, r := range revs {
		if !t.phantoms[uid][r.Name] {
			out = append(out, r)
		}
	}
	return out
}

// wrote records the digest of a draft as the variant wrote it.
func (t *tracker) wrote(uid types.UID, draft, digest string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	inner(&t.written, uid)
	t.written[uid][draft] = digest
}

// lastWrite is the digest a draft had when the variant last wrote it in
// this process ("" when it did not).
func (t *tracker) lastWrite(uid types.UID, draft string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written[uid][draft]
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
func (t *tracker) observe(uid types.UID, pkg store.PackageKey, names []string, now time.Time, get read) (verdict, store.Revision, error) {
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
	delete(t.created, uid) // a create that failed since stays asked for
	t.mu.Unlock()
	return lost, store.Revision{}, nil
}

// last is the draft created last for uid, if any.
func (t *tracker) last(uid types.UID) (trackedDraft, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.created[uid]
	return d, ok
}

// missing returns the draft created for uid in package pkg when names lack
// it. It is remembered for as long as it is the draft the variant created
// last, listed or not: Porch can drop a draft's owner reference at any
// time (a repository refresh racing a write), an upgrade draft's too, and
// the variant must then take it back rather than create another.
func (t *tracker) missing(uid types.UID, pkg store.PackageKey, names []string) (trackedDraft, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.created[uid]
	if !ok {
		return trackedDraft{}, false
	}
	if d.pkg != pkg {
		delete(t.created, uid)
		return trackedDraft{}, false
	}
	if slices.Contains(names, d.name) {
		d.listed, d.notFound = true, 0
		t.created[uid] = d
		return d, false
	}
	return d, true
}

// gone records a direct read that found no revision name, and reports
// whether that settles it: twice in a row, or once for a draft that was
// listed before. A draft Porch lost right after creating it is then
// created again within a second or so, not after createdTTL.
func (t *tracker) gone(uid types.UID, name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.created[uid]
	if !ok || d.name != name {
		return true
	}
	d.notFound++
	t.created[uid] = d
	return d.listed || d.notFound >= 2
}

// didCreate records the draft a variant created (or took back); the
// create it asked for is no longer pending.
func (t *tracker) didCreate(uid types.UID, pkg store.PackageKey, name string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.created == nil {
		t.created = map[types.UID]trackedDraft{}
	}
	t.created[uid] = trackedDraft{pkg: pkg, name: name, at: now}
	delete(t.asked, uid)
}

// didAsk records a create that failed: Porch may still record the draft,
// without owner, and the variant then takes it back (createDraft).
func (t *tracker) didAsk(uid types.UID, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.asked == nil {
		t.asked = map[types.UID]string{}
	}
	t.asked[uid] = name
}

// askedFor is the draft whose create failed, if any.
func (t *tracker) askedFor(uid types.UID) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	name, ok := t.asked[uid]
	return name, ok
}

// forget drops what is tracked for a variant.
func (t *tracker) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.created, uid)
	delete(t.asked, uid)
	delete(t.written, uid)
	delete(t.phantoms, uid)
	delete(t.unread, uid)
	delete(t.back, uid)
}

// cacheBehind: Porch does not show the draft this variant just created;
// a Waiting outcome, so Reconcile runs again shortly, changing nothing
// meanwhile.
func cacheBehind(name string) *kit.Waiting {
	return kit.Wait(cacheRetry, "waiting for Porch to show draft %s", name)
}
