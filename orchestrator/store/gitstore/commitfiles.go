package gitstore

import (
	"fmt"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// FilesAt reads a package's files as a commit of a repository holds them,
// whatever ref points there now (pvctl verify --rebuild reads the upstream
// at the commit a provenance record names): pkg is relative
// to the repository's directory, as the store names packages. The same
// bounds as every read (a file, a package); a commit the repository does
// not hold, or one without the package, is an error naming both.
func (s *Store) FilesAt(repository, commit, pkg string) (map[string]string, error) {
	r, ok := s.git.repos[repository] // registered at Open, as Repositories reads them
	if !ok {
		return nil, fmt.Errorf("repository %s: %w", repository, store.ErrNotFound)
	}
	if !store.IsCommit(commit) {
		return nil, fmt.Errorf("repository %s: %q is not a commit id", repository, commit)
	}
	cat, err := newObjectReader(r.GitDir)
	if err != nil {
		return nil, err
	}
	files, err := cat.files(commit, r.full(pkg))
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", repository, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("repository %s: commit %s holds no package %s", repository, commit, pkg)
	}
	return files, nil
}
