package packagevariantset

import (
	"context"
	"fmt"

	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/upstream"
)

// addGroup reads the PackageGroup of the group package revision a grouped
// set selects (rule package-groups) from its group.yaml into w; a revision
// without one, or one that does not read, is left for Expand to name
// (UpstreamNotFound: the next revision of the group package brings the
// next reconcile). One read of the revision's files a reconcile.
func (r *Reconciler) addGroup(ctx context.Context, w *pvsexpand.World, ref *pv.Upstream, revs []store.Revision) error {
	cands := make([]upstream.Candidate, len(revs))
	for i, rev := range revs {
		cands[i] = upstream.Candidate{Workspace: rev.Workspace, Revision: rev.Revision, Lifecycle: rev.Lifecycle}
	}
	i := upstream.Select(*ref, cands)
	if i < 0 {
		return nil
	}
	return r.addGroupOf(ctx, w, revs[i])
}

// addGroupOf reads the PackageGroup of one group package revision into w.
func (r *Reconciler) addGroupOf(ctx context.Context, w *pvsexpand.World, rev store.Revision) error {
	res, err := r.Store.GetResources(ctx, rev.Namespace, rev.Name)
	if err != nil {
		// Not found too: Porch v1.5.3 lists a revision just pushed before
		// it serves its resources (measured: the set stalled for good on
		// a group's v3 it listed, e2e-porch TestGroupReleaseOnPorch). A
		// retried error, not a stall: no other event would come.
		return fmt.Errorf("reading the group's package revision %s: %w", rev.Name, err)
	}
	text, ok := res.Files[v1alpha2.GroupFile]
	if !ok {
		w.AddGroupError(rev.Name, "the package has no "+v1alpha2.GroupFile)
		return nil
	}
	g, msg := pvsexpand.ReadGroup(text)
	if msg != "" {
		w.AddGroupError(rev.Name, msg)
		return nil
	}
	w.AddGroup(rev.Name, g)
	return nil
}
