package gitstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// catalogRepo is a bare repository shaped like Nephio's catalog: packages
// under infra/capi and workloads, release tags <directory>/<package>/<ref>,
// a repository-wide release tag of no package.
func catalogRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	bare, work := filepath.Join(root, "catalog.git"), filepath.Join(root, "work")
	sh := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), gitEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := Init(bare, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(work, "init", "-q", "-b", "main")
	kptfile := func(name string) string {
		return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n"
	}
	for path, text := range map[string]string{
		"infra/capi/kindnet/Kptfile":          kptfile("kindnet"),
		"infra/capi/kindnet/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kindnet\n",
		"infra/capi/cluster-capi/Kptfile":     kptfile("cluster-capi"),
		"workloads/free5gc/Kptfile":           kptfile("free5gc"),
		"nephio/core/nephio-operator/Kptfile": kptfile("nephio-operator"),
	} {
		p := filepath.Join(work, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(work, "add", "-A")
	sh(work, "commit", "-qm", "catalog")
	for _, tag := range []string{"infra/capi/kindnet/v3.0.0", "infra/capi/kindnet/v1", "workloads/free5gc/v3.0.0", "v3.0.0"} {
		sh(work, "tag", tag)
	}
	sh(work, "push", "-q", bare, "main", "--tags")
	return bare
}

// Issue 29 #1: a repository scoped to a directory serves what Porch
// v1.5.3 serves (TestGitRepositoryWithReleaseTagsAndDirectory's shape):
// the packages under it, named relative to it, their tags read as Porch
// reads them; one bare repository registered per directory, as Nephio
// registers its catalog; drafts and publications of a directory-scoped
// repository written at the whole path; one registration's write is not
// the other's conflict.
func TestRepositoryScopedToADirectory(t *testing.T) {
	ctx := context.Background()
	bare := catalogRepo(t)
	deploy := filepath.Join(t.TempDir(), "deploy.git")
	if err := Init(deploy, ""); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ns, []Repository{
		{Name: "catalog-infra-capi", GitDir: bare, Directory: "/infra/capi"},
		{Name: "catalog-workloads", GitDir: bare, Directory: "/workloads/"},
		{Name: "catalog-nephio-core", GitDir: bare, Directory: "nephio/core"},
		{Name: "deploy", GitDir: deploy, Deployment: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range s.All(ns) {
		names = append(names, r.Name+" "+r.Package+" "+r.Workspace+" "+string(r.Lifecycle))
	}
	sort.Strings(names)
	want := []string{
		"catalog-infra-capi.cluster-capi.main cluster-capi main Published",
		"catalog-infra-capi.kindnet.main kindnet main Published",
		"catalog-infra-capi.kindnet.v1 kindnet v1 Published",
		"catalog-infra-capi.kindnet.v3.0.0 kindnet v3.0.0 Published",
		"catalog-nephio-core.nephio-operator.main nephio-operator main Published",
		"catalog-workloads.free5gc.main free5gc main Published",
		"catalog-workloads.free5gc.v3.0.0 free5gc v3.0.0 Published",
	}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("listing (-Porch's +pvkit's):\n%s", d)
	}
	if len(s.Skipped()) != 0 {
		t.Fatalf("skipped: %v", s.Skipped())
	}

	// A clone of kindnet v1: the lock as Porch records it (the package
	// relative to the directory, the tag's whole path, the commit).
	up := findRev(t, s, "catalog-infra-capi.kindnet.v1")
	if up.Revision != 1 {
		t.Fatalf("kindnet/v1 is revision %d", up.Revision)
	}
	rev, err := s.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "kindnet", Workspace: "ws",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.GetResources(ctx, ns, rev.Name)
	if err != nil {
		t.Fatal(err)
	}
	commit := gitOut(t, bare, "rev-parse", "infra/capi/kindnet/v1^{commit}")
	for _, line := range []string{"repo: " + repoURL(bare), "directory: kindnet", "ref: infra/capi/kindnet/v1", "commit: " + commit} {
		if !strings.Contains(res.Files["Kptfile"], line+"\n") {
			t.Fatalf("the clone's Kptfile has no %q:\n%s", line, res.Files["Kptfile"])
		}
	}
	if rev.Lock == nil || !rev.Lock.Matches(up) {
		t.Fatalf("the lock %+v does not match its upstream", rev.Lock)
	}

	// A draft in a directory-scoped repository, proposed and approved:
	// refs and tree at the whole path; the other registrations of the same
	// git directory still write (they share the refs they last read).
	d, err := s.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "catalog-workloads", Package: "oai", Workspace: "ws",
		Task: store.Task{Type: store.Clone, Upstream: "catalog-workloads.free5gc.v3.0.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitOut(t, bare, "ls-tree", "-r", "--name-only", "drafts/workloads/oai/ws"); !strings.Contains(got, "workloads/oai/Kptfile") {
		t.Fatalf("the draft's tree:\n%s", got)
	}
	for _, r := range []store.Revision{d} {
		r.Lifecycle, r.ResourceVersion = store.Proposed, ""
		if err := s.Update(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ApproveRevision(ctx, ns, r.Name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PublishFiles(ns, "catalog-infra-capi", "new", map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: new\n"}); err != nil {
		t.Fatalf("a publication through another registration of the same git directory: %v", err)
	}
	tags := gitOut(t, bare, "tag", "-l")
	for _, tag := range []string{"workloads/oai/v1", "infra/capi/new/v1"} {
		if !strings.Contains(tags, tag+"\n") && !strings.HasSuffix(tags, tag) {
			t.Fatalf("no tag %s:\n%s", tag, tags)
		}
	}
	// Reopened, the store serves the same (a revision approved from a
	// workspace keeps its name, as on Porch).
	again, err := Open(ns, s.Repositories())
	if err != nil {
		t.Fatal(err)
	}
	if findRev(t, again, "catalog-workloads.oai.ws").Revision != 1 || findRev(t, again, "catalog-infra-capi.new.v1").Revision != 1 {
		t.Fatal("reopened: the publications are not served")
	}
}

func findRev(t *testing.T, s *Store, name string) store.Revision {
	t.Helper()
	for _, r := range s.All(ns) {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no revision %s", name)
	return store.Revision{}
}

// Issue 29 #6: a draft cloned from a repository scoped to a directory, the
// store opened again (a second pvctl run): its lock, read back from the
// Kptfile, still matches its upstream, from the branch placeholder and from
// a release tag. The bare repository's own name (catalog) is no
// registration, so the lock never names it (named "catalog", it matched
// nothing and every clone of Nephio's catalog stalled on the second run):
// it names the registration whose directory its ref is under, or none.
func TestDirectoryLockMatchesWhenOpenedAgain(t *testing.T) {
	ctx := context.Background()
	bare := catalogRepo(t)
	deploy := filepath.Join(filepath.Dir(bare), "deploy.git") // beside it, as pvctl keeps them
	if err := Init(deploy, ""); err != nil {
		t.Fatal(err)
	}
	repos := []Repository{{Name: "catalog-infra-capi", GitDir: bare, Directory: "/infra/capi"}, {Name: "deploy", GitDir: deploy, Deployment: true}}
	s, err := Open(ns, repos)
	if err != nil {
		t.Fatal(err)
	}
	for _, up := range []string{"catalog-infra-capi.kindnet.main", "catalog-infra-capi.kindnet.v3.0.0"} {
		ws := strings.ReplaceAll(strings.TrimPrefix(up, "catalog-infra-capi.kindnet."), ".", "-")
		if _, err := s.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "kindnet-" + ws, Workspace: "ws",
			Task: store.Task{Type: store.Clone, Upstream: up}}); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Open(ns, repos)
	if err != nil {
		t.Fatal(err)
	}
	for draft, up := range map[string]string{"deploy.kindnet-main.ws": "catalog-infra-capi.kindnet.main", "deploy.kindnet-v3-0-0.ws": "catalog-infra-capi.kindnet.v3.0.0"} {
		d := findRev(t, again, draft)
		// A ref under the registration's directory names it (issue 46 #4:
		// pvctl names the upstream as it is registered); the branch
		// placeholder's ref (main) says no directory and names none.
		want := "catalog-infra-capi"
		if strings.HasSuffix(up, ".main") {
			want = ""
		}
		if d.Lock == nil || d.Lock.Repository != want || !d.Lock.Matches(findRev(t, again, up)) {
			t.Errorf("%s: lock %+v does not match %s (repository %q)", draft, d.Lock, up, want)
		}
	}
}
