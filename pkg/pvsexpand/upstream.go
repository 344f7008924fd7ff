package pvsexpand

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/upstream"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// findUpstream picks the upstream revision among the inputs by
// pkg/upstream's rule, the one the PackageVariant controller uses (F3).
func findUpstream(w *World, u *pv.Upstream) (*yaml.RNode, error) {
	var nodes []*yaml.RNode
	var cands []upstream.Candidate
	revs, _ := w.Objects(PackageRevisionGVK)
	for _, r := range revs {
		rev := readRevision(r)
		if rev.repository != u.Repo || rev.packageName != u.Package {
			continue
		}
		nodes = append(nodes, r)
		cands = append(cands, upstream.Candidate{Workspace: rev.workspace, Revision: rev.number, Lifecycle: meta.Lifecycle(rev.lifecycle)})
	}
	if i := upstream.Select(*u, cands); i >= 0 {
		return nodes[i], nil
	}
	return nil, fmt.Errorf("%w: no PackageRevision of %s among the inputs in namespace %q",
		ErrUpstreamNotFound, upstream.Describe(*u), w.Namespace)
}
