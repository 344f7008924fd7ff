package packagevariant

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// memory is all the reconciler remembers of its variants between
// reconciles (ARCHITECTURE.md: memory per object is one record, with a
// lifetime): one record per variant UID behind one lock, forgotten in one
// place (forget: on a delete event, on NotFound, when the variant is
// deleting), its notes of drafts the listing no longer shows pruned
// (prune). Nothing in it is a fact the status should hold: it is what
// saves work (the memo, the drift comparison) or what Porch's lagging
// listing hides (the tracker: tracker.go).
type memory struct {
	mu    sync.Mutex
	m     map[types.UID]*variantRecord
	names map[types.NamespacedName]types.UID // each variant's UID, by its name (seen)
}

// variantRecord is what the memory keeps of one variant.
type variantRecord struct {
	key types.NamespacedName // its name (seen)
	// The tracker's (tracker.go): the draft it created (or took back)
	// last, the draft whose create failed, notes of the drafts listed.
	created  *trackedDraft
	asked    string
	drafts   map[string]*draftNote
	phantoms int // how many of drafts are phantoms
	// memo is the last run that changed nothing (memo.go).
	memo *memoEntry
	// drift is the last content comparison (drift.go).
	drift *driftEntry
	// patched is the variant's resourceVersion after the status patch of
	// its last reconcile: a cache that serves another is read past
	// (fresh), so that no reconcile derives its facts from a status older
	// than its own last write.
	patched string
}

// rec is uid's record, made when create is true (nil otherwise when there
// is none); the caller holds mu.
func (t *memory) rec(uid types.UID, create bool) *variantRecord {
	r := t.m[uid]
	if r == nil && create {
		if t.m == nil {
			t.m = map[types.UID]*variantRecord{}
		}
		r = &variantRecord{}
		t.m[uid] = r
	}
	return r
}

// note is the note on uid's draft, made when create is true (nil otherwise
// when there is none); the caller holds mu.
func (t *memory) note(uid types.UID, draft string, create bool) *draftNote {
	r := t.rec(uid, create)
	if r == nil {
		return nil
	}
	n := r.drafts[draft]
	if n == nil && create {
		if r.drafts == nil {
			r.drafts = map[string]*draftNote{}
		}
		n = &draftNote{}
		r.drafts[draft] = n
	}
	return n
}

// forget drops everything remembered of a variant.
func (t *memory) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.m[uid]; r != nil && t.names[r.key] == uid {
		delete(t.names, r.key)
	}
	delete(t.m, uid)
}

// prune drops the notes of a variant's drafts the listing (names) no
// longer shows: a long-lived variant's memory does not grow with every
// draft it ever wrote.
func (t *memory) prune(uid types.UID, names []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.rec(uid, false)
	if r == nil || len(r.drafts) == 0 {
		return
	}
	listed := make(map[string]bool, len(names))
	for _, n := range names {
		listed[n] = true
	}
	for name, n := range r.drafts {
		if !listed[name] {
			if n.phantom {
				r.phantoms--
			}
			delete(r.drafts, name)
		}
	}
}

// setPatched records the variant's version after its status patch ("":
// not patched, the version read stands).
func (t *memory) setPatched(uid types.UID, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).patched = version
}

// lastPatched is the version setPatched recorded ("" when none).
func (t *memory) lastPatched(uid types.UID) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil {
		return r.patched
	}
	return ""
}

// size is how many variants and draft notes the memory holds.
func (t *memory) size() (variants, notes int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.m {
		notes += len(r.drafts)
	}
	return len(t.m), notes
}

// seen binds a variant's name to its UID: a reconcile that finds the name
// gone (NotFound) forgets the record (forgetName); a name that comes back
// with another UID (deleted and made again) forgets the old one's.
func (t *memory) seen(key types.NamespacedName, uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names == nil {
		t.names = map[types.NamespacedName]types.UID{}
	}
	if old, ok := t.names[key]; ok && old != uid {
		delete(t.m, old)
	}
	t.names[key] = uid
	t.rec(uid, true).key = key
}

// forgetName forgets the variant of that name (NotFound).
func (t *memory) forgetName(key types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if uid, ok := t.names[key]; ok {
		delete(t.m, uid)
		delete(t.names, key)
	}
}

// MemorySize is how many variants the reconciler remembers, and how many
// notes of their drafts (issue 61 #2: bounded by the variants and their
// listed drafts; make soak checks it).
func (r *Reconciler) MemorySize() (variants, notes int) { return r.mem.size() }
