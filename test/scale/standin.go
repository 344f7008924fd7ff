package scale

import (
	"context"
	"math/rand"
	"sort"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
)

// Latencies are the stand-in's answer times by call (a call named
// "cache." is served by the controller's watch cache of PackageRevisions,
// as the Porch store serves listings: no request, no latency): medians measured on
// the real stack (docs/performance.md, "The controller on a real Porch":
// a PackageRevision create, a clone and a render, 0.84 s; a
// PackageRevisionResources update, a render and a commit, 0.82 s; an
// approval 348 ms; everything else 10 to 130 ms, the top of that range
// taken for writes, its middle for reads).
var Latencies = map[string]time.Duration{
	"read":            30 * time.Millisecond,
	"getResources":    60 * time.Millisecond,
	"create":          840 * time.Millisecond,
	"updateResources": 820 * time.Millisecond,
	"update":          130 * time.Millisecond,
	"approve":         348 * time.Millisecond,
	"delete":          130 * time.Millisecond,
}

// ns is the fleet's namespace.
const ns = "fleet"

// renders are the calls that render a package: Porch runs 20 at a time.
var renders = map[string]bool{"create": true, "updateResources": true, "approve": true}

// PorchRenders is how many renders Porch runs at once.
const PorchRenders = 20

// standin is Porch for the scale runs: the in-memory store, its upgrades
// made as Porch makes them (fakestore.MergeLocal), every call answered
// after its latency (times scale, jittered by a quarter either way, from
// a seeded source) and counted, renders 20 at a time, and when each
// downstream's upgrade began and its revision was published, for the
// rollout's per-child times.
type standin struct {
	*fakestore.Store
	scale  float64
	slots  chan struct{}
	mu     sync.Mutex
	rng    *rand.Rand
	calls  map[string]int
	begun  map[string]time.Time // downstream repository: its first upgrade draft since mark
	done   map[string]time.Time // downstream repository: its first approval since mark
	marked bool
}

func newStandin(seed int64) *standin {
	return &standin{Store: fakestore.New(), slots: make(chan struct{}, PorchRenders), rng: rand.New(rand.NewSource(seed)), calls: map[string]int{}}
}

// setScale sets the latency's multiplier (0: answers at once).
func (s *standin) setScale(f float64) {
	s.mu.Lock()
	s.scale = f
	s.mu.Unlock()
}

// wait counts a call and answers it after its latency, holding one of
// Porch's render slots for a render.
func (s *standin) wait(ctx context.Context, op string) func() {
	s.mu.Lock()
	s.calls[op]++
	d := time.Duration(float64(Latencies[op]) * s.scale * (0.75 + 0.5*s.rng.Float64()))
	s.mu.Unlock()
	if d <= 0 {
		return func() {}
	}
	if !renders[op] {
		sleep(ctx, d)
		return func() {}
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return func() {}
	}
	sleep(ctx, d)
	return func() { <-s.slots }
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// mark starts a rollout's per-child clock; resetCalls zeroes the counts.
func (s *standin) mark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.begun, s.done, s.marked = map[string]time.Time{}, map[string]time.Time{}, true
}

func (s *standin) resetCalls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.calls
	s.calls = map[string]int{}
	return out
}

// perChild are the marked rollout's children's times, from the upgrade
// draft's creation to the revision's publication, sorted.
func (s *standin) perChild() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for repo, end := range s.done {
		if start, ok := s.begun[repo]; ok {
			out = append(out, end.Sub(start))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (s *standin) ListRevisions(ctx context.Context, k store.PackageKey) ([]store.Revision, error) {
	defer s.wait(ctx, "cache.list")()
	return s.Store.ListRevisions(ctx, k)
}

func (s *standin) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	defer s.wait(ctx, "cache.listOwned")()
	return s.Store.ListOwned(ctx, namespace, uid)
}

func (s *standin) Read(ctx context.Context, namespace, name string) (store.Revision, error) {
	defer s.wait(ctx, "read")()
	return s.Store.Read(ctx, namespace, name)
}

func (s *standin) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	defer s.wait(ctx, "getResources")()
	return s.Store.GetResources(ctx, namespace, name)
}

func (s *standin) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	start := time.Now()
	defer s.wait(ctx, "create")()
	d, err := s.Store.CreateDraft(ctx, spec)
	if err != nil || spec.Task.Type != store.Upgrade {
		return d, err
	}
	s.mu.Lock()
	if _, ok := s.begun[spec.Repository]; s.marked && !ok {
		s.begun[spec.Repository] = start
	}
	s.mu.Unlock()
	// The merge reads through the engine, not this stand-in: one call.
	return s.Store.MergeLocal(ctx, spec, d)
}

func (s *standin) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	defer s.wait(ctx, "updateResources")()
	return s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
}

func (s *standin) Update(ctx context.Context, rev store.Revision) error {
	defer s.wait(ctx, "update")()
	return s.Store.Update(ctx, rev)
}

func (s *standin) Delete(ctx context.Context, namespace, name string) error {
	defer s.wait(ctx, "delete")()
	return s.Store.Delete(ctx, namespace, name)
}

func (s *standin) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	release := s.wait(ctx, "approve")
	rev, err := s.Store.ApproveRevision(ctx, namespace, name)
	release()
	if err == nil {
		s.mu.Lock()
		if _, ok := s.done[rev.Repository]; s.marked && !ok {
			s.done[rev.Repository] = time.Now()
		}
		s.mu.Unlock()
	}
	return rev, err
}

// publishedAt counts the downstream repositories with a revision
// published at the upstream's revision rev (its lock).
func (s *standin) publishedAt(rev int) int {
	repos := map[string]bool{}
	for _, r := range s.All(ns) {
		if r.Repository != "blueprints" && r.Lifecycle == store.Published && r.Lock.Revision() == rev {
			repos[r.Repository] = true
		}
	}
	return len(repos)
}
