package packagevariant

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/utils/lru"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/types"
)

// The mutations are a pure function of the variant's spec (its generation),
// the upstream revision, the downstream revisions' files (their resource
// versions) and the injected objects (theirs). When a run over exactly these
// inputs changed nothing, a later reconcile with the same fingerprint skips
// reading and mutating the package: a steady resync costs a few cached
// lookups per variant. Any change of any input changes the fingerprint, and
// the work is done again. The memo is part of the variant's memory
// (memory.go): after a restart the first resync does the full work once.
type memoEntry struct {
	fingerprint string
	types       []krm.GVK
	names       []string // the targets' names
	// conflict: the last write over these inputs was undone by Porch's
	// render (renderConflict); until an input changes, the variant stays
	// stalled and writes nothing.
	conflict error
}

func fingerprint(v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision, candidates string) string {
	ids := make([]string, len(revs))
	for i, r := range revs {
		ids[i] = r.Name + "@" + r.ResourceVersion
	}
	sort.Strings(ids)
	return fmt.Sprintf("%d|%s@%s|%s|%s", v.Generation, up.Name, up.ResourceVersion, strings.Join(ids, ","), candidates)
}

// unchanged returns the remembered targets (their names: what the run
// wrote is in the status, which loses nothing) when the inputs are the
// ones of a run that changed nothing, or the render conflict that run
// ended in.
func (r *Reconciler) unchanged(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision) ([]target, bool, error) {
	r.mem.mu.Lock()
	var e memoEntry
	rec := r.mem.rec(v.UID, false)
	ok := rec != nil && rec.memo != nil
	if ok {
		e = *rec.memo
	}
	r.mem.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	_, fp, err := r.candidates(ctx, v.Namespace, e.types)
	if err != nil || fingerprint(v, up, revs, fp) != e.fingerprint {
		return nil, false, nil
	}
	out := make([]target, len(e.names))
	for i, name := range e.names {
		out[i] = target{name: name}
	}
	return out, true, e.conflict
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
	r.mem.mu.Lock()
	defer r.mem.mu.Unlock()
	r.mem.rec(v.UID, true).memo = &memoEntry{fingerprint: fingerprint(v, up, revs, ins[0].candidates), types: ins[0].types, names: names, conflict: conflict}
}

// forget drops everything remembered of a variant (deleted, gone).
func (r *Reconciler) forget(uid types.UID) {
	r.mem.forget(uid)
	r.porch().Forget(string(uid))
}

// upstreams keeps the files of published upstream revisions, which never
// change, by name and resource version: a set fanning one upstream out to N
// variants reads it once for their prechecks, not N times. At most
// maxUpstreams are kept, the least recently used going first (an LRU,
// safe for concurrent use; made on first use).
type upstreams struct {
	once  sync.Once
	cache *lru.Cache
}

const maxUpstreams = 64

func (u *upstreams) lru() *lru.Cache {
	u.once.Do(func() { u.cache = lru.New(maxUpstreams) })
	return u.cache
}

func (u *upstreams) get(key string) (map[string]string, bool) {
	f, ok := u.lru().Get(key)
	if !ok {
		return nil, false
	}
	return f.(map[string]string), true
}

func (u *upstreams) put(key string, files map[string]string) { u.lru().Add(key, files) }

// porch is the variant's store, settled (orchestrator/store/settled):
// Porch's write outcomes read back, the drafts this process made and
// Porch does not list yet, the listed drafts it cannot find. One per
// reconciler, over Store as it is now (a test that swaps Store keeps
// what the settled store remembers).
func (r *Reconciler) porch() *settled.Store {
	r.storeMu.Lock()
	defer r.storeMu.Unlock()
	if r.settled == nil {
		r.settled = settled.New(r.Store, r.now)
	} else if !sameStore(r.settled.Store, r.Store) {
		r.settled.Store = r.Store
	}
	return r.settled
}

// sameStore compares two stores, false where they cannot be compared.
func sameStore(a, b store.Store) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
