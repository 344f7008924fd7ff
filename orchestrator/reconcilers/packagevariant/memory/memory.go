// Package memory is all the PackageVariant reconciler remembers of its
// variants between reconciles (ARCHITECTURE.md: memory per object is one
// record, with a lifetime): one record per variant UID behind one lock,
// forgotten in one place (Forget: on a delete event, on NotFound, when the
// variant is deleting; Seen: a name that comes back with another UID).
// Nothing in it is a fact the status should hold: it is what saves work
// (the memo, the drift comparison) and the version the last reconcile
// left. What Porch's lagging listing hides is the settled store's
// (orchestrator/store/settled); the published upstreams' files, which
// never change, are an LRU of their own (Upstreams).
package memory

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/lru"
)

// Memory is the reconciler's memory of its variants; the zero value is
// empty and ready.
type Memory struct {
	mu    sync.Mutex
	m     map[types.UID]*record
	names map[types.NamespacedName]types.UID // each variant's UID, by its name (Seen)
}

// record is what the memory keeps of one variant.
type record struct {
	key   types.NamespacedName
	memo  *Memo
	drift *observe.Entry
	// patched is the variant's resourceVersion after the status patch of
	// its last reconcile: a cache that serves another is read past, so
	// that no reconcile derives its facts from a status older than its
	// own last write.
	patched string
}

// Memo is the last run over a variant that changed nothing. The mutations
// are a pure function of the variant's spec (its generation), the
// upstream revision, the downstream revisions' files (their resource
// versions) and the injected objects (theirs): a later reconcile with the
// same Fingerprint skips reading and mutating the package, so a steady
// resync costs a few cached lookups per variant. After a restart the
// first resync does the full work once.
type Memo struct {
	Fingerprint string
	Types       []krm.GVK // the injected kinds the run read
	Names       []string  // the targets' names
	// Conflict: the last write over these inputs was undone by Porch's
	// render; until an input changes, the variant stays stalled and
	// writes nothing.
	Conflict error
}

// Fingerprint is the inputs of a run: the variant's generation, the
// upstream's version, the downstream revisions' versions and the injected
// objects' (candidates).
func Fingerprint(v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision, candidates string) string {
	ids := make([]string, len(revs))
	for i, r := range revs {
		ids[i] = r.Name + "@" + r.ResourceVersion
	}
	sort.Strings(ids)
	return fmt.Sprintf("%d|%s@%s|%s|%s", v.Generation, up.Name, up.ResourceVersion, strings.Join(ids, ","), candidates)
}

// rec is uid's record, made when create is true (nil otherwise when there
// is none); the caller holds mu.
func (t *Memory) rec(uid types.UID, create bool) *record {
	r := t.m[uid]
	if r == nil && create {
		if t.m == nil {
			t.m = map[types.UID]*record{}
		}
		r = &record{}
		t.m[uid] = r
	}
	return r
}

// Forget drops everything remembered of a variant.
func (t *Memory) Forget(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.m[uid]; r != nil && t.names[r.key] == uid {
		delete(t.names, r.key)
	}
	delete(t.m, uid)
}

// SetPatched records the variant's version after its status patch ("":
// not patched, the version read stands).
func (t *Memory) SetPatched(uid types.UID, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).patched = version
}

// LastPatched is the version SetPatched recorded ("" when none).
func (t *Memory) LastPatched(uid types.UID) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil {
		return r.patched
	}
	return ""
}

// Size is how many variants the memory holds records of, and names of.
func (t *Memory) Size() (records, names int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m), len(t.names)
}

// Seen binds a variant's name to its UID: a reconcile that finds the name
// gone (NotFound) forgets the record (ForgetName); a name that comes back
// with another UID (deleted and made again) forgets the old one's. It
// returns the old UID it forgot ("" when none).
func (t *Memory) Seen(key types.NamespacedName, uid types.UID) (forgot types.UID) {
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

// ForgetName forgets the variant of that name (NotFound), and says which
// UID it had.
func (t *Memory) ForgetName(key types.NamespacedName) (types.UID, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	uid, ok := t.names[key]
	if ok {
		delete(t.m, uid)
		delete(t.names, key)
	}
	return uid, ok
}

// Memo is the variant's memo, if any.
func (t *Memory) Memo(uid types.UID) (Memo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil && r.memo != nil {
		return *r.memo, true
	}
	return Memo{}, false
}

// SetMemo records a run that changed nothing.
func (t *Memory) SetMemo(uid types.UID, m Memo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).memo = &m
}

// Drift is the variant's last content comparison, if any (observe.Memory).
func (t *Memory) Drift(uid types.UID) (observe.Entry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.rec(uid, false); r != nil && r.drift != nil {
		return *r.drift, true
	}
	return observe.Entry{}, false
}

// SetDrift records the variant's content comparison (observe.Memory).
func (t *Memory) SetDrift(uid types.UID, e observe.Entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rec(uid, true).drift = &e
}

// Upstreams keeps the files of published upstream revisions, which never
// change, by name and resource version: a set fanning one upstream out to
// N variants reads it once for their prechecks, not N times. At most
// maxUpstreams are kept, the least recently used going first (an LRU,
// safe for concurrent use; made on first use).
type Upstreams struct {
	once  sync.Once
	cache *lru.Cache
}

const maxUpstreams = 64

func (u *Upstreams) lru() *lru.Cache {
	u.once.Do(func() { u.cache = lru.New(maxUpstreams) })
	return u.cache
}

// Get is the files kept under key.
func (u *Upstreams) Get(key string) (map[string]string, bool) {
	f, ok := u.lru().Get(key)
	if !ok {
		return nil, false
	}
	return f.(map[string]string), true
}

// Put keeps files under key.
func (u *Upstreams) Put(key string, files map[string]string) { u.lru().Add(key, files) }
