package gitstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
)

// Issue 60 #2: who approved a revision is kept with it (the repository's
// metadata, as Porch keeps status.publishedBy), read back when the store
// is opened again; a seeded publish names nobody. FilesAt reads a package
// at a commit whatever the refs say, and names what it cannot.
func TestPublishedByAndFilesAt(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	if up.PublishedBy != "" {
		t.Fatalf("a seeded publish: PublishedBy %q", up.PublishedBy)
	}
	h.AddRepository(ns, "deploy")
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	h.SetApprover("Jane Doe <jane@example.com>")
	pub, err := h.Approve(ns, rev.Name)
	if err != nil || pub.PublishedBy != "Jane Doe <jane@example.com>" {
		t.Fatalf("approved: %+v, %v", pub, err)
	}
	s2, err := Open(ns, []Repository{{Name: "deploy", GitDir: filepath.Join(h.root, "deploy.git")}, {Name: "blueprints", GitDir: filepath.Join(h.root, "blueprints.git")}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s2.Read(ctx, ns, pub.Name)
	if err != nil || again.PublishedBy != "Jane Doe <jane@example.com>" {
		t.Fatalf("reopened: %+v, %v", again, err)
	}

	commit := gitOut(t, filepath.Join(h.root, "blueprints.git"), "rev-parse", "app/v1^{commit}")
	files, err := s2.FilesAt("blueprints", commit, "app")
	if err != nil || files["Kptfile"] != storetest.Blueprint["Kptfile"] {
		t.Fatalf("FilesAt: %v %v", files, err)
	}
	for _, c := range []struct{ repo, commit, pkg, want string }{
		{"nowhere", commit, "app", "repository nowhere: not found"},
		{"blueprints", "app/v1", "app", `repository blueprints: "app/v1" is not a commit id`},
		{"blueprints", strings.Repeat("0", 40), "app", "repository blueprints: commit 0000000000000000000000000000000000000000 in "},
		{"blueprints", commit, "other", "repository blueprints: commit " + commit + " holds no package other"},
	} {
		if _, err := s2.FilesAt(c.repo, c.commit, c.pkg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FilesAt(%s, %s, %s): %v, want %q", c.repo, c.commit, c.pkg, err, c.want)
		}
	}
}
