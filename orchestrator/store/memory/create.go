package memory

import (
	"context"
	"fmt"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
)

// CreateDraft implements store.Store.
func (s *Store) CreateDraft(_ context.Context, spec store.DraftSpec) (store.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.create(spec)
}

func (s *Store) create(spec store.DraftSpec) (store.Revision, error) {
	if _, ok := s.repos[key(spec.Namespace, spec.Repository)]; !ok {
		return store.Revision{}, fmt.Errorf("repository %s/%s: %w", spec.Namespace, spec.Repository, store.ErrNotFound)
	}
	name := store.RevisionName(spec.Repository, spec.Package, spec.Workspace)
	if _, exists := s.revs[key(spec.Namespace, name)]; exists {
		return store.Revision{}, fmt.Errorf("package revision %s/%s: %w", spec.Namespace, name, store.ErrAlreadyExists)
	}
	files, lock, err := s.taskFiles(spec)
	if err == nil {
		files, err = tasks.WithPendingGates(files, spec.ReadinessGates)
	}
	if err != nil {
		return store.Revision{}, err
	}
	if s.render != nil { // Porch renders a draft it creates; a render that fails fails the create
		rendered, status := s.render(files)
		if status.Err != "" {
			return store.Revision{}, fmt.Errorf("package revision %s/%s was not created: %s: %w", spec.Namespace, name, status.Err, store.ErrRenderFailed)
		}
		files = rendered
	}
	rev := store.Revision{
		Namespace: spec.Namespace, Name: name, Repository: spec.Repository, Package: spec.Package,
		Workspace: spec.Workspace, Lifecycle: store.Draft, Owners: append([]store.OwnerRef(nil), spec.Owners...),
		Labels: copyMap(spec.Labels), Annotations: copyMap(spec.Annotations), Lock: lock, Created: s.now().UTC(),
		Tasks: []store.Task{spec.Task},
	}
	if s.persist != nil {
		if err := s.persist.Create(copyRev(rev), files); err != nil {
			return store.Revision{}, err
		}
	}
	rev.ResourceVersion = s.nextVersion()
	s.add(rev, files)
	return copyRev(rev), nil
}

func (s *Store) add(rev store.Revision, files map[string]string) {
	s.revs[key(rev.Namespace, rev.Name)] = &entry{rev: rev, files: files}
	s.byPkg[rev.Key()] = append(s.byPkg[rev.Key()], rev.Name)
	s.index(rev)
}

// taskFiles computes a new draft's files and lock from its task.
func (s *Store) taskFiles(spec store.DraftSpec) (map[string]string, *store.Lock, error) {
	t := spec.Task
	switch t.Type {
	case store.Clone:
		up, err := s.get(spec.Namespace, t.Upstream)
		if err != nil {
			return nil, nil, fmt.Errorf("clone: upstream: %w", err)
		}
		lock := s.lockFor(up.rev)
		upFiles, err := up.read()
		if err != nil {
			return nil, nil, fmt.Errorf("clone: upstream: %w", err)
		}
		files, err := tasks.Clone(upFiles, lock, spec.Package, s.repos[key(spec.Namespace, spec.Repository)])
		return files, lock, err
	case store.Edit:
		src, err := s.get(spec.Namespace, t.Source)
		if err != nil {
			return nil, nil, fmt.Errorf("edit: source: %w", err)
		}
		if src.rev.Repository != spec.Repository || src.rev.Package != spec.Package {
			return nil, nil, fmt.Errorf("edit: source %s is not a revision of %s/%s", t.Source, spec.Repository, spec.Package)
		}
		files, err := src.read()
		if err != nil {
			return nil, nil, fmt.Errorf("edit: source: %w", err)
		}
		return copyFiles(files), src.rev.Lock, nil
	case store.Upgrade:
		var es [3]*entry
		var fs [3]map[string]string
		for i, n := range []string{t.OldUpstream, t.NewUpstream, t.Local} {
			e, err := s.get(spec.Namespace, n)
			if err == nil {
				fs[i], err = e.read()
			}
			if err != nil {
				return nil, nil, fmt.Errorf("upgrade: %w", err)
			}
			es[i] = e
		}
		lock := s.lockFor(es[1].rev)
		files, err := tasks.Upgrade(fs[0], fs[1], fs[2], lock)
		return files, lock, err
	}
	return nil, nil, fmt.Errorf("unknown task type %q", t.Type)
}

