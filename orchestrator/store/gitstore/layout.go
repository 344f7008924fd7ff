package gitstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/validate"
)

// Porch's git layout (pkg/externalrepo/git in Porch v1.5.3):
//   - a published revision N of package P is the tag P/vN, on a commit of the
//     repository's branch (main) whose directory P holds the package;
//   - any other tag P/REF whose commit has a Kptfile in P is a published
//     revision too, numbered -1 (Porch numbers only vN), in workspace REF
//     (a catalog's infra/capi/kindnet/v3.0.0); a tag whose commit has no
//     package at P (a release tag) is not a revision;
//   - every package on the branch is also Porch's branch placeholder: a
//     published revision numbered -1 in the workspace named after the
//     branch (repo.P.main), usable as an upstream (workspaceName: main)
//     but with no lifecycle of its own;
//   - a draft is the branch drafts/P/<workspace>, a proposed revision the
//     branch proposed/P/<workspace>; both start from main;
//   - a published revision proposed for deletion also has the branch
//     deletionProposed/P/vN (deletionProposed/P/REF when numbered -1);
//   - each commit's message carries a line `kpt:{json}` naming the package,
//     workspace and revision.
const (
	tagsPrefix             = "refs/tags/"
	draftsPrefix           = "refs/heads/drafts/"
	proposedPrefix         = "refs/heads/proposed/"
	deletionProposedPrefix = "refs/heads/deletionProposed/"
)

// branchRef is the repository's branch of published packages.
func branchRef(branch string) string { return "refs/heads/" + branch }

// publishedRef is the last segment of a published revision's tag: vN, or
// the workspace of one Porch numbers -1.
func publishedRef(r store.Revision) string {
	if r.Revision > 0 {
		return "v" + strconv.Itoa(r.Revision)
	}
	return r.Workspace
}

// refFor is the ref that holds a revision in its lifecycle (for a
// DeletionProposed revision, the tag; the extra branch is deletionRef).
func refFor(r store.Revision) string {
	switch r.Lifecycle {
	case store.Draft:
		return draftsPrefix + r.Package + "/" + r.Workspace
	case store.Proposed:
		return proposedPrefix + r.Package + "/" + r.Workspace
	}
	return tagsPrefix + r.Package + "/" + publishedRef(r)
}

// deletionRef is the branch that marks a published revision DeletionProposed.
func deletionRef(r store.Revision) string {
	return deletionProposedPrefix + r.Package + "/" + publishedRef(r)
}

// parsedRef is what a ref says about a revision.
type parsedRef struct {
	lifecycle store.Lifecycle // Draft, Proposed, Published; DeletionProposed for the marker branch
	pkg       string
	workspace string // drafts and proposed
	revision  int    // tags and deletion markers
}

// publishedRef is the last segment of a published revision's tag.
func (p parsedRef) publishedRef() string {
	if p.revision > 0 {
		return "v" + strconv.Itoa(p.revision)
	}
	return p.workspace
}

// parseRef reads a ref of Porch's layout; ok is false for any other ref.
func parseRef(ref string) (parsedRef, bool) {
	var p parsedRef
	var rest string
	switch {
	case strings.HasPrefix(ref, draftsPrefix):
		p.lifecycle, rest = store.Draft, strings.TrimPrefix(ref, draftsPrefix)
	case strings.HasPrefix(ref, proposedPrefix):
		p.lifecycle, rest = store.Proposed, strings.TrimPrefix(ref, proposedPrefix)
	case strings.HasPrefix(ref, deletionProposedPrefix):
		p.lifecycle, rest = store.DeletionProposed, strings.TrimPrefix(ref, deletionProposedPrefix)
	case strings.HasPrefix(ref, tagsPrefix):
		p.lifecycle, rest = store.Published, strings.TrimPrefix(ref, tagsPrefix)
	default:
		return p, false
	}
	i := strings.LastIndexByte(rest, '/')
	if i <= 0 || i == len(rest)-1 {
		return p, false
	}
	p.pkg, p.workspace = rest[:i], rest[i+1:]
	if p.lifecycle == store.Published || p.lifecycle == store.DeletionProposed {
		// vN is revision N, in the canonical form only: "v01" or "v+1"
		// would name revision 1 a second time. Any other name Porch
		// numbers -1, with the name as the workspace.
		digits, isV := strings.CutPrefix(p.workspace, "v")
		n, err := strconv.Atoi(digits)
		switch {
		case err == nil && isV && n > 0 && strconv.Itoa(n) == digits:
			p.revision, p.workspace = n, ""
		case err == nil && isV, validate.DNS1123Subdomain(p.workspace) != "":
			return p, false
		default:
			p.revision = -1
		}
	}
	return p, validPackage(p.pkg) == nil
}

// validPackage checks a package path with the one rule for package paths
// (validate.PackagePath, Porch's).
func validPackage(pkg string) error {
	if msg := validate.PackagePath(pkg); msg != "" {
		return fmt.Errorf("package path %s", msg)
	}
	return nil
}

// validFile checks a file's path inside a package with the one rule for
// file paths (validate.FilePath): nothing outside the package, nothing git
// would take for its own directory.
func validFile(name string) error {
	if msg := validate.FilePath(name); msg != "" {
		return fmt.Errorf("file path %s", msg)
	}
	return nil
}

// annotation is the `kpt:` line of a commit message.
type annotation struct {
	Package   string `json:"package,omitempty"`
	Workspace string `json:"workspaceName,omitempty"`
	Revision  string `json:"revision,omitempty"`
}

// message is a commit message for a revision.
func message(summary string, r store.Revision) string {
	a := annotation{Package: r.Package, Workspace: r.Workspace}
	if r.Revision > 0 {
		a.Revision = "v" + strconv.Itoa(r.Revision)
	}
	b, _ := json.Marshal(a)
	return summary + "\n\nkpt:" + string(b) + "\n"
}

// revisionIs reports whether the annotation may be revision n's: it names
// no revision (older commits), or n as pvctl writes it ("vN") or as Porch
// does ("N").
func (a annotation) revisionIs(n int) bool {
	return a.Revision == "" || a.Revision == strconv.Itoa(n) || a.Revision == "v"+strconv.Itoa(n)
}

// annotationOf reads the `kpt:` line of a commit object (its headers, a
// blank line, the message); a commit without one gives the zero annotation.
func annotationOf(commit []byte) annotation {
	var a annotation
	_, msg, _ := strings.Cut(string(commit), "\n\n")
	for _, line := range strings.Split(msg, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "kpt:"); ok {
			if json.Unmarshal([]byte(rest), &a) == nil {
				return a
			}
		}
	}
	return a
}
