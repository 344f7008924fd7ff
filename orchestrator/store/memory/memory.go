// Package memory is an in-memory store.Store that behaves like Porch for what
// the orchestrator uses: repositories hold package revisions; a clone copies
// the upstream's files, records the upstream lock in the revision and the
// Kptfile as Porch does (store/tasks), and regenerates package-context.yaml
// in a deployment repository; an edit copies a revision;
// an upgrade merges old upstream, new upstream and local three ways (kyaml's
// merge3); approval publishes a revision with the next number. Published
// revisions are immutable and can only be deleted after DeletionProposed.
//
// Store is the engine: Porch's semantics and nothing else. The git store
// builds on it (persisting each change first); tests and benchmarks use Fake
// (fake.go), which counts every call, injects faults and serves a
// client.Client view.
package memory

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
)

type entry struct {
	rev   store.Revision
	files map[string]string
	// load reads the files of a revision restored lazily (RestoreLazy),
	// once, when they are first needed; nil once read.
	load func() (map[string]string, error)
}

// read is the entry's files, read first when restored lazily. A read that
// fails is the caller's error, and is tried again next time.
func (e *entry) read() (map[string]string, error) {
	if e.load != nil {
		f, err := e.load()
		if err != nil {
			return nil, fmt.Errorf("package revision %s: %w", e.rev.Name, err)
		}
		e.files, e.load = f, nil
	}
	return e.files, nil
}

// Store is the in-memory store.
type Store struct {
	mu      sync.Mutex
	repos   map[string]bool // namespace/name -> a deployment repository (Porch's spec.deployment)
	origin  Origin
	revs    map[string]*entry
	byPkg   map[store.PackageKey][]string // revision names
	byOwner map[string]map[string]bool    // namespace/owner UID -> revision names
	version int
	persist Persister
	render  Renderer
	now     func() time.Time // stamps a new draft's Created
	// approver is who approves, recorded as a revision's PublishedBy
	// (SetApprover; "": not known).
	approver string
}

// SetApprover names who the store's approvals from now on are made by
// (store.Revision.PublishedBy): pvctl approve's user, pvctl run's policy.
func (s *Store) SetApprover(who string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.approver = who
}

// SetClock sets the clock that stamps new drafts (Revision.Created).
func (s *Store) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Renderer is what Porch does on every resource update: render the package's
// Kptfile pipeline (through its function runner). It returns the rendered
// files and the render status; a status with an error is a failed render,
// after which Porch writes nothing and the update fails with
// store.ErrRenderFailed. A store without one renders nothing (an empty
// status), as a package with no pipeline does.
type Renderer func(files map[string]string) (map[string]string, store.RenderStatus)

// SetRenderer makes the store render on every UpdateResources, as Porch does.
func (s *Store) SetRenderer(r Renderer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.render = r
}

// Persister keeps a store's changes somewhere durable (the local git store
// does, in git). Each method is called with the store locked, after the
// store's own checks pass and before the change is applied in memory: an
// error aborts the change, so memory never holds what was not persisted.
type Persister interface {
	// Create persists a new draft.
	Create(rev store.Revision, files map[string]string) error
	// WriteFiles persists a draft's (or proposed revision's) new files.
	WriteFiles(rev store.Revision, files map[string]string) error
	// Update persists new metadata or a lifecycle change from old to rev.
	Update(old, rev store.Revision) error
	// Delete removes a revision.
	Delete(rev store.Revision) error
	// Publish persists a revision becoming Published: an approval (old is
	// the Draft or Proposed revision) or a seeded publish (old is zero).
	Publish(old, rev store.Revision, files map[string]string) error
}

// New returns an empty store.
func New() *Store {
	return &Store{repos: map[string]bool{}, revs: map[string]*entry{}, byPkg: map[store.PackageKey][]string{},
		byOwner: map[string]map[string]bool{}, now: time.Now}
}