func (s *Store) get(namespace, name string) (*entry, error) {
	e, ok := s.revs[key(namespace, name)]
	if !ok {
		return nil, fmt.Errorf("package revision %s/%s: %w", namespace, name, store.ErrNotFound)
	}
	return e, nil
}

// Publish adds a published revision of a package with the given files (for
// seeding upstreams): workspace v<N>, revision N, the next number. It
// panics if the persister fails; a persistent store uses PublishFiles.
func (s *Store) Publish(namespace, repo, pkg string, files map[string]string) store.Revision {
	rev, err := s.PublishFiles(namespace, repo, pkg, files)
	if err != nil {
		panic(err)
	}
	return rev
}

// PublishFiles is Publish, reporting the persister's error.
func (s *Store) PublishFiles(namespace, repo, pkg string, files map[string]string) (store.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := store.PackageKey{Namespace: namespace, Repository: repo, Package: pkg}
	n := s.latest(k) + 1
	ws := fmt.Sprintf("v%d", n)
	rev := store.Revision{Namespace: namespace, Name: store.RevisionName(repo, pkg, ws), Repository: repo, Package: pkg,
		Workspace: ws, Revision: n, Lifecycle: store.Published}
	if _, exists := s.revs[key(namespace, rev.Name)]; exists {
		return store.Revision{}, fmt.Errorf("package revision %s/%s: %w", namespace, rev.Name, store.ErrAlreadyExists)
	}
	if s.persist != nil {
		if err := s.persist.Publish(store.Revision{}, copyRev(rev), files); err != nil {
			return store.Revision{}, err
		}
	}
	s.known(namespace, repo)
	rev.ResourceVersion = s.nextVersion()
	s.add(rev, copyFiles(files))
	return copyRev(rev), nil
}

func (s *Store) latest(k store.PackageKey) int {
	n := 0
	for _, name := range s.byPkg[k] {
		if r := s.revs[key(k.Namespace, name)].rev; r.Revision > n {
			n = r.Revision
		}
	}
	return n
}

// Approve publishes a Draft or Proposed revision with the package's next
// revision number, as Porch's approval does.
func (s *Store) Approve(namespace, name string) (store.Revision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.get(namespace, name)
	if err != nil {
		return store.Revision{}, err
	}
	if e.rev.Lifecycle.IsPublished() {
		return store.Revision{}, fmt.Errorf("package revision %s/%s is already published", namespace, name)
	}
	next := copyRev(e.rev)
	next.Revision = s.latest(e.rev.Key()) + 1
	next.Lifecycle = store.Published
	next.PublishedBy = s.approver
	files, err := e.read()
	if err != nil {
		return store.Revision{}, err
	}
	if s.persist != nil {
		if err := s.persist.Publish(copyRev(e.rev), copyRev(next), files); err != nil {
			return store.Revision{}, err
		}
	}
	e.rev.Revision, e.rev.Lifecycle, e.rev.PublishedBy = next.Revision, next.Lifecycle, next.PublishedBy
	e.rev.ResourceVersion = s.nextVersion()
	return copyRev(e.rev), nil
}

// ApproveRevision implements store.Store: as Porch, only a Proposed
// revision is approved.
func (s *Store) ApproveRevision(_ context.Context, namespace, name string) (store.Revision, error) {
	s.mu.Lock()
	e, err := s.get(namespace, name)
	lifecycle := store.Lifecycle("")
	if err == nil {
		lifecycle = e.rev.Lifecycle
	}
	s.mu.Unlock()
	if err != nil {
		return store.Revision{}, err
	}
	if lifecycle != store.Proposed {
		return store.Revision{}, fmt.Errorf("package revision %s/%s is %s: only a Proposed revision can be approved", namespace, name, lifecycle)
	}
	return s.Approve(namespace, name)
}

// Files returns a revision's files (for tests).
func (s *Store) Files(namespace, name string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.revs[key(namespace, name)]; ok {
		files, _ := e.read()
		return copyFiles(files)
	}
	return nil
}
