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
//   - a draft is the branch drafts/P/<workspace>, a proposed revision the
//     branch proposed/P/<workspace>; both start from main;
//   - a published revision proposed for deletion also has the branch
//     deletionProposed/P/vN;
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

// refFor is the ref that holds a revision in its lifecycle (for a
// DeletionProposed revision, the tag; the extra branch is deletionRef).
func refFor(r store.Revision) string {
	switch r.Lifecycle {
	case store.Draft:
		return draftsPrefix + r.Package + "/" + r.Workspace
	case store.Proposed:
		return proposedPrefix + r.Package + "/" + r.Workspace
	}
	return tagsPrefix + r.Package + "/v" + strconv.Itoa(r.Revision)
}

// deletionRef is the branch that marks a published revision DeletionProposed.
func deletionRef(r store.Revision) string {
	return deletionProposedPrefix + r.Package + "/v" + strconv.Itoa(r.Revision)
}

// parsedRef is what a ref says about a revision.
type parsedRef struct {
	lifecycle store.Lifecycle // Draft, Proposed, Published; DeletionProposed for the marker branch
	pkg       string
	workspace string // drafts and proposed
	revision  int    // tags and deletion markers
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
		// Only the canonical form: "v01" or "v+1" would name revision 1
		// a second time.
		digits, isV := strings.CutPrefix(p.workspace, "v")
		n, err := strconv.Atoi(digits)
		if err != nil || n <= 0 || !isV || strconv.Itoa(n) != digits {
			return p, false
		}
		p.revision, p.workspace = n, ""
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