// NewPersistent returns an empty store that persists every change through p
// (fill it with Restore first).
func NewPersistent(p Persister) *Store {
	s := New()
	s.persist = p
	return s
}

// Origin is what a store knows of where a revision lives, for the lock a
// clone or upgrade records as Porch does: the repository's git URL, the
// git ref that holds the revision (its short name: app/v1, main,
// infra/capi/kindnet/v3.0.0) and its commit ("" when unknown: the lock
// names the repository, store.LockFor's ref, and no commit).
type Origin func(rev store.Revision) (url, ref, commit string)

// SetOrigin sets the store's Origin.
func (s *Store) SetOrigin(o Origin) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.origin = o
}

// lockFor is the lock a clone or upgrade from r records.
func (s *Store) lockFor(r store.Revision) *store.Lock {
	l := store.LockFor(r)
	if s.origin != nil {
		var ref string
		if l.URL, ref, l.Commit = s.origin(r); ref != "" {
			l.Ref = ref
		}
	}
	return l
}

// known registers a repository a restored revision names, as a deployment
// repository unless it was registered otherwise.
func (s *Store) known(namespace, repo string) {
	if _, ok := s.repos[key(namespace, repo)]; !ok {
		s.repos[key(namespace, repo)] = true
	}
}

// Restore adds a revision as it was persisted, without persisting it again
// (loading a durable store); its repository is added too.
func (s *Store) Restore(rev store.Revision, files map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known(rev.Namespace, rev.Repository)
	rev.ResourceVersion = s.nextVersion()
	s.add(copyRev(rev), copyFiles(files))
}

