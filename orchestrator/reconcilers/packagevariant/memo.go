package packagevariant

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/types"
)

// The mutations are a pure function of the variant's spec (its generation),
// the upstream revision, the downstream revisions' files (their resource
// versions) and the injected objects (theirs). When a run over exactly these
// inputs changed nothing, a later reconcile with the same fingerprint skips
// reading and mutating the package: a steady resync costs a few cached
// lookups per variant. Any change of any input changes the fingerprint, and
// the work is done again. The memo lives in the reconciler's memory: after a
// restart the first resync does the full work once.
type memo struct {
	mu sync.Mutex
	m  map[types.UID]memoEntry
}

type memoEntry struct {
	fingerprint string
	types       []krm.GVK
	targets     []target
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

// unchanged returns the remembered targets when the inputs are the ones of
// a run that changed nothing, or the render conflict that run ended in.
func (r *Reconciler) unchanged(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision) ([]target, bool, error) {
	r.memo.mu.Lock()
	e, ok := r.memo.m[v.UID]
	r.memo.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	_, fp, err := r.candidates(ctx, v.Namespace, e.types)
	if err != nil || fingerprint(v, up, revs, fp) != e.fingerprint {
		return nil, false, nil
	}
	out := make([]target, len(e.targets))
	for i, t := range e.targets {
		out[i] = target{name: t.name}
	}
	return out, true, e.conflict
}

// remember records a run that changed nothing.
func (r *Reconciler) remember(v *pvapi.PackageVariant, up *store.Revision, revs []store.Revision, ins []*inputs, targets []target, conflict error) {
	if len(ins) != 1 || ins[0] == nil {
		return // several drafts: no memo (rare; adoption)
	}
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	if r.memo.m == nil {
		r.memo.m = map[types.UID]memoEntry{}
	}
	r.memo.m[v.UID] = memoEntry{fingerprint: fingerprint(v, up, revs, ins[0].candidates), types: ins[0].types, targets: targets, conflict: conflict}
}

// forget drops a variant's memo (deleted).
func (r *Reconciler) forget(uid types.UID) {
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	delete(r.memo.m, uid)
	r.asked.forget(uid)
	r.created.forget(uid)
}

// created remembers, per variant, the draft it created last, until a
// mutation of it succeeded and the listing showed it: the controller lists revisions from its
// informer cache, which can lag behind a create, and Porch can lose a new
// draft's owner reference (its repository refresh got there first, or it
// was killed between writing the draft and its metadata). While the
// listing of owned revisions lacks the draft, the reconcile takes it back
// when the package shows it without owner, and otherwise waits and runs
// again (cacheBehind, a kit.Waiting), for at most createdTTL: a draft deleted meanwhile
// must not block the variant for ever.
type created struct {
	mu sync.Mutex
	m  map[types.UID]createdDraft
}

type createdDraft struct {
	pkg      store.PackageKey
	name     string
	at       time.Time
	mutated  bool // a mutation of it succeeded
	listed   bool // the owned revisions showed it once
	notFound int  // direct reads that found no such revision, in a row
}

const createdTTL = 2 * time.Minute

func (c *created) set(uid types.UID, pkg store.PackageKey, name string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.UID]createdDraft{}
	}
	c.m[uid] = createdDraft{pkg: pkg, name: name, at: now}
}

// missing returns the draft created for uid in package pkg when names (the
// owned revisions listed) lack it. It is remembered for as long as it is
// a draft the variant created last, listed or not: Porch can drop a draft's
// owner reference at any time (a repository refresh racing a write), an
// upgrade draft's too, and the variant must then take it back rather than
// create another. It is forgotten when it is of another package (the
// downstream changed), and by the caller once it is published, deleted or
// someone else's.
func (c *created) missing(uid types.UID, pkg store.PackageKey, names []string) (createdDraft, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[uid]
	if !ok {
		return createdDraft{}, false
	}
	if d.pkg != pkg {
		delete(c.m, uid)
		return createdDraft{}, false
	}
	if slices.Contains(names, d.name) {
		d.listed, d.notFound = true, 0
		c.m[uid] = d
		return d, false
	}
	return d, true
}

// gone records a direct read that found no revision d.name, and reports
// whether that settles it: twice in a row, or once for a draft that was
// listed before (deleted since). A draft Porch lost right after creating
// it is then created again within a second or so, not after createdTTL.
func (c *created) gone(uid types.UID, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[uid]
	if !ok || d.name != name {
		return true
	}
	d.notFound++
	c.m[uid] = d
	return d.listed || d.notFound >= 2
}

// settle records that a mutation of draft name succeeded.
func (c *created) settle(uid types.UID, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.m[uid]; ok && d.name == name {
		d.mutated = true
		c.m[uid] = d
	}
}

func (c *created) forget(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, uid)
}

// cacheBehind: the listing does not show the draft this variant just
// created; a Waiting outcome, so Reconcile runs again shortly, changing
// nothing meanwhile.
func cacheBehind(name string) *kit.Waiting {
	return kit.Wait(cacheRetry, "waiting for the cache to show draft %s", name)
}

// asked remembers, per variant, the draft whose create failed: Porch may
// still record it, without owner, and the variant then takes it back rather
// than create another (createDraft). It lives in memory, like the memo.
type asked struct {
	mu sync.Mutex
	m  map[types.UID]string
}

func (a *asked) get(uid types.UID) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	name, ok := a.m[uid]
	return name, ok
}

func (a *asked) set(uid types.UID, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[types.UID]string{}
	}
	a.m[uid] = name
}

func (a *asked) forget(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, uid)
}

// upstreams keeps the files of published upstream revisions, which never
// change, by name and resource version: a set fanning one upstream out to N
// variants reads it once for their prechecks, not N times. At most
// maxUpstreams are kept (the oldest go first).
type upstreams struct {
	mu    sync.Mutex
	files map[string]map[string]string
	order []string
}

const maxUpstreams = 64

func (u *upstreams) get(key string) (map[string]string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	f, ok := u.files[key]
	return f, ok
}

func (u *upstreams) put(key string, files map[string]string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.files == nil {
		u.files = map[string]map[string]string{}
	}
	if _, ok := u.files[key]; ok {
		return
	}
	if len(u.order) == maxUpstreams {
		delete(u.files, u.order[0])
		u.order = u.order[1:]
	}
	u.files[key] = files
	u.order = append(u.order, key)
}
