// Package gitstore is a store.Store on local git repositories laid out the
// way Porch lays out a git repository (layout.go), so that `pvctl run`
// reconciles PackageVariants on a laptop with no cluster, and what it writes
// is what Porch would write: drafts on drafts/ branches, published revisions
// as tags on the repository's branch.
//
// The semantics are the in-memory store's (memory.Store: locks, three-way
// upgrades, lifecycle rules, conflicts); this package loads its state from
// git when it opens and persists every change to git before memory takes
// it. What Porch keeps in the cluster rather than in git (a revision's
// owners, labels and annotations) is kept in pvkit-metadata.json in the git
// directory. Repositories are bare (a remote, as Porch sees it); one process
// writes at a time.
//
// Speed (make bench-pvctl, 1,000 targets): reads (refs, commits, trees) and
// writes of objects happen in process through go-git, and a single ref moves
// with git's own lock-file protocol, so a run spawns no git process per
// repository; the one git process left is `git update-ref --stdin` for a
// publication, whose transaction moves the branch, creates the tag and drops
// the draft branch atomically.
package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
)

// DefaultBranch is the branch of published packages unless a Repository
// says otherwise (Porch's default too).
const DefaultBranch = "main"

// Repository is a local git repository the store serves as a Porch
// Repository.
type Repository struct {
	Name   string // the Repository name
	GitDir string // a bare repository
	Branch string // published packages; DefaultBranch if empty
}

// Store is a store.Store on local git repositories of one namespace: the
// in-memory engine's semantics (held as a field), every change persisted to
// git before the engine applies it.
type Store struct {
	engine *memory.Store
	git    *backend
}

var (
	_ store.Store = (*Store)(nil)
	_ store.Store = (*Store)(nil)
)

// ListRevisions implements store.Store.
func (s *Store) ListRevisions(ctx context.Context, k store.PackageKey) ([]store.Revision, error) {
	return s.engine.ListRevisions(ctx, k)
}

// ListOwned implements store.Store.
func (s *Store) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	return s.engine.ListOwned(ctx, namespace, uid)
}

// CreateDraft implements store.Store.
func (s *Store) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	return s.engine.CreateDraft(ctx, spec)
}

// GetResources implements store.Store.
func (s *Store) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	return s.engine.GetResources(ctx, namespace, name)
}

// UpdateResources implements store.Store.
func (s *Store) UpdateResources(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, error) {
	return s.engine.UpdateResources(ctx, namespace, name, res)
}

// UpdateResourcesRendered implements store.Store: the update, then the
// files as written (rendered, with a renderer) and the new version.
func (s *Store) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	return s.engine.UpdateResourcesRendered(ctx, namespace, name, res)
}

// SetRenderer makes the store render every draft it creates and every
// update of a draft's files, as Porch does (memory.Store.SetRenderer).
func (s *Store) SetRenderer(r memory.Renderer) { s.engine.SetRenderer(r) }

// Update implements store.Store.
func (s *Store) Update(ctx context.Context, rev store.Revision) error {
	return s.engine.Update(ctx, rev)
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, namespace, name string) error {
	return s.engine.Delete(ctx, namespace, name)
}

// All lists every revision of the namespace.
func (s *Store) All(namespace string) []store.Revision { return s.engine.All(namespace) }

// PublishFiles publishes a package's files as its next revision (pvctl publish).
func (s *Store) PublishFiles(namespace, repo, pkg string, files map[string]string) (store.Revision, error) {
	rev, err := s.engine.PublishFiles(namespace, repo, pkg, files)
	if err == nil {
		s.placeholder(rev, files)
	}
	return rev, err
}

// Approve publishes a Draft or Proposed revision with the next number.
func (s *Store) Approve(namespace, name string) (store.Revision, error) {
	rev, err := s.engine.Approve(namespace, name)
	if err == nil {
		if res, gerr := s.engine.GetResources(context.Background(), namespace, name); gerr == nil {
			s.placeholder(rev, res.Files)
		}
	}
	return rev, err
}

