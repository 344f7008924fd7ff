package pvsexpand

import (
	"fmt"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/upstream"
)

// findUpstream picks the upstream revision among the world's by
// pkg/upstream's rule, the one the PackageVariant controller uses (rule: upstream-selection).
func findUpstream(w *World, u *pv.Upstream) (*Revision, error) {
	var revs []*Revision
	var cands []upstream.Candidate
	for i := range w.revisions {
		r := &w.revisions[i]
		if r.Repository != u.Repo || r.Package != u.Package {
			continue
		}
		revs = append(revs, r)
		cands = append(cands, upstream.Candidate{Workspace: r.Workspace, Revision: r.Revision, Lifecycle: r.Lifecycle})
	}
	if i := upstream.Select(*u, cands); i >= 0 {
		return revs[i], nil
	}
	return nil, fmt.Errorf("%w: no PackageRevision of %s among the inputs in namespace %q",
		ErrUpstreamNotFound, upstream.Describe(*u), w.Namespace)
}
