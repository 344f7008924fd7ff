package packagevariant

import (
	"sync"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	"k8s.io/apimachinery/pkg/types"
)

// memory is all the reconciler remembers of its variants between
// reconciles (ARCHITECTURE.md: memory per object is one record, with a
// lifetime): one record per variant UID behind one lock, forgotten in one
// place (forget: on a delete event, on NotFound, when the variant is
// deleting), its notes of drafts the listing no longer shows pruned
// (prune). Nothing in it is a fact the status should hold: it is what
// saves work (the memo, the drift comparison). What Porch's lagging
// listing hides is the settled store's (orchestrator/store/settled).
type memory struct {
	mu    sync.Mutex
	m     map[types.UID]*variantRecord
	names map[types.NamespacedName]types.UID // each variant's UID, by its name (seen)
}

// variantRecord is what the memory keeps of one variant.
type variantRecord struct {
	key types.NamespacedName // its name (seen)
	// memo is the last run that changed nothing (memo.go).
	memo *memoEntry
	// drift is the last content comparison (package observe).
	drift *observe.Entry
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

// forget drops everything remembered of a variant.
func (t *memory) forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.m[uid]; r != nil && t.names[r.key] == uid {
		delete(t.names, r.key)
	}
	delete(t.m, uid)
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

// size is how many variants the memory holds.
func (t *memory) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// seen binds a variant's name to its UID: a reconcile that finds the name
// gone (NotFound) forgets the record (forgetName); a name that comes back
// with another UID (deleted and made again) forgets the old one's.
// It returns the old UID it forgot ("" when none).
func (t *memory) seen(key types.NamespacedName, uid types.UID) (forgot types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names == nil {
		t.names = map[types.NamespacedName]types.UID{}
	}
	if old, ok := t.names[key]; ok && old != uid {
		delete(t.m, old)
		forgot = old
	}
	t.names[key] = uid
	t.rec(uid, true).key = key
	return forgot
}

// forgetName forgets the variant of that name (NotFound), and says which
// UID it had.
func (t *memory) forgetName(key types.NamespacedName) (types.UID, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	uid, ok := t.names[key]
	if ok {
		delete(t.m, uid)
		delete(t.names, key)
	}
	return uid, ok
}

// MemorySize is how many variants the reconciler remembers, and how many
// notes of drafts its settled store holds (bounded by the variants and
// their listed drafts; make soak checks it).
func (r *Reconciler) MemorySize() (variants, notes int) {
	_, notes = r.porch().Size()
	return r.mem.size(), notes
}

// Drift is the variant's last content comparison, if any (observe.Memory).
func (t *memory) Drift(uid types.UID) (observe.Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil && r.drift != nil {
		return *r.drift, true
	}
	return observe.Entry{}, false
}

// SetDrift records the variant's content comparison (observe.Memory).
func (t *memory) SetDrift(uid types.UID, e observe.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).drift = &e
}