// ApproveRevision implements store.Store: as Porch, only a Proposed
// revision is approved.
func (s *Store) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	rev, err := find(s.engine.All(namespace), name)
	if err != nil {
		return store.Revision{}, err
	}
	if rev.Lifecycle != store.Proposed {
		return store.Revision{}, fmt.Errorf("package revision %s/%s is %s: only a Proposed revision can be approved", namespace, name, rev.Lifecycle)
	}
	return s.Approve(namespace, name)
}

// find is the revision of revs named name.
func find(revs []store.Revision, name string) (store.Revision, error) {
	for _, r := range revs {
		if r.Name == name {
			return r, nil
		}
	}
	return store.Revision{}, fmt.Errorf("package revision %s: %w", name, store.ErrNotFound)
}

// placeholder refreshes Porch's branch placeholder of a package just
// published on the branch, so that the store serves what a reopened one
// would.
func (s *Store) placeholder(pub store.Revision, files map[string]string) {
	r := s.git.repos[pub.Repository]
	if r == nil {
		return
	}
	lock, _ := tasks.LockOf(files)
	s.engine.SetPlaceholder(store.Revision{Namespace: pub.Namespace, Repository: pub.Repository, Package: pub.Package,
		Workspace: r.Branch, Revision: -1, Lifecycle: store.Published, Lock: lock,
		Name: store.RevisionName(pub.Repository, pub.Package, r.Branch)}, files)
}

// backend persists the memory store's changes to git (memory.Persister).
type backend struct {
	namespace string
	repos     map[string]*repo
	now       func() time.Time
	skipped   []Skip
	edit      bool // the write under way is a person's (PushFiles)
}

type repo struct {
	Repository
	meta *metadata
	// refs are the branches and tags as the store last read or wrote
	// them; a ref found elsewhere when writing means another writer.
	refs map[string]string
	// cat reads the repository's objects for the revisions' lazy loads,
	// one at a time (catMu).
	cat   *objectReader
	catMu sync.Mutex
}

// lazyFiles reads a package's files from a commit when first needed.
func (r *repo) lazyFiles(commit, pkg string) func() (map[string]string, error) {
	return func() (map[string]string, error) {
		r.catMu.Lock()
		defer r.catMu.Unlock()
		return r.cat.files(commit, pkg)
	}
}

