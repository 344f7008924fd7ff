package pvsexpand

import (
	"fmt"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// findUpstream picks the upstream revision among the inputs (F3): a
// workspaceName names a revision of any lifecycle; a revision number names a
// published revision, never a Draft; with neither, the latest published
// revision is used (floating, as a PackageVariant without them follows it).
// Whatever is given must all match.
func findUpstream(w *World, u *pv.Upstream) (*yaml.RNode, error) {
	floating := u.WorkspaceName == "" && u.Revision == 0
	var match *revision
	revs, _ := w.Objects(PackageRevisionGVK)
	for _, r := range revs {
		rev := readRevision(r)
		if !upstreamMatches(rev, u) {
			continue
		}
		if match == nil || (floating && rev.number > match.number) {
			match = &rev
		}
	}
	if match == nil {
		return nil, fmt.Errorf("upstream package revision not found: no PackageRevision of package %q in repository %q %s among the inputs in namespace %q",
			u.Package, u.Repo, wanted(u), w.Namespace)
	}
	return match.node, nil
}

func upstreamMatches(rev revision, u *pv.Upstream) bool {
	switch {
	case rev.repository != u.Repo || rev.packageName != u.Package:
		return false
	case u.WorkspaceName != "":
		return rev.workspace == u.WorkspaceName && (u.Revision == 0 || rev.number == u.Revision)
	case u.Revision > 0:
		return rev.number == u.Revision && rev.published()
	}
	return rev.published() && rev.number >= 1
}

func wanted(u *pv.Upstream) string {
	switch {
	case u.WorkspaceName != "" && u.Revision > 0:
		return fmt.Sprintf("with workspace %q and revision %d", u.WorkspaceName, u.Revision)
	case u.WorkspaceName != "":
		return fmt.Sprintf("with workspace %q", u.WorkspaceName)
	case u.Revision > 0:
		return fmt.Sprintf("published with revision %d", u.Revision)
	}
	return "that is published"
}
