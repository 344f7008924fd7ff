package packagevariantset

import (
	"context"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// undoProgress counts an undone rollout's children on their way back to
// its from revision (issue 57 #6: "undone: every child is pinned back"
// read the same before and after the undo's drafts were approved): of the
// children, those whose spec pins them to from and those done there,
// judged as a wave's children are (published and Ready at it, and
// healthy for a rollout with a health check), from the cached status: the
// counts change as children come back, each change one status write. A
// rollout not undone has none.
func (r *Reconciler) undoProgress(ctx context.Context, set client.Object, st *v1alpha2.RolloutStatus, children []string, revs []store.Revision, g gate) error {
	st.UndoProgress = nil
	if !st.Undone || st.From == nil {
		return nil
	}
	var from *store.Revision
	for i := range revs {
		if revs[i].Name == st.From.Name {
			from = &revs[i]
		}
	}
	if from == nil { // gone from the listing: nothing to count against
		return nil
	}
	p := &v1alpha2.UndoProgress{Children: len(children)}
	now := r.now()
	for _, name := range children {
		v := &pvapi.PackageVariant{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: set.GetNamespace(), Name: name}, v); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			continue // not created yet
		}
		u := v.Spec.Upstream
		if u == nil || u.Semver != "" || u.WorkspaceName != from.Workspace || u.Revision != from.Revision {
			continue
		}
		p.Back++
		if g.judge(factsOf(v), *from, now).Done {
			p.Done++
		}
	}
	st.UndoProgress = p
	return nil
}