// Open opens the repositories as a store for namespace, loading every
// package revision they hold.
func Open(namespace string, repos []Repository) (*Store, error) {
	b := &backend{namespace: namespace, repos: map[string]*repo{}, now: time.Now}
	s := &Store{engine: memory.NewPersistent(b), git: b}
	for _, r := range repos {
		if err := s.Add(r); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Add opens one more repository.
func (s *Store) Add(r Repository) error {
	if r.Branch == "" {
		r.Branch = DefaultBranch
	}
	if _, dup := s.git.repos[r.Name]; dup {
		return fmt.Errorf("repository %q: named twice", r.Name)
	}
	if err := checkBare(r.GitDir); err != nil {
		return fmt.Errorf("repository %q: %w", r.Name, err)
	}
	meta, err := readMetadata(r.GitDir)
	if err != nil {
		return fmt.Errorf("repository %q: %w", r.Name, err)
	}
	rp := &repo{Repository: r, meta: meta}
	revs, loads, skipped, err := s.git.load(rp)
	if err != nil {
		return fmt.Errorf("repository %q: %w", r.Name, err)
	}
	s.git.skipped = append(s.git.skipped, skipped...)
	s.git.repos[r.Name] = rp
	s.engine.AddRepository(s.git.namespace, r.Name)
	for i := range revs {
		s.engine.RestoreLazy(revs[i], loads[i])
	}
	return nil
}

// Skipped lists the refs of Porch's layout that the store could not read as
// revisions (a tag on a tree, a missing object, a file git would take for
// its own, two refs naming one revision), by repository and ref. Each one
// is left out alone: every other revision of every repository is served.
func (s *Store) Skipped() []Skip {
	out := append([]Skip(nil), s.git.skipped...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Repository != out[j].Repository {
			return out[i].Repository < out[j].Repository
		}
		return out[i].Ref < out[j].Ref
	})
	return out
}

// Skip is a ref the store could not read as a revision, and why. Revision
// is what the ref's name says of it (its name, package, workspace and
// lifecycle), so that it can be listed and deleted by name.
type Skip struct {
	Repository string
	Ref        string
	Err        error
	Revision   store.Revision
}

func (k Skip) String() string {
	return fmt.Sprintf("repository %q: %s is not served: %v", k.Repository, k.Ref, k.Err)
}

// DeleteUnreadable removes the ref of a revision the store could not read
// (Skipped), by the name its ref gives it: the one way to remove a broken
// draft short of git itself. A published revision's tag goes with its
// deletion marker.
func (s *Store) DeleteUnreadable(name string) (Skip, error) {
	for i, k := range s.git.skipped {
		if k.Revision.Name != name {
			continue
		}
		r := s.git.repos[k.Repository]
		ops := [][2]string{{k.Ref, ""}}
		if k.Revision.Lifecycle == store.Published {
			ops = append(ops, [2]string{deletionRef(k.Revision), ""})
		}
		if _, err := r.current(k.Ref); err != nil {
			return k, err
		}
		if err := r.update(ops...); err != nil {
			return k, err
		}
		s.git.skipped = append(s.git.skipped[:i:i], s.git.skipped[i+1:]...)
		return k, nil
	}
	return Skip{}, fmt.Errorf("package revision %s: not found: %w", name, store.ErrNotFound)
}

// PushFiles writes a person's files into a draft (pvctl push): the commit
// says so. (Approval by policy does not read commits: it compares the
// draft's content with the digest in its variant's status.)
func (s *Store) PushFiles(ctx context.Context, namespace, name string, res store.Resources) error {
	s.git.edit = true
	defer func() { s.git.edit = false }()
	_, err := s.engine.UpdateResources(ctx, namespace, name, res)
	return err
}

// Namespace is the namespace the store serves.
func (s *Store) Namespace() string { return s.git.namespace }

// SetClock sets the time commits are stamped with (time.Now by default).
func (s *Store) SetClock(now func() time.Time) {
	s.git.now = now
	s.engine.SetClock(now)
}

// Repositories lists the store's repositories by name.
func (s *Store) Repositories() []Repository {
	out := make([]Repository, 0, len(s.git.repos))
	for _, r := range s.git.repos {
		out = append(out, r.Repository)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Init creates an empty bare repository whose HEAD is branch.
func Init(gitDir, branch string) error {
	if branch == "" {
		branch = DefaultBranch
	}
	// A link (or anything but a directory) in the repository's place would
	// make git init write wherever it points, outside --repos.
	if fi, err := os.Lstat(gitDir); err == nil && !fi.IsDir() {
		kind := "not a directory"
		if fi.Mode()&os.ModeSymlink != 0 {
			kind = "a symbolic link"
		}
		return fmt.Errorf("%s is %s; pvctl creates repositories only as directories of their own", gitDir, kind)
	}
	if err := os.MkdirAll(gitDir, 0o755); err != nil {
		return err
	}
	// In process (go-git): a first run over a thousand repositories spawns no
	// git init for each.
	_, err := gogit.PlainInitWithOptions(gitDir, &gogit.PlainInitOptions{Bare: true,
		InitOptions: gogit.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(branch)}})
	if err != nil {
		return fmt.Errorf("git init %s: %w", gitDir, err)
	}
	return nil
}

// IsBare reports whether dir looks like a bare git repository.
func IsBare(dir string) bool {
	for _, p := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return false
		}
	}
	return true
}

func checkBare(dir string) error {
	if IsBare(dir) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		return fmt.Errorf("%s is a working tree; pvctl needs a bare repository (git init --bare, or git clone --bare), as Porch's remote is", dir)
	}
	return fmt.Errorf("%s is not a git repository", dir)
}

