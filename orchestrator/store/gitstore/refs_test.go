package gitstore

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-cmp/cmp"
)

// Issue 28 #4: refs are read as git reads them, including what a person or
// a dead git process leaves behind in a repository: packed and loose refs
// (loose win), annotated tags peeled (packed with and without their ^ line),
// lock files, an empty ref file, a ref file of garbage, refs outside
// heads/ and tags/. The reference is `git for-each-ref` itself.
func TestRefsReadAsGitReadsThem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	if _, err := git("", nil, "init", "-q", "--bare", "-b", "main", dir); err != nil {
		t.Fatal(err)
	}
	tree := gitOut(t, dir, "mktree")
	commit := func(msg string) string { return gitOut(t, dir, "commit-tree", tree, "-m", msg) }
	c1, c2, c3 := commit("one"), commit("two"), commit("three")
	gitOut(t, dir, "update-ref", "refs/heads/main", c1)
	gitOut(t, dir, "update-ref", "refs/heads/drafts/app/ws", c2)
	gitOut(t, dir, "tag", "-a", "-m", "v1", "app/v1", c1)
	gitOut(t, dir, "tag", "app/v2", c2)
	gitOut(t, dir, "pack-refs", "--all")
	// After packing: a loose ref that wins over its packed value, an
	// annotated tag left loose, a packed annotated tag without its ^ line.
	gitOut(t, dir, "update-ref", "refs/heads/main", c3)
	gitOut(t, dir, "tag", "-a", "-m", "v3", "app/v3", c3)
	packed, err := os.ReadFile(filepath.Join(dir, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	tagObj := gitOut(t, dir, "rev-parse", "refs/tags/app/v1")
	withoutPeel := strings.Replace(string(packed), "^"+c1+"\n", "", 1)
	withoutPeel += gitOut(t, dir, "rev-parse", "refs/tags/app/v3") + " refs/tags/app/v4\n"
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("packed-refs", withoutPeel)
	write("refs/heads/main.lock", c1+"\n")      // a git process under way, or dead
	write("refs/heads/empty", "")               // a write that died
	write("refs/heads/garbage", "not a hash\n") // a person's mistake
	write("refs/remotes/origin/x", c1+"\n")     // not a branch or a tag
	write("refs/tags/app/short", c1[:20]+"\n")  // a truncated write
	if tagObj == c1 {
		t.Fatal("app/v1 must be an annotated tag")
	}

	got, err := refs(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	out := gitOut(t, dir, "for-each-ref", "--format=%(refname) %(objectname) %(*objectname)", "refs/heads", "refs/tags")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		want[f[0]] = f[len(f)-1] // the peeled commit where there is one
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("refs differ from git for-each-ref (-git +pvkit):\n%s", d)
	}
	if got["refs/heads/main"] != c3 || got["refs/tags/app/v1"] != c1 || got["refs/tags/app/v4"] != c3 {
		t.Fatalf("loose over packed, peeled tags: %v", got)
	}

	// Why not go-git's reference storer: on the same repository it fails or
	// misreads. When it reads refs as git does, switch to it.
	repo, err := gogit.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	iter, err := repo.Storer.IterReferences()
	var goGit []string
	if err == nil {
		err = iter.ForEach(func(r *plumbing.Reference) error {
			if r.Type() == plumbing.HashReference {
				goGit = append(goGit, r.Name().String()+" "+r.Hash().String())
			}
			return nil
		})
	}
	var gitsHeads []string
	for name, sha := range want {
		if strings.HasPrefix(name, "refs/heads/") {
			gitsHeads = append(gitsHeads, name+" "+sha)
		}
	}
	sort.Strings(gitsHeads)
	if heads := filterHeads(goGit); err == nil && cmp.Equal(heads, gitsHeads) {
		t.Errorf("go-git's reference storer now lists the branches git lists: read refs through it")
	}
	t.Logf("go-git's reference storer: err=%v, %d refs", err, len(goGit))
}

// filterHeads keeps the branches of "name sha" lines, sorted.
func filterHeads(refs []string) []string {
	out := []string{}
	for _, r := range refs {
		if strings.HasPrefix(r, "refs/heads/") {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// A read during an update-ref transaction (its locks renamed one by one)
// waits for it rather than listing half of it: a proposal's new ref beside
// the draft's old one was one revision twice, listed Unreadable (seen by
// pvctl get -w beside pvctl propose). A lock that stays is skipped.
func TestRefsWaitForATransaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	if _, err := git("", nil, "init", "-q", "--bare", "-b", "main", dir); err != nil {
		t.Fatal(err)
	}
	tree := gitOut(t, dir, "mktree")
	c1 := gitOut(t, dir, "commit-tree", tree, "-m", "one")
	gitOut(t, dir, "update-ref", "refs/heads/drafts/app/ws", c1)
	// Mid-commit: the new ref is renamed into place, the old one's
	// deletion still holds its lock.
	gitOut(t, dir, "update-ref", "refs/heads/proposed/app/ws", c1)
	old := filepath.Join(dir, "refs", "heads", "drafts", "app", "ws")
	if err := os.WriteFile(old+".lock", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(3 * refRetryPause)
		if err := os.Remove(old); err != nil {
			done <- err
			return
		}
		done <- os.Remove(old + ".lock")
	}()
	m, err := refs(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok := m["refs/heads/drafts/app/ws"]; ok || m["refs/heads/proposed/app/ws"] != c1 {
		t.Fatalf("read during the transaction: %v; want the proposal alone", m)
	}

	// A lock nobody removes (a git process that died): the read ends,
	// skipping it, the refs as they are.
	if err := os.WriteFile(filepath.Join(dir, "refs", "heads", "stale.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = refs(dir)
	if err != nil || m["refs/heads/proposed/app/ws"] != c1 || len(m) != 1 {
		t.Fatalf("with a stale lock: %v, %v; want the proposal alone", m, err)
	}
	if err := os.Remove(filepath.Join(dir, "refs", "heads", "stale.lock")); err != nil {
		t.Fatal(err)
	}

	// The store's own write holds its ref's lock while it reads the refs:
	// it reads them once, never waiting on itself (it did, 200 ms a write:
	// BenchmarkPvctlRun's first run was ten times slower).
	before := refRereads.Load()
	if err := setRef(dir, "refs/heads/drafts/app/ws2", "", c1); err != nil {
		t.Fatal(err)
	}
	if n := refRereads.Load() - before; n != 0 {
		t.Fatalf("a write of a ref read the refs again %d times, waiting on its own lock", n)
	}
	if m, err := refs(dir); err != nil || m["refs/heads/drafts/app/ws2"] != c1 {
		t.Fatalf("after the write: %v, %v", m, err)
	}
}
