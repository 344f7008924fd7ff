package gitstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
)

const ns = "default"

// harness adapts a Store to storetest: a repository is created on first
// use, in a temporary directory.
type harness struct {
	*Store
	t    *testing.T
	root string
}

func newHarness(t *testing.T) *harness {
	root := t.TempDir()
	s, err := Open(ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.SetClock(func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) })
	return &harness{Store: s, t: t, root: root}
}

func (h *harness) AddRepository(namespace, name string) {
	h.t.Helper()
	if namespace != ns {
		h.t.Fatalf("the git store serves one namespace, not %q", namespace)
	}
	for _, r := range h.Repositories() {
		if r.Name == name {
			return
		}
	}
	dir := filepath.Join(h.root, name+".git")
	if err := Init(dir, ""); err != nil {
		h.t.Fatal(err)
	}
	if err := h.Add(Repository{Name: name, GitDir: dir, Deployment: true}); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) Publish(namespace, repo, pkg string, files map[string]string) store.Revision {
	h.t.Helper()
	h.AddRepository(namespace, repo)
	rev, err := h.PublishFiles(namespace, repo, pkg, files)
	if err != nil {
		h.t.Fatal(err)
	}
	return rev
}

func TestSuite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness { return newHarness(t) })
}

// gitOut runs git in a repository for a test.
func gitOut(t *testing.T, gitDir string, args ...string) string {
	t.Helper()
	out, err := git(gitDir, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func refNames(t *testing.T, gitDir string) []string {
	all, err := refs(gitDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r := range all {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

var owner = store.OwnerRef{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "PackageVariant", Name: "pv", UID: "uid-1", Controller: true}

// The refs and commits are Porch's: drafts/ and proposed/ branches, tags
// <package>/v<N> on main, deletionProposed/ markers, kpt: annotations.
func TestPorchLayout(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.AddRepository(ns, "deploy")
	deploy := filepath.Join(h.root, "deploy.git")
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "team/app-prod", Workspace: "ws1",
		Owners: []store.OwnerRef{owner}, Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if got := refNames(t, deploy); !cmp.Equal(got, []string{"refs/heads/drafts/team/app-prod/ws1"}) {
		t.Fatalf("after clone: %v", got)
	}
	if ls := gitOut(t, deploy, "ls-tree", "-r", "--name-only", "drafts/team/app-prod/ws1"); !strings.Contains(ls, "team/app-prod/Kptfile") || !strings.Contains(ls, "team/app-prod/deployment.yaml") {
		t.Fatalf("draft tree:\n%s", ls)
	}
	msg := gitOut(t, deploy, "log", "-1", "--format=%B", "drafts/team/app-prod/ws1")
	if !strings.Contains(msg, `kpt:{"package":"team/app-prod","workspaceName":"ws1"}`) {
		t.Fatalf("commit message:\n%s", msg)
	}
	rev.Lifecycle = store.Proposed
	rev.ResourceVersion = ""
	if err := h.Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if got := refNames(t, deploy); !cmp.Equal(got, []string{"refs/heads/proposed/team/app-prod/ws1"}) {
		t.Fatalf("after propose: %v", got)
	}
	pub, err := h.Approve(ns, rev.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := refNames(t, deploy); !cmp.Equal(got, []string{"refs/heads/main", "refs/tags/team/app-prod/v1"}) {
		t.Fatalf("after approve: %v", got)
	}
	if gitOut(t, deploy, "rev-parse", "main") != gitOut(t, deploy, "rev-parse", "team/app-prod/v1^{commit}") {
		t.Fatal("the tag must be main's commit")
	}
	if msg := gitOut(t, deploy, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, `"workspaceName":"ws1","revision":"v1"`) {
		t.Fatalf("publish commit message:\n%s", msg)
	}
	pub.Lifecycle, pub.ResourceVersion = store.DeletionProposed, ""
	if err := h.Update(ctx, pub); err != nil {
		t.Fatal(err)
	}
	if got := refNames(t, deploy); !cmp.Equal(got, []string{"refs/heads/deletionProposed/team/app-prod/v1", "refs/heads/main", "refs/tags/team/app-prod/v1"}) {
		t.Fatalf("after proposing deletion: %v", got)
	}
	if err := h.Delete(ctx, ns, pub.Name); err != nil {
		t.Fatal(err)
	}
	if got := refNames(t, deploy); !cmp.Equal(got, []string{"refs/heads/main"}) {
		t.Fatalf("after delete: %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(deploy, MetadataFile)); strings.Contains(string(b), rev.Name) {
		t.Fatalf("a deleted revision's metadata stays:\n%s", b)
	}
}

// Everything survives a reopen: revisions, lifecycles, workspaces of
// published revisions, owners, labels, locks and files.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	v1 := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.AddRepository(ns, "deploy")
	mk := func(ws string) store.Revision {
		rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod", Workspace: ws,
			Owners: []store.OwnerRef{owner}, Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"a": "b"},
			Task: store.Task{Type: store.Clone, Upstream: v1.Name}})
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	mk("draft")
	proposed := mk("proposed")
	proposed.Lifecycle, proposed.ResourceVersion = store.Proposed, ""
	if err := h.Update(ctx, proposed); err != nil {
		t.Fatal(err)
	}
	pub := mk("published")
	res, _ := h.GetResources(ctx, ns, pub.Name)
	res.Files["sub/dir/extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	if _, err := h.UpdateResources(ctx, ns, pub.Name, res); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Approve(ns, pub.Name); err != nil {
		t.Fatal(err)
	}

	again, err := Open(ns, h.Repositories())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []store.PackageKey{{Namespace: ns, Repository: "blueprints", Package: "app"}, {Namespace: ns, Repository: "deploy", Package: "app-prod"}} {
		want, _ := h.ListRevisions(ctx, k)
		got, err := again.ListRevisions(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		// Content: a reopened store knows each revision's git tree, the
		// store that wrote them not (TestContentIsTheTree checks it).
		opt := cmp.FilterPath(func(p cmp.Path) bool { s := p.Last().String(); return s == ".ResourceVersion" || s == ".Content" }, cmp.Ignore())
		if d := cmp.Diff(want, got, opt); d != "" || len(got) == 0 {
			t.Fatalf("%s after reopen (-want +got):\n%s", k, d)
		}
		for _, r := range want {
			a, _ := h.GetResources(ctx, ns, r.Name)
			b, _ := again.GetResources(ctx, ns, r.Name)
			if d := cmp.Diff(a.Files, b.Files); d != "" {
				t.Fatalf("%s files after reopen:\n%s", r.Name, d)
			}
		}
	}
	owned, _ := again.ListOwned(ctx, ns, "uid-1")
	if len(owned) != 3 {
		t.Fatalf("owned after reopen: %+v", owned)
	}
}

func TestOpenErrors(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	if _, err := git(filepath.Join(work, ".git"), nil, "init", "--quiet", work); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "bad.git")
	if err := Init(bad, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, MetadataFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		repos []Repository
		want  string
	}{
		{[]Repository{{Name: "w", GitDir: work}}, `repository "w": ` + work + " is a working tree; pvctl needs a bare repository"},
		{[]Repository{{Name: "x", GitDir: filepath.Join(root, "missing")}}, `repository "x": ` + filepath.Join(root, "missing") + " is not a git repository"},
		{[]Repository{{Name: "b", GitDir: bad}}, `repository "b": ` + filepath.Join(bad, MetadataFile) + ": unexpected end of JSON input"},
		{[]Repository{{Name: "d", GitDir: root + "/ok1.git"}, {Name: "d", GitDir: root + "/ok1.git"}}, `repository "d": named twice`},
	} {
		_ = Init(filepath.Join(root, "ok1.git"), "")
		_, err := Open(ns, c.repos)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Open(%v): err = %v, want %q", c.repos, err, c.want)
		}
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"b.git", "a"} {
		if err := Init(filepath.Join(root, d), ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Discover(root)
	want := []Repository{{Name: "a", GitDir: filepath.Join(root, "a")}, {Name: "b", GitDir: filepath.Join(root, "b.git")}}
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("Discover = %+v, %v", got, err)
	}
	work := filepath.Join(root, "work")
	if _, err := git(filepath.Join(work, ".git"), nil, "init", "--quiet", work); err != nil {
		t.Fatal(err)
	}
	if _, err := Discover(root); err == nil || !strings.Contains(err.Error(), "is a working tree") {
		t.Fatalf("a working tree under the root: %v", err)
	}
}

// A ref that moved behind the store's back fails the write and leaves
// memory as it was.
func TestRefMovedElsewhere(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.AddRepository(ns, "deploy")
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	deploy := filepath.Join(h.root, "deploy.git")
	// Someone else commits an unrelated root commit onto the draft branch.
	tree := gitOut(t, deploy, "mktree")
	other := gitOut(t, deploy, "commit-tree", tree, "-m", "elsewhere")
	gitOut(t, deploy, "update-ref", "refs/heads/drafts/p/w", other)
	before, _ := h.GetResources(ctx, ns, rev.Name)
	_, err = h.UpdateResources(ctx, ns, rev.Name, store.Resources{Files: map[string]string{"a.yaml": "a: 1\n"}})
	if !errors.Is(err, store.ErrConflict) || !strings.HasPrefix(err.Error(), "drafts/p/w moved outside this store (now ") {
		t.Fatalf("err = %v, want a conflict naming the branch", err)
	}
	after, _ := h.GetResources(ctx, ns, rev.Name)
	if !cmp.Equal(before, after) {
		t.Fatal("memory changed although git refused")
	}
}

func TestInvalidPaths(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.AddRepository(ns, "deploy")
	// Issue 18 #11: a.lock, .hidden, a@{b, HEAD... passed and then broke git.
	for _, pkg := range []string{"../escape", "a//b", "/abs", "a b", "a.lock", ".hidden", "a@{b", "A", "ü", "HEAD", "-x", "@"} {
		_, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: pkg, Workspace: "w",
			Task: store.Task{Type: store.Clone, Upstream: up.Name}})
		if err == nil || !strings.Contains(err.Error(), ": package path must ") {
			t.Errorf("package %q: err = %v", pkg, err)
		}
	}
	rev, _ := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	for name, want := range map[string]string{
		"../x.yaml":     `file path must not have a ".." segment, found "../x.yaml"`,
		".git/config":   `file path must not have a segment git reads as its own directory (".git"), found ".git/config"`,
		"sub/.GIT/HEAD": `file path must not have a segment git reads as its own directory (".GIT"), found "sub/.GIT/HEAD"`,
	} {
		_, err := h.UpdateResources(ctx, ns, rev.Name, store.Resources{Files: map[string]string{"Kptfile": "a: 1\n", name: "a: 1\n"}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("file %s: err = %v, want %q", name, err, want)
		}
	}
}

// Approval moves main and creates the tag in one ref transaction: when the
// transaction cannot complete (here a lock another git process holds on the
// tag, as a kill would leave things half done), main has not moved, the
// revision is still Proposed after a reopen, and a second approval commits
// once.
func TestApproveIsAtomic(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.AddRepository(ns, "deploy")
	deploy := filepath.Join(h.root, "deploy.git")
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app", Workspace: "ws1",
		Owners: []store.OwnerRef{owner}, Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	rev.Lifecycle, rev.ResourceVersion = store.Proposed, ""
	if err := h.Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(deploy, "refs", "tags", "app", "v1.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Approve(ns, rev.Name); err == nil {
		t.Fatal("approve must fail while the tag is locked")
	}
	if got := refNames(t, deploy); !cmp.Equal(got, []string{"refs/heads/proposed/app/ws1"}) {
		t.Fatalf("a failed approval moved refs: %v", got)
	}
	if out := gitOut(t, deploy, "for-each-ref", "refs/pvkit"); out != "" {
		t.Fatalf("the scratch ref stays: %s", out)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ns, h.Repositories())
	if err != nil {
		t.Fatal(err)
	}
	revs, _ := s2.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: "deploy", Package: "app"})
	if len(revs) != 1 || revs[0].Lifecycle != store.Proposed {
		t.Fatalf("after the failed approval: %+v", revs)
	}
	if _, err := s2.Approve(ns, rev.Name); err != nil {
		t.Fatal(err)
	}
	if n := gitOut(t, deploy, "rev-list", "--count", "main"); n != "1" {
		t.Fatalf("main has %s commits, want exactly one", n)
	}
	if gitOut(t, deploy, "rev-parse", "main") != gitOut(t, deploy, "rev-parse", "app/v1^{commit}") {
		t.Fatal("the tag must be main's commit")
	}
}

// A draft's creation time is the store's clock when it created the draft,
// kept where no git push reaches (the metadata file), whatever is written
// to the draft since; a draft branch pushed with git has none (zero: a
// delay never meets it).
func TestCreatedIsRecordedByTheStore(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	h.AddRepository(ns, "deploy")
	rev, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	if !rev.Created.Equal(want) {
		t.Fatalf("Created = %v, want %v", rev.Created, want)
	}
	res, _ := h.GetResources(ctx, ns, rev.Name)
	res.Files["b.yaml"] = "b: 1\n"
	if err := h.PushFiles(ctx, ns, rev.Name, res); err != nil {
		t.Fatal(err)
	}
	deploy := filepath.Join(h.root, "deploy.git")
	gitOut(t, deploy, "update-ref", "refs/heads/drafts/p/pushed", gitOut(t, deploy, "rev-parse", "refs/heads/drafts/p/w"))
	s2, err := Open(ns, []Repository{{Name: "deploy", GitDir: deploy}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s2.All(ns) {
		switch r.Name {
		case rev.Name:
			if !r.Created.Equal(want) {
				t.Errorf("reopened: Created = %v, want %v", r.Created, want)
			}
		case "deploy.p.pushed":
			if !r.Created.IsZero() {
				t.Errorf("a branch pushed with git: Created = %v, want unknown", r.Created)
			}
		}
	}
}

// Issue 47 #11: a lock names its upstream's repository by URL; reopened,
// it named it only when the upstream's repository had been read first
// (sorted before its downstreams): `get` showed `:webapp/v1`. At 500
// repositories, every lock names it, whatever the order.
func TestLocksNameTheirRepositoryWhateverTheOrder(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	up := h.Publish(ns, "platform", "webapp", storetest.Blueprint)
	n := 500
	if testing.Short() {
		n = 20
	}
	for i := range n {
		repo := fmt.Sprintf("c%03d", i) // before "platform"
		if i%2 == 1 {
			repo = fmt.Sprintf("r%03d", i) // after it
		}
		h.AddRepository(ns, repo)
		if _, err := h.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: repo, Package: "webapp", Workspace: "packagevariant-1",
			Owners: []store.OwnerRef{owner}, Task: store.Task{Type: store.Clone, Upstream: up.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	repos, err := Discover(h.root) // sorted by name, as pvctl opens them
	if err != nil {
		t.Fatal(err)
	}
	again, err := Open(ns, repos)
	if err != nil {
		t.Fatal(err)
	}
	drafts := 0
	for _, r := range again.All(ns) {
		if r.Lifecycle != store.Draft {
			continue
		}
		drafts++
		if r.Lock == nil || r.Lock.Repository != "platform" || r.Lock.Ref != "webapp/v1" || !r.Lock.Matches(up) {
			t.Fatalf("%s: lock %+v, want repository platform, ref webapp/v1", r.Name, r.Lock)
		}
	}
	if drafts != n {
		t.Fatalf("%d drafts reopened, want %d", drafts, n)
	}
}

// A revision's Content is its package's git tree: equal for equal files
// (two publications of one blueprint and the branch holding it), not for
// others; the branch's revision is the placeholder, the tags' are not.
func TestContentIsTheTree(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	files := maps.Clone(storetest.Blueprint)
	files["more.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n"
	h.Publish(ns, "blueprints", "app", files)
	h.Publish(ns, "blueprints", "app", storetest.Blueprint)
	again, err := Open(ns, h.Repositories())
	if err != nil {
		t.Fatal(err)
	}
	revs, err := again.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: "blueprints", Package: "app"})
	if err != nil {
		t.Fatal(err)
	}
	content := map[string]string{}
	for _, r := range revs {
		if r.Content == "" || r.Placeholder != (r.Workspace == "main") {
			t.Fatalf("%s: Content %q, Placeholder %v", r.Name, r.Content, r.Placeholder)
		}
		content[r.Name] = r.Content
	}
	v1, v2, v3, main := content["blueprints.app.v1"], content["blueprints.app.v2"], content["blueprints.app.v3"], content["blueprints.app.main"]
	if v1 != v3 || main != v3 || v2 == v1 {
		t.Fatalf("v1 %s, v2 %s, v3 %s, main %s: want v1 = v3 = main != v2", v1, v2, v3, main)
	}
}