// Discover lists the bare repositories directly under root, each named
// after its directory without a ".git" suffix. A working tree there is an
// error (pvctl would move its branch under it); other entries are ignored.
func Discover(root string) ([]Repository, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Repository
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if err := checkBare(dir); err != nil {
			if strings.Contains(err.Error(), "working tree") {
				return nil, err
			}
			continue
		}
		out = append(out, Repository{Name: strings.TrimSuffix(e.Name(), ".git"), GitDir: dir})
	}
	return out, nil
}

// load reads a repository's package revisions, sorted by name, each with
// the function that reads its files when first needed (bounds.go). A ref
// that cannot be read as a revision, or whose package is over the bounds,
// is skipped with its reason, alone: one odd tag must not hide every other
// revision (fault isolation). Only a repository whose refs cannot be
// listed at all is an error.
func (s *backend) load(r *repo) ([]store.Revision, []func() (map[string]string, error), []Skip, error) {
	all, err := refs(r.GitDir)
	if err != nil {
		return nil, nil, nil, err
	}
	r.refs = all
	names := make([]string, 0, len(all))
	for ref := range all {
		names = append(names, ref)
	}
	sort.Strings(names)
	deletion := map[string]bool{} // "<pkg>/<vN or ref>" with a deletionProposed branch
	for _, ref := range names {
		if p, ok := parseRef(ref); ok && p.lifecycle == store.DeletionProposed {
			deletion[p.pkg+"/"+p.publishedRef()] = true
		}
	}
	cat, err := newObjectReader(r.GitDir)
	if err != nil {
		return nil, nil, nil, err
	}
	r.cat = cat
	var revs []store.Revision
	var files []func() (map[string]string, error)
	var skipped []Skip
	seen := map[string]string{} // revision name -> ref
	for _, ref := range names {
		p, ok := parseRef(ref)
		if !ok || p.lifecycle == store.DeletionProposed {
			continue
		}
		rev, err := s.loadRef(r, cat, ref, p, deletion)
		if errors.Is(err, errNoPackage) {
			continue // a tag of no package (a release tag), as Porch skips it
		}
		if err == nil {
			if other, dup := seen[rev.Name]; dup {
				err = fmt.Errorf("%s already is package revision %s", other, rev.Name)
			}
		}
		if err != nil {
			skipped = append(skipped, Skip{Repository: r.Name, Ref: ref, Err: err, Revision: rev})
			continue
		}
		seen[rev.Name] = ref
		revs = append(revs, rev)
		files = append(files, r.lazyFiles(r.refs[ref], p.pkg))
	}
	// Porch's branch placeholders: every package on the branch, numbered
	// -1 in the workspace named after the branch.
	if head, ok := all[branchRef(r.Branch)]; ok {
		pkgs, trees, err := cat.packages(head)
		if err != nil {
			skipped = append(skipped, Skip{Repository: r.Name, Ref: branchRef(r.Branch), Err: err})
		}
		for _, pkg := range pkgs {
			rev := store.Revision{Namespace: s.namespace, Repository: r.Name, Package: pkg, Workspace: r.Branch,
				Lifecycle: store.Published, Revision: -1, Name: store.RevisionName(r.Name, pkg, r.Branch)}
			if deletion[pkg+"/"+r.Branch] {
				rev.Lifecycle = store.DeletionProposed
			}
			if m, ok := r.meta.Revisions[rev.Name]; ok {
				rev.Owners, rev.Labels, rev.Annotations = m.owners(), m.Labels, m.Annotations
			}
			tree, _, err := cat.measured(trees[pkg], pkg)
			var kf map[string]string
			if err == nil {
				kf, err = cat.kptfile(tree, pkg)
			}
			if err == nil {
				rev.Lock, err = tasks.LockOf(kf)
			}
			if err == nil && seen[rev.Name] != "" {
				err = fmt.Errorf("%s already is package revision %s", seen[rev.Name], rev.Name)
			}
			if err != nil {
				skipped = append(skipped, Skip{Repository: r.Name, Ref: branchRef(r.Branch) + ":" + pkg, Err: err, Revision: rev})
				continue
			}
			seen[rev.Name] = branchRef(r.Branch)
			revs = append(revs, rev)
			files = append(files, r.lazyFiles(head, pkg))
		}
	}
	return revs, files, skipped, nil
}

