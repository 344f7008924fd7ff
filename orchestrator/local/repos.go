package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/pkg/kptfile"
)

// Repos are a namespace's local repositories as pvctl's verbs use them:
// the git store with its porcelain (publish, push, approve, delete an
// unreadable revision). The verbs go through it, never through a store
// implementation.
type Repos struct {
	*gitstore.Store
	dir    string
	absent []string // registered repositories not served (Served)
}

// Absent says which registered repositories are not served, and why.
func (r *Repos) Absent() []string { return r.absent }

// Skip is a ref the repositories could not read as a revision.
type Skip = gitstore.Skip

// AddRepository creates a bare repository named name in the directory and
// adds it; its git directory.
func (r *Repos) AddRepository(name string) (string, error) {
	repo := gitstore.Repository{Name: name, GitDir: filepath.Join(r.dir, name+".git")}
	if err := gitstore.Init(repo.GitDir, ""); err != nil {
		return "", err
	}
	return repo.GitDir, r.Add(repo)
}

// EnsureRepository serves the bare repository named name by its own name,
// creating it when it is not there (pvctl publish): one that is there but
// served only through Repository objects scoped to its directories (a
// catalog registered per directory) is served once more, sharing its refs.
// It reports whether it created it.
func (r *Repos) EnsureRepository(name string) (string, bool, error) {
	gitDir := filepath.Join(r.dir, name+".git")
	if r.HasRepository(name) {
		return gitDir, false, nil
	}
	if gitstore.IsBare(gitDir) {
		return gitDir, false, r.Add(gitstore.Repository{Name: name, GitDir: gitDir, Deployment: true})
	}
	gitDir, err := r.AddRepository(name)
	return gitDir, err == nil, err
}

// HasRepository reports whether a repository of that name is open.
func (r *Repos) HasRepository(name string) bool {
	for _, repo := range r.Repositories() {
		if repo.Name == name {
			return true
		}
	}
	return false
}

// OpenRepos opens the repositories under dir as the last run registered
// them (Served: the Repository objects its state keeps, by their names and
// directories; every other bare repository by its own name); create makes
// dir when it is missing. A ref the store could not read is left out alone
// (Skipped).
func OpenRepos(dir, namespace string, create bool) (*Repos, error) {
	if err := CheckReposDir(dir); err != nil {
		return nil, err
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	onDisk, err := gitstore.Discover(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no repositories directory %s (--repos; pvctl publish and pvctl run create it)", dir)
	}
	if err != nil {
		return nil, err
	}
	st, err := state.Read(filepath.Join(dir, state.File))
	if err != nil {
		return nil, err
	}
	served, absent := Served(dir, st, onDisk)
	s, err := gitstore.Open(namespace, served)
	if err != nil {
		return nil, err
	}
	return &Repos{Store: s, dir: dir, absent: absent}, nil
}

func SetLifecycle(ctx context.Context, s store.Store, rev store.Revision, to store.Lifecycle) error {
	rev.Lifecycle, rev.ResourceVersion = to, ""
	return s.Update(ctx, rev)
}

// CheckReady refuses a revision one of whose Kptfile readiness gates
// has no True condition, as Porch (and porchctl approve) do.
func CheckReady(ctx context.Context, s store.Store, rev store.Revision) error {
	res, err := s.GetResources(ctx, rev.Namespace, rev.Name)
	if err != nil {
		return err
	}
	kf, err := kptfile.FromFiles(res.Files)
	if err != nil {
		return fmt.Errorf("package revision %s: %w", rev.Name, err)
	}
	if kf == nil {
		return nil
	}
	gate, c, err := kf.NotReady()
	switch {
	case err != nil:
		return fmt.Errorf("package revision %s: Kptfile: %w", rev.Name, err)
	case gate != "" && c == nil:
		return fmt.Errorf("package revision %s is not ready: readiness gate %q has no condition", rev.Name, gate)
	case gate != "":
		return fmt.Errorf("package revision %s is not ready: readiness gate %q is %s (%s: %s)", rev.Name, gate, c.Status, c.Reason, c.Message)
	}
	return nil
}

// allLister is a store that lists a whole namespace at once: the git
// store, and the in-memory engine a cluster plan reads Porch into.
type allLister interface {
	store.Store
	All(namespace string) []store.Revision
}

// find is the revision of a namespace named name. It reads the one
// revision (Read), not the namespace (All copies every
// revision: a no-op pvctl run at 2,500 targets spent 7% of its CPU here,
// and the run grew with the square of the fleet).
func find(s allLister, namespace, name string) (store.Revision, error) {
	r, err := s.Read(context.Background(), namespace, name)
	if errors.Is(err, store.ErrNotFound) {
		return store.Revision{}, fmt.Errorf("package revision %s: not found", name)
	}
	return r, err
}

// PackageRevision is a revision as Porch's API shows it (the Porch store's
// one conversion), for pvctl's -o yaml and json.
func PackageRevision(r store.Revision) porchapi.PackageRevision { return porch.ToAPI(r) }

// RevisionOf is a PackageRevision read from a cluster as pvkit's revision
// (the Porch store's one conversion), for pvctl's verbs that read Porch.
func RevisionOf(pr *porchapi.PackageRevision) store.Revision { return porch.FromAPI(pr) }

// RenderWith makes every update of a draft's files render the package
// first, as Porch renders every push (nil: no render); a render that fails
// writes nothing (store.ErrRenderFailed).
func (r *Repos) RenderWith(ctx context.Context, rd *Render) {
	if rd != nil {
		r.SetRenderer(rd.renderer(ctx))
	}
}
