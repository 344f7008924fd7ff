package packagevariant

import (
	"context"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// findUpstream picks the upstream revision (F2); nil when there is none yet.
// With workspaceName: that workspace, any lifecycle. With revision: that
// published revision, never a Draft. With neither: the latest published
// revision (so a newer publication is followed).
func (r *Reconciler) findUpstream(ctx context.Context, v *pvapi.PackageVariant) (*store.Revision, error) {
	u := v.Spec.Upstream
	revs, err := r.Store.ListRevisions(ctx, store.PackageKey{Namespace: v.Namespace, Repository: u.Repo, Package: u.Package})
	if err != nil {
		return nil, err
	}
	var best *store.Revision
	for i := range revs {
		rev := &revs[i]
		switch {
		case u.WorkspaceName != "":
			if rev.Workspace == u.WorkspaceName {
				return rev, nil
			}
		case u.Revision > 0:
			if rev.Revision == u.Revision && rev.Lifecycle.IsPublished() {
				return rev, nil
			}
		default:
			if rev.Lifecycle.IsPublished() && rev.Revision > 0 && (best == nil || rev.Revision > best.Revision) {
				best = rev
			}
		}
	}
	return best, nil
}
