package kit

import (
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// The one pair of conversions between the store's upstream lock and the
// lock a variant's status carries (status.downstreamTargets[].upstreamLock,
// rule child-status-contract): the variant writes it, its set reads it.

// StatusLock is a store lock as the status carries it (nil for nil).
func StatusLock(l *store.Lock) *pvapi.UpstreamLock {
	if l == nil {
		return nil
	}
	return &pvapi.UpstreamLock{Repo: l.Repository, Package: l.Package, Ref: l.Ref, Commit: l.Commit}
}

// StoreLock is a status's lock as the store's type (nil for nil: it
// matches nothing).
func StoreLock(u *pvapi.UpstreamLock) *store.Lock {
	if u == nil {
		return nil
	}
	return &store.Lock{Repository: u.Repo, Package: u.Package, Ref: u.Ref, Commit: u.Commit}
}