// errNoPackage: a tag whose commit has no package (no Kptfile) at its path.
var errNoPackage = errors.New("no package at the tag's path")

// isPlaceholder reports whether rev is Porch's branch placeholder of r.
func (r *repo) isPlaceholder(rev store.Revision) bool {
	return rev.Lifecycle.IsPublished() && rev.Revision < 0 && rev.Workspace == r.Branch
}

// loadRef reads the revision a ref of Porch's layout holds: its Kptfile,
// and what its package holds, measured (its files are read later).
func (s *backend) loadRef(r *repo, cat *objectReader, ref string, p parsedRef, deletion map[string]bool) (store.Revision, error) {
	commit := r.refs[ref]
	rev := store.Revision{Namespace: s.namespace, Repository: r.Name, Package: p.pkg, Workspace: p.workspace,
		Lifecycle: p.lifecycle, Revision: p.revision}
	if p.lifecycle == store.Published {
		rev.Workspace = p.publishedRef()
	}
	rev.Name = store.RevisionName(r.Name, rev.Package, rev.Workspace)
	if p.lifecycle == store.Published && p.revision > 0 {
		msg, err := cat.message(commit)
		if err != nil {
			return rev, err
		}
		// The workspace a published revision was approved from, as its
		// commit records it; only for the revision the commit was published
		// as (another tag on the same commit is its own revision, vN).
		if a := annotationOf([]byte("\n\n" + msg)); a.Package == p.pkg && a.Workspace != "" && a.revisionIs(p.revision) {
			rev.Workspace = a.Workspace
		}
	}
	if p.lifecycle == store.Published && deletion[p.pkg+"/"+p.publishedRef()] {
		rev.Lifecycle = store.DeletionProposed
	}
	rev.Name = store.RevisionName(r.Name, rev.Package, rev.Workspace)
	tree, _, found, err := cat.pkgTree(commit, p.pkg)
	if err != nil {
		return rev, err
	}
	f := map[string]string{}
	if found {
		if f, err = cat.kptfile(tree, p.pkg); err != nil {
			return rev, err
		}
	}
	if _, ok := f["Kptfile"]; !ok && p.lifecycle == store.Published {
		return rev, errNoPackage
	}
	if rev.Lock, err = tasks.LockOf(f); err != nil {
		return rev, err
	}
	if m, ok := r.meta.Revisions[rev.Name]; ok {
		rev.Owners, rev.Labels, rev.Annotations = m.owners(), m.Labels, m.Annotations
		rev.Created = m.created()
	}
	return rev, nil
}

