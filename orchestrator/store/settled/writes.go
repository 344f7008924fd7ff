package settled

import (
	"context"
	"sync/atomic"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// A reconcile that reuses a listing it made (rule listing-reused) asks the
// store whether anything was written since: CountWrites returns a context
// whose writes through this store are counted, and the count. Every call
// that may change a revision or its files counts, whatever it answers (a
// write that failed may have landed), so a count of zero means the listing
// is still what the store would list (a listing that takes back an
// ownerless draft writes, and counts); writes made under another context
// (another reconcile) are not counted, and are not the listing's owner's.
func CountWrites(ctx context.Context) (context.Context, func() int64) {
	n := new(atomic.Int64)
	return context.WithValue(ctx, writesKey{}, n), n.Load
}

type writesKey struct{}

func wrote(ctx context.Context) {
	if n, ok := ctx.Value(writesKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// Update implements store.Store, counted (CountWrites).
func (s *Store) Update(ctx context.Context, rev store.Revision) error {
	wrote(ctx)
	return s.Store.Update(ctx, rev)
}

// Delete implements store.Store, counted (CountWrites).
func (s *Store) Delete(ctx context.Context, namespace, name string) error {
	wrote(ctx)
	return s.Store.Delete(ctx, namespace, name)
}

// ApproveRevision implements store.Store, counted (CountWrites).
func (s *Store) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	wrote(ctx)
	return s.Store.ApproveRevision(ctx, namespace, name)
}
