package upstream

import (
	"testing"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// The package's revisions: v1 and v2 published, v3 proposed for deletion,
// a proposed and a draft one, and a draft whose workspace is "v2" too.
var revs = []Candidate{
	{Workspace: "v1", Revision: 1, Lifecycle: "Published"},
	{Workspace: "v3", Revision: 3, Lifecycle: "DeletionProposed"},
	{Workspace: "v2", Revision: 2, Lifecycle: "Published"},
	{Workspace: "next", Revision: 0, Lifecycle: "Proposed"},
	{Workspace: "wip", Revision: 0, Lifecycle: "Draft"},
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name string
		u    pv.Upstream
		revs []Candidate
		want int // index, -1 for none
	}{
		// neither: the latest published (DeletionProposed counts as published)
		{"neither: latest published", pv.Upstream{}, revs, 1},
		{"neither: only drafts and proposed", pv.Upstream{}, revs[3:], -1},
		{"neither: no revisions", pv.Upstream{}, nil, -1},
		{"neither: Published only", pv.Upstream{}, []Candidate{revs[0], revs[2]}, 1},
		// revision alone: a published revision of that number, never a draft
		{"revision: Published", pv.Upstream{Revision: 2}, revs, 2},
		{"revision: DeletionProposed", pv.Upstream{Revision: 3}, revs, 1},
		{"revision: not there", pv.Upstream{Revision: 9}, revs, -1},
		{"revision: a Draft never", pv.Upstream{Revision: 4}, []Candidate{{Workspace: "x", Revision: 4, Lifecycle: "Draft"}}, -1},
		{"revision: a Proposed never", pv.Upstream{Revision: 4}, []Candidate{{Workspace: "x", Revision: 4, Lifecycle: "Proposed"}}, -1},
		{"revision: negative", pv.Upstream{Revision: -2}, revs, -1},
		// Issue 29 #2: -1 is the branch placeholder, as Porch v1.5.3 takes it.
		{"revision -1: the placeholder", pv.Upstream{Revision: -1}, append(append([]Candidate{}, revs...), Candidate{Workspace: "main", Revision: -1, Lifecycle: "Published"}), 5},
		{"revision -1 with its branch", pv.Upstream{Revision: -1, WorkspaceName: "main"}, append(append([]Candidate{}, revs...), Candidate{Workspace: "main", Revision: -1, Lifecycle: "Published"}), 5},
		{"revision -1 with another branch", pv.Upstream{Revision: -1, WorkspaceName: "dev"}, append(append([]Candidate{}, revs...), Candidate{Workspace: "main", Revision: -1, Lifecycle: "Published"}), -1},
		{"revision -1, no placeholder", pv.Upstream{Revision: -1}, revs, -1},
		// workspaceName: any lifecycle
		{"workspace: Draft", pv.Upstream{WorkspaceName: "wip"}, revs, 4},
		{"workspace: Proposed", pv.Upstream{WorkspaceName: "next"}, revs, 3},
		{"workspace: Published", pv.Upstream{WorkspaceName: "v1"}, revs, 0},
		{"workspace: DeletionProposed", pv.Upstream{WorkspaceName: "v3"}, revs, 1},
		{"workspace: not there", pv.Upstream{WorkspaceName: "nope"}, revs, -1},
		// both: both must match
		{"both: agree", pv.Upstream{WorkspaceName: "v2", Revision: 2}, revs, 2},
		{"both: disagree", pv.Upstream{WorkspaceName: "v2", Revision: 1}, revs, -1},
		{"both: draft has no number", pv.Upstream{WorkspaceName: "wip", Revision: 1}, revs, -1},
		{"both: negative revision", pv.Upstream{WorkspaceName: "v2", Revision: -2}, revs, -1},
	}
	for _, tt := range tests {
		if got := Select(tt.u, tt.revs); got != tt.want {
			t.Errorf("%s: Select(%+v) = %d, want %d", tt.name, tt.u, got, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	for u, want := range map[pv.Upstream]string{
		{Repo: "r", Package: "p"}:                                  `package "p" in repository "r", latest published revision`,
		{Repo: "r", Package: "p", Revision: 2}:                     `package "p" in repository "r", published revision 2`,
		{Repo: "r", Package: "p", WorkspaceName: "w"}:              `package "p" in repository "r" with workspace "w"`,
		{Repo: "r", Package: "p", WorkspaceName: "w", Revision: 3}: `package "p" in repository "r" with workspace "w" and revision 3`,
	} {
		if got := Describe(u); got != want {
			t.Errorf("Describe(%+v) = %q, want %q", u, got, want)
		}
	}
}
