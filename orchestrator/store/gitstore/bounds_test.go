package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// pushDraft commits files as package app on a draft branch of the
// repository at dir, as anyone with push rights could (no bound applies).
func pushDraft(t *testing.T, dir, workspace string, files map[string]string) {
	t.Helper()
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := writeTree(repo.Storer, files)
	if err != nil {
		t.Fatal(err)
	}
	root, err := storeTree(repo.Storer, []object.TreeEntry{{Name: "app", Mode: filemode.Dir, Hash: pkg}})
	if err != nil {
		t.Fatal(err)
	}
	commitRef(t, repo, root, "refs/heads/drafts/app/"+workspace)
}

const kf = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"

// blueprintsRepo is a bare repository blueprints with package app
// published with files; its git directory.
func blueprintsRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "blueprints.git")
	if err := Init(dir, ""); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ns, []Repository{{Name: "blueprints", GitDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishFiles(ns, "blueprints", "app", files); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Issue 27 #3: a revision over a bound (a file over MaxFileBytes, more than
// MaxRevisionFiles files, more than MaxRevisionBytes) is skipped alone with
// a warning naming it and the bound, measured from object headers and
// trees before any file is read; every other revision is served.
func TestOverBoundRevisionsSkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes 100 MB of objects (6 s)")
	}
	dir := blueprintsRepo(t, map[string]string{"Kptfile": kf})
	pushDraft(t, dir, "bigfile", map[string]string{"Kptfile": kf, "big.yaml": strings.Repeat("a", MaxFileBytes+1)})
	many := map[string]string{"Kptfile": kf}
	for i := 0; i < MaxRevisionFiles; i++ {
		many[fmt.Sprintf("f/%05d.yaml", i)] = "a: 1\n"
	}
	pushDraft(t, dir, "manyfiles", many)
	heavy := map[string]string{"Kptfile": kf}
	for i := 0; i < 5; i++ {
		heavy[fmt.Sprintf("part%d.yaml", i)] = strings.Repeat(fmt.Sprint(i), MaxFileBytes-1)
	}
	pushDraft(t, dir, "heavy", heavy)

	s, err := Open(ns, []Repository{{Name: "blueprints", GitDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range s.All(ns) {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "blueprints.app.main blueprints.app.v1" {
		t.Fatalf("served: %v", names)
	}
	want := map[string]string{
		"refs/heads/drafts/app/bigfile":   fmt.Sprintf("package app: file big.yaml has %d bytes, more than %d: over pvkit's bounds", MaxFileBytes+1, MaxFileBytes),
		"refs/heads/drafts/app/manyfiles": fmt.Sprintf("package app: it holds more than %d files: over pvkit's bounds", MaxRevisionFiles),
		"refs/heads/drafts/app/heavy":     fmt.Sprintf("package app: its files hold more than %d bytes: over pvkit's bounds", MaxRevisionBytes),
	}
	for _, k := range s.Skipped() {
		if w, ok := want[k.Ref]; !ok || k.Err.Error() != w || !errors.Is(k.Err, errOverBound) {
			t.Errorf("skipped %s: %v\nwant %s", k.Ref, k.Err, w)
		}
		delete(want, k.Ref)
	}
	if len(want) > 0 {
		t.Errorf("not skipped: %v", want)
	}
}

// Issue 27 #3: opening a store reads no revision's files: only what names,
// locates and measures them (refs, commits, trees, object headers, each
// Kptfile). A revision one of whose files is damaged past its header is
// served, and reading it fails then, alone.
func TestOpenReadsFilesLazily(t *testing.T) {
	dir := blueprintsRepo(t, map[string]string{"Kptfile": kf, "lost.yaml": "lost: true\n"})
	s, err := Open(ns, []Repository{{Name: "blueprints", GitDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishFiles(ns, "blueprints", "other", map[string]string{"Kptfile": strings.Replace(kf, "name: app", "name: other", 1)}); err != nil {
		t.Fatal(err)
	}
	// The object keeps its header (blob, 11 bytes) and loses its content.
	blob := plumbing.ComputeHash(plumbing.BlobObject, []byte("lost: true\n")).String()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 11\x00lo"))
	zw.Close()
	obj := filepath.Join(dir, "objects", blob[:2], blob[2:])
	if err := os.Chmod(obj, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(obj, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ns, []Repository{{Name: "blueprints", GitDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.All(ns)); n != 4 || len(s.Skipped()) != 0 {
		t.Fatalf("served %d revisions, skipped %v; want the 4 served, none skipped", n, s.Skipped())
	}
	if _, err := s.GetResources(context.Background(), ns, "blueprints.other.v1"); err != nil {
		t.Fatalf("another revision: %v", err)
	}
	_, err = s.GetResources(context.Background(), ns, "blueprints.app.v1")
	if err == nil || !strings.Contains(err.Error(), "package revision blueprints.app.v1: ") || !strings.Contains(err.Error(), "lost.yaml") {
		t.Fatalf("reading the revision whose file is lost: %v", err)
	}
}

// Issue 27 #3: what a store writes it can read back: a write over a bound
// is refused, naming it, and nothing is written.
func TestWritesOverBoundsRefused(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.AddRepository(ns, "blueprints")
	_, err := h.PublishFiles(ns, "blueprints", "app", map[string]string{"Kptfile": kf, "big.yaml": strings.Repeat("a", MaxFileBytes+1)})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("file big.yaml has %d bytes, more than %d", MaxFileBytes+1, MaxFileBytes)) {
		t.Fatalf("publish: %v", err)
	}
	if n := len(h.All(ns)); n != 0 {
		t.Fatalf("a refused publish left %d revisions", n)
	}
	up := h.Publish(ns, "blueprints", "app", map[string]string{"Kptfile": kf})
	h.AddRepository(ns, "deploy")
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"Kptfile": kf}
	for i := 0; i <= MaxRevisionFiles; i++ {
		files[fmt.Sprintf("f%05d.yaml", i)] = "a: 1\n"
	}
	_, err = h.UpdateResources(ctx, ns, rev.Name, store.Resources{Files: files})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the package holds %d files, more than %d", MaxRevisionFiles+2, MaxRevisionFiles)) {
		t.Fatalf("update: %v", err)
	}
}
