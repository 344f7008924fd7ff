package gitstore

import (
	"strings"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// A repository scoped to a directory (Porch's spec.git.directory: Nephio
// registers its catalog once per directory, catalog-infra-capi with
// /infra/capi) serves the packages under that directory, named relative to
// it, as Porch v1.5.3 does (pkg/externalrepo/git): the package
// infra/capi/kindnet is `kindnet`; its refs keep the whole path (the tag
// infra/capi/kindnet/v3.0.0 is kindnet's revision in workspace v3.0.0, a
// draft is drafts/infra/capi/kindnet/<workspace>), as do its files in the
// tree and the commits' kpt annotations. Refs and packages outside the
// directory are not the repository's. The store's revisions carry the
// relative name; the repo's methods below turn it into the path in git
// (rule directory-repositories).

// cleanDirectory is a spec.git.directory as a path in the tree: no leading
// or trailing slash, "" for the root.
func cleanDirectory(dir string) string {
	return strings.Trim(dir, "/")
}

// full is a package's path in the repository's tree.
func (r *repo) full(pkg string) string {
	if r.Directory == "" {
		return pkg
	}
	return r.Directory + "/" + pkg
}

// rel is the package a path in the tree names, if it is under the
// repository's directory.
func (r *repo) rel(full string) (string, bool) {
	if r.Directory == "" {
		return full, true
	}
	return strings.CutPrefix(full, r.Directory+"/")
}

// abs is rev with its package's path in the tree.
func (r *repo) abs(rev store.Revision) store.Revision {
	rev.Package = r.full(rev.Package)
	return rev
}

// parse reads a ref of Porch's layout whose package is under the
// repository's directory, naming the package relative to it.
func (r *repo) parse(ref string) (parsedRef, bool) {
	p, ok := parseRef(ref)
	if !ok {
		return p, false
	}
	p.pkg, ok = r.rel(p.pkg)
	return p, ok
}

// refFor is the ref that holds rev (refFor in layout.go, in the tree's
// paths).
func (r *repo) refFor(rev store.Revision) string { return refFor(r.abs(rev)) }

// deletionRef is the branch that marks rev DeletionProposed.
func (r *repo) deletionRef(rev store.Revision) string { return deletionRef(r.abs(rev)) }
