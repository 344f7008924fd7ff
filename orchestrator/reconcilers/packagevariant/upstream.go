package packagevariant

import (
	"context"
	"fmt"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
	"github.com/pvkit/pvkit/pkg/upstream"
)

// findUpstream picks the upstream revision by pkg/upstream's rule (rule: upstream-selection); nil
// when there is none yet.
func (r *Reconciler) findUpstream(ctx context.Context, v *pvapi.PackageVariant) (*store.Revision, error) {
	u := v.Spec.Upstream
	revs, err := r.porch().ListRevisions(ctx, store.PackageKey{Namespace: v.Namespace, Repository: u.Repo, Package: u.Package})
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

// precheck runs the variant's mutations on what the clone of the upstream
// will be (its files as Porch's clone writes them: package context and
// merge keys, store/tasks) before the clone, so that whatever would stall the mutation (a kind pvkit may not
// read, a package the functions refuse) stalls before anything is
// created: a clone whose mutation never ran would be a draft that looks
// finished (unspecialised, without its readiness gates) and could be
// approved. It costs one read of the upstream per clone; transient errors
// are retried like any other.
func (r *Reconciler) precheck(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision) error {
	files, err := r.upstreamFiles(ctx, up)
	if err != nil {
		return err
	}
	// As into a deployment repository (a package context generated): the
	// reconciler does not know the downstream's kind, and the context is
	// what the variant's packageContext edits.
	clone, err := tasks.Clone(files, store.LockFor(*up), v.Spec.Downstream.Package, true)
	if err != nil {
		return kit.Stall(pvapi.ReasonMutationFailed, fmt.Errorf("the clone of %s: %w", up.Name, err))
	}
	_, _, err = r.runChain(ctx, v, clone)
	return err
}

// upstreamFiles reads an upstream revision's files; a published one's are
// kept (they never change at a resource version).
func (r *Reconciler) upstreamFiles(ctx context.Context, up *store.Revision) (map[string]string, error) {
	key := up.Namespace + "/" + up.Name + "@" + up.ResourceVersion
	if files, ok := r.upstreams.Get(key); ok {
		return files, nil
	}
	res, err := r.porch().GetResources(ctx, up.Namespace, up.Name)
	if err != nil {
		return nil, fmt.Errorf("reading upstream %s: %w", up.Name, err)
	}
	if up.Lifecycle.IsPublished() && up.ResourceVersion != "" {
		r.upstreams.Put(key, res.Files)
	}
	return res.Files, nil
}
