package packagevariant

import (
	"context"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/upstream"
)

// findUpstream picks the upstream revision by pkg/upstream's rule (rule: upstream-selection); nil
// when there is none yet.
func (r *Reconciler) findUpstream(ctx context.Context, v *pvapi.PackageVariant) (*store.Revision, error) {
	u := v.Spec.Upstream
	revs, err := r.Store.ListRevisions(ctx, store.PackageKey{Namespace: v.Namespace, Repository: u.Repo, Package: u.Package})
	if err != nil {
		return nil, err
	}
	cands := make([]upstream.Candidate, len(revs))
	for i, rev := range revs {
		cands[i] = upstream.Candidate{Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle}
	}
	if i := upstream.Select(*u, cands); i >= 0 {
		return &revs[i], nil
	}
	return nil, nil
}