// repoOf is the repository of a revision.
func (s *backend) repoOf(rev store.Revision) (*repo, error) {
	r, ok := s.repos[rev.Repository]
	if !ok || rev.Namespace != s.namespace {
		return nil, fmt.Errorf("repository %s/%s is not a local git repository of this store: %w", rev.Namespace, rev.Repository, store.ErrNotFound)
	}
	if err := validPackage(rev.Package); err != nil {
		return nil, fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	return r, nil
}

// current reads the repository's refs and checks that the given ones are
// where the store left them.
func (r *repo) current(check ...string) (map[string]string, error) {
	all, err := refs(r.GitDir)
	if err != nil {
		return nil, err
	}
	for _, ref := range check {
		if all[ref] != r.refs[ref] {
			return nil, fmt.Errorf("%s moved outside this store (now %q, was %q): run again to read it: %w",
				strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/"), all[ref], r.refs[ref], store.ErrConflict)
		}
	}
	return all, nil
}

// update applies ref changes in one transaction; old values are the ones
// the store knows, so a ref moved elsewhere fails it. Each op is
// {ref, new commit} (create or update) or {ref, ""} (delete).
func (r *repo) update(ops ...[2]string) error {
	var lines []string
	for _, op := range ops {
		ref, sha := op[0], op[1]
		old, had := r.refs[ref]
		switch {
		case sha == "" && had:
			lines = append(lines, "delete "+ref+" "+old)
		case sha != "" && had:
			lines = append(lines, "update "+ref+" "+sha+" "+old)
		case sha != "":
			lines = append(lines, "create "+ref+" "+sha)
		}
	}
	if err := updateRefs(r.GitDir, lines); err != nil {
		return err
	}
	for _, op := range ops {
		if op[1] == "" {
			delete(r.refs, op[0])
		} else {
			r.refs[op[0]] = op[1]
		}
	}
	return nil
}

// commit writes files as rev's package on top of ref's commit (or base's,
// when ref does not exist yet) and moves ref to it.
func (s *backend) commit(r *repo, ref, base string, rev store.Revision, files map[string]string, summary string) (string, error) {
	if _, err := r.current(ref, base); err != nil {
		return "", err
	}
	parent, ok := r.refs[ref]
	if !ok {
		parent = r.refs[base]
	}
	sha, err := s.write(r, parent, rev, files, summary)
	if err != nil {
		return "", err
	}
	if err := setRef(r.GitDir, ref, r.refs[ref], sha); err != nil {
		return "", fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	r.refs[ref] = sha
	return sha, nil
}

// write commits files as rev's package on top of parent; no ref moves.
func (s *backend) write(r *repo, parent string, rev store.Revision, files map[string]string, summary string) (string, error) {
	if err := checkFiles(files); err != nil { // what is written can be read back (bounds.go)
		return "", fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	return writeCommit(r.GitDir, parent, rev.Package, files, message(summary, rev), s.now())
}

// Create implements memory.Persister: a draft branch from the repository's
// branch.
func (s *backend) Create(rev store.Revision, files map[string]string) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	ref := refFor(rev)
	if _, exists := r.refs[ref]; exists {
		return fmt.Errorf("package revision %s: branch %s exists: %w", rev.Name, strings.TrimPrefix(ref, "refs/heads/"), store.ErrAlreadyExists)
	}
	if err := r.meta.set(r.GitDir, rev); err != nil {
		return err
	}
	_, err = s.commit(r, ref, branchRef(r.Branch), rev, files, "pvctl: create draft "+rev.Name)
	return err
}

// WriteFiles implements memory.Persister: a commit on the revision's branch.
func (s *backend) WriteFiles(rev store.Revision, files map[string]string) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	summary := "pvctl: update " + rev.Name
	if s.edit {
		summary = "pvctl: edit of " + rev.Name + " (pvctl push)"
	}
	_, err = s.commit(r, refFor(rev), "", rev, files, summary)
	return err
}

// Update implements memory.Persister: metadata, and a lifecycle move as a
// branch rename (Draft <-> Proposed) or a deletion marker (Published <->
// DeletionProposed).
func (s *backend) Update(old, rev store.Revision) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	if err := r.meta.set(r.GitDir, rev); err != nil {
		return err
	}
	if old.Lifecycle == rev.Lifecycle {
		return nil
	}
	switch {
	case old.Lifecycle.IsPublished() && rev.Lifecycle.IsPublished():
		if _, err = r.current(r.refOf(old), deletionRef(rev)); err != nil {
			break
		}
		if rev.Lifecycle == store.DeletionProposed {
			err = r.update([2]string{deletionRef(rev), r.refs[r.refOf(old)]})
		} else {
			err = r.update([2]string{deletionRef(rev), ""})
		}
	default:
		from := refFor(old)
		if _, err = r.current(from, refFor(rev)); err == nil {
			err = r.update([2]string{refFor(rev), r.refs[from]}, [2]string{from, ""})
		}
	}
	if err != nil {
		_ = r.meta.set(r.GitDir, old)
		return err
	}
	return nil
}

// Delete implements memory.Persister: the revision's branch, or for a
// published revision its tag and deletion marker.
func (s *backend) Delete(rev store.Revision) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	if r.isPlaceholder(rev) {
		return s.deletePlaceholder(r, rev)
	}
	ops := [][2]string{{refFor(rev), ""}}
	if rev.Lifecycle == store.DeletionProposed {
		ops = append(ops, [2]string{deletionRef(rev), ""})
	}
	if err := r.update(ops...); err != nil {
		return err
	}
	return r.meta.remove(r.GitDir, rev.Name)
}