// RestoreLazy adds a revision as Restore does, its files read by load when
// first needed (a durable store opens without reading every revision's
// files).
func (s *Store) RestoreLazy(rev store.Revision, load func() (map[string]string, error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known(rev.Namespace, rev.Repository)
	rev.ResourceVersion = s.nextVersion()
	s.add(copyRev(rev), nil)
	s.revs[key(rev.Namespace, rev.Name)].load = load
}

// SetPlaceholder records Porch's branch placeholder of a package (revision
// -1, workspace = the branch) with the files the branch now holds: added
// when new, its files and version replaced otherwise. The git store calls it
// when a publication moves the branch.
func (s *Store) SetPlaceholder(rev store.Revision, files map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known(rev.Namespace, rev.Repository)
	rev.Placeholder = true
	if e, ok := s.revs[key(rev.Namespace, rev.Name)]; ok {
		e.files, e.load = copyFiles(files), nil
		e.rev.Lock, e.rev.Placeholder, e.rev.Content, e.rev.Commit = rev.Lock, true, rev.Content, rev.Commit
		e.rev.ResourceVersion = s.nextVersion()
		return
	}
	rev.ResourceVersion = s.nextVersion()
	s.add(copyRev(rev), copyFiles(files))
}

// SetCommit records the commit that published a revision and the branch
// it is on (the git store calls it when it publishes one), as a store
// that reads it lists it.
func (s *Store) SetCommit(namespace, name, commit, branch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.revs[key(namespace, name)]; ok {
		e.rev.Commit, e.rev.Branch = commit, branch
	}
}

var _ store.Store = (*Store)(nil)

// AddRepository registers a deployment repository (Porch's
// spec.deployment: a clone into it gets a package context generated).
func (s *Store) AddRepository(namespace, name string) {
	s.SetDeployment(namespace, name, true)
}

// SetDeployment registers a repository, a deployment repository or not.
func (s *Store) SetDeployment(namespace, name string, deployment bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[key(namespace, name)] = deployment
}

func key(namespace, name string) string { return namespace + "/" + name }

func (s *Store) nextVersion() string {
	s.version++
	return strconv.Itoa(s.version)
}

var copyFiles = tasks.CopyFiles

func copyRev(r store.Revision) store.Revision {
	r.Owners = append([]store.OwnerRef(nil), r.Owners...)
	r.Labels = copyMap(r.Labels)
	r.Annotations = copyMap(r.Annotations)
	r.Tasks = append([]store.Task(nil), r.Tasks...)
	if r.Lock != nil {
		l := *r.Lock
		r.Lock = &l
	}
	return r
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ListRevisions implements store.Store.
func (s *Store) ListRevisions(_ context.Context, k store.PackageKey) ([]store.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.Revision
	for _, name := range s.byPkg[k] {
		out = append(out, copyRev(s.revs[key(k.Namespace, name)].rev))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListOwned implements store.Store.
func (s *Store) ListOwned(_ context.Context, namespace, uid string) ([]store.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.Revision
	for name := range s.byOwner[key(namespace, uid)] {
		out = append(out, copyRev(s.revs[key(namespace, name)].rev))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// index records the revision under each of its owners; unindex forgets it.
func (s *Store) index(r store.Revision) {
	for _, o := range r.Owners {
		k := key(r.Namespace, o.UID)
		if s.byOwner[k] == nil {
			s.byOwner[k] = map[string]bool{}
		}
		s.byOwner[k][r.Name] = true
	}
}

func (s *Store) unindex(r store.Revision) {
	for _, o := range r.Owners {
		delete(s.byOwner[key(r.Namespace, o.UID)], r.Name)
	}
}

// GetResources implements store.Store.
func (s *Store) GetResources(_ context.Context, namespace, name string) (store.Resources, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.revs[key(namespace, name)]
	if !ok {
		return store.Resources{}, fmt.Errorf("package revision %s/%s: %w", namespace, name, store.ErrNotFound)
	}
	files, err := e.read()
	if err != nil {
		return store.Resources{}, err
	}
	return store.Resources{Files: copyFiles(files), ResourceVersion: e.rev.ResourceVersion}, nil
}

// UpdateResources implements store.Store.
func (s *Store) UpdateResources(_ context.Context, namespace, name string, res store.Resources) (store.RenderStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.revs[key(namespace, name)]
	switch {
	case !ok:
		return store.RenderStatus{}, fmt.Errorf("package revision %s/%s: %w", namespace, name, store.ErrNotFound)
	case e.rev.Lifecycle.IsPublished():
		return store.RenderStatus{}, fmt.Errorf("package revision %s/%s is %s and cannot be changed", namespace, name, e.rev.Lifecycle)
	case res.ResourceVersion != "" && res.ResourceVersion != e.rev.ResourceVersion:
		return store.RenderStatus{}, fmt.Errorf("package revision %s/%s was changed since version %s: %w", namespace, name, res.ResourceVersion, store.ErrConflict)
	}
	files, status := copyFiles(res.Files), store.RenderStatus{}
	if s.render != nil {
		if files, status = s.render(files); status.Err != "" {
			return status, fmt.Errorf("package revision %s/%s was not updated: %s: %w", namespace, name, status.Err, store.ErrRenderFailed)
		}
	}
	if s.persist != nil {
		if err := s.persist.WriteFiles(copyRev(e.rev), files); err != nil {
			return store.RenderStatus{}, err
		}
	}
	if lock, err := tasks.LockOf(files); err == nil && lock != nil {
		// Porch reads a revision's upstream lock from its Kptfile: a write
		// that moves it (an in-place upgrade) moves the revision's.
		if before, err := e.read(); err == nil {
			if was, err := tasks.LockOf(before); err == nil && (was == nil || *was != *lock) {
				e.rev.Lock = lock
			}
		}
	}
	e.files, e.load = copyFiles(files), nil
	e.rev.ResourceVersion = s.nextVersion()
	return status, nil
}

// UpdateResourcesRendered implements store.Store: the update, then the
// files as written (rendered, with a renderer) and the new version.
func (s *Store) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	rs, err := s.UpdateResources(ctx, namespace, name, res)
	if err != nil {
		return rs, store.Resources{}, err
	}
	after, err := s.GetResources(ctx, namespace, name)
	return rs, after, err
}

// Update implements store.Store.
func (s *Store) Update(_ context.Context, rev store.Revision) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.revs[key(rev.Namespace, rev.Name)]
	if !ok {
		return fmt.Errorf("package revision %s/%s: %w", rev.Namespace, rev.Name, store.ErrNotFound)
	}
	if rev.ResourceVersion != "" && rev.ResourceVersion != e.rev.ResourceVersion {
		return fmt.Errorf("package revision %s/%s was changed since version %s: %w", rev.Namespace, rev.Name, rev.ResourceVersion, store.ErrConflict)
	}
	if err := transition(e.rev.Lifecycle, rev.Lifecycle); err != nil {
		return fmt.Errorf("package revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	if s.persist != nil {
		next := copyRev(e.rev)
		next.Lifecycle, next.Owners, next.Labels, next.Annotations = rev.Lifecycle, rev.Owners, rev.Labels, rev.Annotations
		if err := s.persist.Update(copyRev(e.rev), copyRev(next)); err != nil {
			return err
		}
	}
	e.rev.Lifecycle = rev.Lifecycle
	s.unindex(e.rev)
	e.rev.Owners = append([]store.OwnerRef(nil), rev.Owners...)
	s.index(e.rev)
	e.rev.Labels, e.rev.Annotations = copyMap(rev.Labels), copyMap(rev.Annotations)
	e.rev.ResourceVersion = s.nextVersion()
	return nil
}

// transition allows the lifecycle changes Porch allows through an update
// (publishing goes through Approve, the approval subresource).
func transition(from, to store.Lifecycle) error {
	if from == to {
		return nil
	}
	switch {
	case from == store.Draft && to == store.Proposed, from == store.Proposed && to == store.Draft,
		from == store.Published && to == store.DeletionProposed, from == store.DeletionProposed && to == store.Published:
		return nil
	}
	return fmt.Errorf("cannot change lifecycle from %s to %s", from, to)
}

// Delete implements store.Store.
func (s *Store) Delete(_ context.Context, namespace, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.revs[key(namespace, name)]
	if !ok {
		return fmt.Errorf("package revision %s/%s: %w", namespace, name, store.ErrNotFound)
	}
	if e.rev.Lifecycle == store.Published {
		return fmt.Errorf("package revision %s/%s is Published: propose its deletion first", namespace, name)
	}
	if s.persist != nil {
		if err := s.persist.Delete(copyRev(e.rev)); err != nil {
			return err
		}
	}
	delete(s.revs, key(namespace, name))
	s.unindex(e.rev)
	k := e.rev.Key()
	names := s.byPkg[k][:0]
	for _, n := range s.byPkg[k] {
		if n != name {
			names = append(names, n)
		}
	}
	s.byPkg[k] = names
	return nil
}

// All lists every revision of a namespace (what Porch's reconcilers LIST).
func (s *Store) All(namespace string) []store.Revision {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.Revision
	for _, e := range s.revs {
		if e.rev.Namespace == namespace {
			out = append(out, copyRev(e.rev))
		}
	}
	return out
}

// SetFiles replaces a revision's files behind the orchestrator's back (a
// user's edit, for tests), whatever its lifecycle.
func (s *Store) SetFiles(namespace, name string, files map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.revs[key(namespace, name)]; ok {
		e.files, e.load = copyFiles(files), nil
		e.rev.ResourceVersion = s.nextVersion()
	}
}

// Read implements store.Store.
func (s *Store) Read(_ context.Context, namespace, name string) (store.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.revs[key(namespace, name)]
	if !ok {
		return store.Revision{}, fmt.Errorf("package revision %s/%s: %w", namespace, name, store.ErrNotFound)
	}
	return copyRev(e.rev), nil
}
