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
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
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
	// Deployment is Porch's spec.deployment: a clone into the repository
	// gets a package context generated.
	Deployment bool
	// Directory is Porch's spec.git.directory: the repository serves the
	// packages under it, named relative to it (directory.go).
	Directory string
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
// The branch placeholder of a package the store cannot read is listed,
// Unreadable (a commit that breaks the package on the branch
// hides nothing from drift).
func (s *Store) ListRevisions(ctx context.Context, k store.PackageKey) ([]store.Revision, error) {
	revs, err := s.engine.ListRevisions(ctx, k)
	if err != nil || k.Namespace != s.git.namespace {
		return revs, err
	}
	if rev, ok := s.unreadableBranch(k); ok {
		revs = append(revs, rev)
	}
	return revs, nil
}

// unreadableBranch is the branch placeholder of package k when the store
// could not read it: its package on the branch does not load, or the
// branch's tree itself does not (then every package of the repository).
func (s *Store) unreadableBranch(k store.PackageKey) (store.Revision, bool) {
	r := s.git.repos[k.Repository]
	if r == nil {
		return store.Revision{}, false
	}
	name := store.RevisionName(k.Repository, k.Package, r.Branch)
	for _, sk := range s.git.skipped {
		whole := sk.Revision.Name == "" && sk.Ref == branchRef(r.Branch)
		if sk.Repository != k.Repository || !(whole || sk.Revision.Placeholder && sk.Revision.Name == name) {
			continue
		}
		rev := sk.Revision
		if whole {
			rev = store.Revision{Namespace: s.git.namespace, Repository: k.Repository, Package: k.Package, Workspace: r.Branch,
				Lifecycle: store.Published, Revision: -1, Name: name, Placeholder: true}
		}
		rev.Unreadable = sk.Err.Error()
		return rev, true
	}
	return store.Revision{}, false
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
	res, err := s.engine.GetResources(ctx, namespace, name)
	if errors.Is(err, store.ErrNotFound) && namespace == s.git.namespace {
		for _, sk := range s.git.skipped {
			if sk.Revision.Name == name {
				return res, fmt.Errorf("package revision %s cannot be read: %v: %w", name, sk.Err, store.ErrUnreadable)
			}
		}
	}
	return res, err
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

// Read implements store.Store.
func (s *Store) Read(ctx context.Context, namespace, name string) (store.Revision, error) {
	return s.engine.Read(ctx, namespace, name)
}

// ApproveRevision implements store.Store: as Porch, only a Proposed
// revision is approved.
func (s *Store) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	rev, err := s.engine.Read(ctx, namespace, name) // one revision, not the namespace's copy
	if errors.Is(err, store.ErrNotFound) {
		return store.Revision{}, fmt.Errorf("package revision %s: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return store.Revision{}, err
	}
	if rev.Lifecycle != store.Proposed {
		return store.Revision{}, fmt.Errorf("package revision %s/%s is %s: only a Proposed revision can be approved", namespace, name, rev.Lifecycle)
	}
	return s.Approve(namespace, name)
}

// find is the revision of revs named name.

// placeholder refreshes Porch's branch placeholder of a package just
// published on the branch, so that the store serves what a reopened one
// would.
func (s *Store) placeholder(pub store.Revision, files map[string]string) {
	r := s.git.repos[pub.Repository]
	if r == nil {
		return
	}
	if pub.Revision > 0 {
		s.engine.SetCommit(pub.Namespace, pub.Name, r.refs[r.refFor(pub)], r.Branch)
	}
	lock, _ := r.lockOf(files)
	s.engine.SetPlaceholder(store.Revision{Namespace: pub.Namespace, Repository: pub.Repository, Package: pub.Package,
		Workspace: r.Branch, Revision: -1, Lifecycle: store.Published, Lock: lock, Commit: r.refs[branchRef(r.Branch)], Branch: r.Branch,
		Name: store.RevisionName(pub.Repository, pub.Package, r.Branch)}, files)
}

// backend persists the memory store's changes to git (memory.Persister).
type backend struct {
	namespace string
	repos     map[string]*repo
	byURL     map[string][]*repo // the repositories of one git directory
	now       func() time.Time
	skipped   []Skip
	edit      bool // the write under way is a person's (PushFiles)
	// sign signs each commit the store writes (SignCommits; nil: unsigned).
	sign CommitSigner
}

// CommitSigner signs a commit's payload (the commit object without its
// signature header), returning the armored signature git keeps in its
// gpgsig header: an SSH signature in the namespace "git" is one `git
// verify-commit` checks with gpg.ssh.allowedSignersFile
// (rule signed-commits).
type CommitSigner func(payload []byte) ([]byte, error)

// SetApprover names who the store's approvals from now on are made by,
// kept in the repository's metadata as the revision's PublishedBy.
func (s *Store) SetApprover(who string) { s.engine.SetApprover(who) }

// SignCommits signs every commit the store writes from now on (nil:
// unsigned).
func (s *Store) SignCommits(sign CommitSigner) { s.git.sign = sign }

type repo struct {
	Repository
	b    *backend
	url  string // repoURL(GitDir), once
	meta *metadata
	// refs are the branches and tags as the store last read or wrote
	// them; a ref found elsewhere when writing means another writer.
	refs map[string]string
	// cat reads the repository's objects for the revisions' lazy loads,
	// one at a time (catMu).
	cat   *objectReader
	catMu sync.Mutex
}

// Open opens the repositories as a store for namespace, loading every
// package revision they hold. Every repository is registered before any is
// read: a lock names its upstream repository by URL, and that is resolved
// to a name among all of them (a repository read before its upstream's was
// registered lost the name: `:webapp/v1` where `platform:webapp/v1` was
// meant, whenever the upstream sorted after its downstreams).
func Open(namespace string, repos []Repository) (*Store, error) {
	b := &backend{namespace: namespace, repos: map[string]*repo{}, byURL: map[string][]*repo{}, now: time.Now}
	s := &Store{engine: memory.NewPersistent(b), git: b}
	s.engine.SetOrigin(b.origin)
	registered := make([]*repo, 0, len(repos))
	for _, r := range repos {
		rp, err := s.register(r)
		if err != nil {
			return nil, err
		}
		registered = append(registered, rp)
	}
	for _, rp := range registered {
		if err := s.read(rp); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Add opens one more repository.
func (s *Store) Add(r Repository) error {
	rp, err := s.register(r)
	if err != nil {
		return err
	}
	if err := s.read(rp); err != nil {
		s.unregister(rp)
		return err
	}
	return nil
}

// register checks a repository and makes it known by name and URL,
// reading nothing of its refs yet.
func (s *Store) register(r Repository) (*repo, error) {
	if r.Branch == "" {
		r.Branch = DefaultBranch
	}
	r.Directory = cleanDirectory(r.Directory)
	if _, dup := s.git.repos[r.Name]; dup {
		return nil, fmt.Errorf("repository %q: named twice", r.Name)
	}
	if err := checkBare(r.GitDir); err != nil {
		return nil, fmt.Errorf("repository %q: %w", r.Name, err)
	}
	// Repositories of one git directory (one per spec.git.directory, as
	// Nephio registers its catalog) share what the store keeps of it: the
	// metadata file and the refs as last read or written, so that one's
	// write is not another's conflict or lost update.
	url := repoURL(r.GitDir)
	shared := s.git.byURL[url] // indexed: opening a thousand repositories compares none
	var meta *metadata
	if len(shared) > 0 {
		meta = shared[0].meta
	} else {
		var err error
		if meta, err = readMetadata(r.GitDir); err != nil {
			return nil, fmt.Errorf("repository %q: %w", r.Name, err)
		}
	}
	rp := &repo{Repository: r, b: s.git, meta: meta, url: url}
	s.git.repos[r.Name] = rp
	s.git.byURL[url] = append(shared, rp)
	return rp, nil
}

// unregister forgets a repository register made known.
func (s *Store) unregister(rp *repo) {
	delete(s.git.repos, rp.Name)
	s.git.byURL[rp.url] = slices.DeleteFunc(s.git.byURL[rp.url], func(o *repo) bool { return o == rp })
}

// read loads a registered repository's revisions into the engine.
func (s *Store) read(rp *repo) error {
	revs, loads, skipped, err := s.git.load(rp)
	if err != nil {
		return fmt.Errorf("repository %q: %w", rp.Name, err)
	}
	for _, o := range s.git.byURL[rp.url] {
		o.refs = rp.refs // the refs just read
	}
	s.git.skipped = append(s.git.skipped, skipped...)
	s.engine.SetDeployment(s.git.namespace, rp.Name, rp.Deployment)
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
			ops = append(ops, [2]string{r.deletionRef(k.Revision), ""})
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

// Tag gives a published revision a second tag, <package>/<tag>, on its
// commit, as `git tag` would: a catalog's version, which a semver upstream
// selects (rule floating-versions; pvctl publish --tag). The tag must not
// exist yet; it is served from the next read of the repository.
func (s *Store) Tag(rev store.Revision, tag string) error {
	r, err := s.git.repoOf(rev)
	if err != nil {
		return err
	}
	sha := r.refs[r.refFor(rev)]
	if !rev.Lifecycle.IsPublished() || sha == "" {
		return fmt.Errorf("package revision %s is %s: only a published revision is tagged", rev.Name, rev.Lifecycle)
	}
	ref := tagsPrefix + rev.Package + "/" + tag
	if _, ok := r.refs[ref]; ok {
		return fmt.Errorf("tag %s/%s: %w in repository %s", rev.Package, tag, store.ErrAlreadyExists, rev.Repository)
	}
	return r.update([2]string{ref, sha})
}