// deletePlaceholder deletes Porch's branch placeholder as Porch does: a
// commit on the branch removes the package's directory (its tags stay).
func (s *backend) deletePlaceholder(r *repo, rev store.Revision) error {
	branch := branchRef(r.Branch)
	if _, err := r.current(branch, deletionRef(rev)); err != nil {
		return err
	}
	sha, err := writeCommit(r.GitDir, r.refs[branch], rev.Package, nil, message("pvctl: delete "+rev.Package+" from "+r.Branch, rev), s.now())
	if err != nil {
		return err
	}
	if err := r.update([2]string{branch, sha}, [2]string{deletionRef(rev), ""}); err != nil {
		return err
	}
	return r.meta.remove(r.GitDir, rev.Name)
}

// refOf is the ref that holds a revision: the branch for Porch's branch
// placeholder, else refFor's.
func (r *repo) refOf(rev store.Revision) string {
	if r.isPlaceholder(rev) {
		return branchRef(r.Branch)
	}
	return refFor(rev)
}

// Publish implements memory.Persister: the package's files committed on the
// repository's branch, tagged <package>/v<N>; the draft or proposed branch
// goes.
func (s *backend) Publish(old, rev store.Revision, files map[string]string) error {
	r, err := s.repoOf(rev)
	if err != nil {
		return err
	}
	if err := r.checkNesting(rev.Package); err != nil {
		return fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	if err := r.checkPackages(rev.Package); err != nil {
		return fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	branch := branchRef(r.Branch)
	if _, err := r.current(branch); err != nil {
		return err
	}
	if err := r.meta.set(r.GitDir, rev); err != nil {
		return err
	}
	// The commit is written first, on no ref; then one ref transaction
	// moves the branch, creates the tag and removes the draft or proposed
	// branch. Killed at any point, the repository shows either the old state
	// or the new one (and perhaps an unreferenced commit git gc removes),
	// never a package on the branch without its tag.
	sha, err := s.write(r, r.refs[branch], rev, files, fmt.Sprintf("pvctl: publish %s as revision %d", rev.Name, rev.Revision))
	if err != nil {
		return err
	}
	ops := [][2]string{{branch, sha}, {refFor(rev), sha}}
	if old.Lifecycle != "" {
		ops = append(ops, [2]string{refFor(old), ""})
	}
	return r.update(ops...)
}

// checkPackages refuses a new package past MaxPackages published ones:
// the branch could not be served whole.
func (r *repo) checkPackages(pkg string) error {
	pkgs := map[string]bool{pkg: true}
	for ref := range r.refs {
		if p, ok := parseRef(ref); ok && p.lifecycle == store.Published {
			pkgs[p.pkg] = true
		}
	}
	if len(pkgs) > MaxPackages {
		return fmt.Errorf("the repository would hold %d published packages, more than %d: %w", len(pkgs), MaxPackages, errOverBound)
	}
	return nil
}

// checkNesting refuses a package nested in, or containing, another package
// published on the branch: on `main` their directories would overlap, and
// publishing one would rewrite the other.
func (r *repo) checkNesting(pkg string) error {
	for ref := range r.refs {
		p, ok := parseRef(ref)
		if !ok || p.lifecycle != store.Published || p.pkg == pkg {
			continue
		}
		switch {
		case strings.HasPrefix(pkg, p.pkg+"/"):
			return fmt.Errorf("package %q would be nested inside the published package %q", pkg, p.pkg)
		case strings.HasPrefix(p.pkg, pkg+"/"):
			return fmt.Errorf("package %q would contain the published package %q", pkg, p.pkg)
		}
	}
	return nil
}
