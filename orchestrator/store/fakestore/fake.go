// Package fakestore holds the store's test doubles: Store, the in-memory engine
// with call counts and fault injection, and Client, a client.Client that
// serves the engine's revisions as Porch's API does. Tests and benchmarks
// use them; nothing in pvctl or the controller does.
package fakestore

import (
	"context"
	"maps"
	"sync"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
)

// Store is the in-memory store for tests and benchmarks: the engine
// (memory.Store, whose helpers Publish, Approve, Files, SetFiles,
// AddRepository and SetRenderer it keeps) plus what only tests need: every
// call counted, faults injected (an error, a conflict, or a change that
// succeeds and then reports a timeout), and a client.Client view for
// Porch's own reconcilers (client.go).
type Store struct {
	*memory.Store
	mu     sync.Mutex
	calls  map[string]int
	faults []Fault
}

var _ store.Store = (*Store)(nil)

// New returns an empty fake store.
func New() *Store { return &Store{Store: memory.New(), calls: map[string]int{}} }

// Operations, as counted and as faults name them.
const (
	OpList            = "list"
	OpListOwned       = "listOwned"
	OpCreate          = "create"
	OpGetResources    = "getResources"
	OpUpdateResources = "updateResources"
	OpUpdate          = "update"
	OpDelete          = "delete"
)

// Fault makes the next Times calls of Op fail with Err; with After, the
// operation is carried out first (a create that timed out but succeeded).
// Ownerless (a create, with After) makes the draft without its owners,
// labels and annotations: Porch's background repository refresh recorded
// the new draft before the creator's metadata landed, and the create failed.
type Fault struct {
	Op        string
	Err       error
	After     bool
	Ownerless bool
	Times     int
	Skip      int // the first Skip calls of Op pass
}

// Inject adds a fault.
func (f *Store) Inject(flt Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if flt.Times == 0 {
		flt.Times = 1
	}
	f.faults = append(f.faults, flt)
}

// fault counts a call of op and returns its fault, if any.
func (f *Store) fault(op string) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	for i := range f.faults {
		if flt := &f.faults[i]; flt.Op == op && flt.Times > 0 {
			if flt.Skip > 0 {
				flt.Skip--
				return nil
			}
			flt.Times--
			c := *flt
			return &c
		}
	}
	return nil
}

// Calls returns how many times each operation was called.
func (f *Store) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.calls))
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// Writes counts the calls that change something.
func (f *Store) Writes() int {
	c := f.Calls()
	return c[OpCreate] + c[OpUpdateResources] + c[OpUpdate] + c[OpDelete]
}

// ResetCalls zeroes the call counts.
func (f *Store) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[string]int{}
}

// call runs op on the engine under its fault, if any: a fault without After
// fails the call before it runs; with After, a call that succeeded reports
// the fault's error.
func call[T any](f *Store, op string, run func() (T, error)) (T, error) {
	var zero T
	flt := f.fault(op)
	if flt != nil && !flt.After {
		return zero, flt.Err
	}
	v, err := run()
	if err == nil && flt != nil {
		return zero, flt.Err
	}
	return v, err
}

// ListRevisions implements store.Store.
func (f *Store) ListRevisions(ctx context.Context, k store.PackageKey) ([]store.Revision, error) {
	return call(f, OpList, func() ([]store.Revision, error) { return f.Store.ListRevisions(ctx, k) })
}

// ListOwned implements store.Store.
func (f *Store) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	return call(f, OpListOwned, func() ([]store.Revision, error) { return f.Store.ListOwned(ctx, namespace, uid) })
}

// CreateDraft implements store.Store.
func (f *Store) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	flt := f.fault(OpCreate)
	if flt != nil && !flt.After {
		return store.Revision{}, flt.Err
	}
	if flt != nil && flt.Ownerless {
		spec.Owners, spec.Labels, spec.Annotations = nil, nil, nil
	}
	rev, err := f.Store.CreateDraft(ctx, spec)
	if err == nil && flt != nil {
		return store.Revision{}, flt.Err
	}
	return rev, err
}

// GetResources implements store.Store.
func (f *Store) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	return call(f, OpGetResources, func() (store.Resources, error) { return f.Store.GetResources(ctx, namespace, name) })
}

// UpdateResourcesRendered implements store.Store, counted and faulted
// as UpdateResources.
func (f *Store) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	type answer struct {
		status store.RenderStatus
		after  store.Resources
	}
	a, err := call(f, OpUpdateResources, func() (answer, error) {
		rs, after, err := f.Store.UpdateResourcesRendered(ctx, namespace, name, res)
		return answer{rs, after}, err
	})
	return a.status, a.after, err
}

// UpdateResources implements store.Store.
func (f *Store) UpdateResources(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, error) {
	return call(f, OpUpdateResources, func() (store.RenderStatus, error) { return f.Store.UpdateResources(ctx, namespace, name, res) })
}

// Update implements store.Store.
func (f *Store) Update(ctx context.Context, rev store.Revision) error {
	_, err := call(f, OpUpdate, func() (struct{}, error) { return struct{}{}, f.Store.Update(ctx, rev) })
	return err
}

// Delete implements store.Store.
func (f *Store) Delete(ctx context.Context, namespace, name string) error {
	_, err := call(f, OpDelete, func() (struct{}, error) { return struct{}{}, f.Store.Delete(ctx, namespace, name) })
	return err
}

// MergeLocal makes upgrade draft d as Porch's upgrade makes it: the local
// revision's files (the variant's mutations and record) with the new
// upstream's new files merged in (this store's own upgrade takes the new
// upstream alone), and returns it as made, as Porch's create answers. For
// tests whose faults depend on Porch's shape.
func (f *Store) MergeLocal(ctx context.Context, spec store.DraftSpec, d store.Revision) (store.Revision, error) {
	local, err := f.GetResources(ctx, spec.Namespace, spec.Task.Local)
	if err != nil {
		return d, err
	}
	up, err := f.GetResources(ctx, spec.Namespace, spec.Task.NewUpstream)
	if err != nil {
		return d, err
	}
	files := maps.Clone(local.Files)
	for name, text := range up.Files {
		if _, ok := files[name]; !ok {
			files[name] = text
		}
	}
	f.SetFiles(spec.Namespace, d.Name, files)
	// Porch's create answers with the draft as made.
	return f.Store.Read(ctx, spec.Namespace, d.Name)
}
