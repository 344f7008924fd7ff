package memory

import (
	"context"
	"sync"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// Fake is the in-memory store for tests and benchmarks: the engine (Store,
// whose helpers Publish, Approve, Files, AddRepository and SetRenderer it
// keeps) plus what only tests need: every call counted, faults injected (an
// error, a conflict, or a change that succeeds and then reports a timeout),
// a revision's files changed behind the orchestrator's back, and a
// client.Client view for Porch's own reconcilers (client.go).
type Fake struct {
	*Store
	mu     sync.Mutex
	calls  map[string]int
	faults []Fault
}

var _ store.Store = (*Fake)(nil)

// NewFake returns an empty fake store.
func NewFake() *Fake { return &Fake{Store: New(), calls: map[string]int{}} }

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
func (f *Fake) Inject(flt Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if flt.Times == 0 {
		flt.Times = 1
	}
	f.faults = append(f.faults, flt)
}

// fault counts a call of op and returns its fault, if any.
func (f *Fake) fault(op string) *Fault {
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
func (f *Fake) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.calls))
	for k, v := range f.calls {
		out[k] = v
	}
	return out
}

// Writes counts the calls that change something.
func (f *Fake) Writes() int {
	c := f.Calls()
	return c[OpCreate] + c[OpUpdateResources] + c[OpUpdate] + c[OpDelete]
}

// ResetCalls zeroes the call counts.
func (f *Fake) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = map[string]int{}
}

// call runs op on the engine under its fault, if any: a fault without After
// fails the call before it runs; with After, a call that succeeded reports
// the fault's error.
func call[T any](f *Fake, op string, run func() (T, error)) (T, error) {
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
func (f *Fake) ListRevisions(ctx context.Context, k store.PackageKey) ([]store.Revision, error) {
	return call(f, OpList, func() ([]store.Revision, error) { return f.Store.ListRevisions(ctx, k) })
}

// ListOwned implements store.Store.
func (f *Fake) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	return call(f, OpListOwned, func() ([]store.Revision, error) { return f.Store.ListOwned(ctx, namespace, uid) })
}

// CreateDraft implements store.Store.
func (f *Fake) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
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
func (f *Fake) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	return call(f, OpGetResources, func() (store.Resources, error) { return f.Store.GetResources(ctx, namespace, name) })
}

// UpdateResourcesRendered implements store.Rendering, counted and faulted
// as UpdateResources.
func (f *Fake) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
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
func (f *Fake) UpdateResources(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, error) {
	return call(f, OpUpdateResources, func() (store.RenderStatus, error) { return f.Store.UpdateResources(ctx, namespace, name, res) })
}

// Update implements store.Store.
func (f *Fake) Update(ctx context.Context, rev store.Revision) error {
	_, err := call(f, OpUpdate, func() (struct{}, error) { return struct{}{}, f.Store.Update(ctx, rev) })
	return err
}

// Delete implements store.Store.
func (f *Fake) Delete(ctx context.Context, namespace, name string) error {
	_, err := call(f, OpDelete, func() (struct{}, error) { return struct{}{}, f.Store.Delete(ctx, namespace, name) })
	return err
}

// SetFiles replaces a revision's files behind the orchestrator's back (a
// user's edit, for tests), whatever its lifecycle.
func (f *Fake) SetFiles(namespace, name string, files map[string]string) {
	f.Store.mu.Lock()
	defer f.Store.mu.Unlock()
	if e, ok := f.Store.revs[key(namespace, name)]; ok {
		e.files = copyFiles(files)
		e.rev.ResourceVersion = f.Store.nextVersion()
	}
}
