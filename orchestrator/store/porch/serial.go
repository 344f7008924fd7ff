package porch

import (
	"strings"
	"sync"
)

// repoWrites serialises pvkit's writes to one repository (rule
// one-write-per-repository): Porch v1.5.3 answers each write to a
// repository by refreshing its cache of that repository, and a refresh that
// overlaps another write's push can store a listing without the other
// write's new draft under a version that already counts it; every later
// refresh then finds the version unchanged and keeps the listing, so Porch
// reads the draft NotFound (while pvkit's informer still lists it) until
// the next write to the repository (measured: e2e-porch
// TestDeletionPolicies, three variants cloning into one repository at once;
// deploy.c.packagevariant-1 read NotFound for over a minute, came back only
// when packagevariant-2 was pushed beside it). Writes to different
// repositories still run at once.
type repoWrites struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// lock takes the repository's write lock and returns its release.
func (w *repoWrites) lock(namespace, repository string) func() {
	w.mu.Lock()
	if w.locks == nil {
		w.locks = map[string]*sync.Mutex{}
	}
	key := namespace + "/" + repository
	l := w.locks[key]
	if l == nil {
		l = &sync.Mutex{}
		w.locks[key] = l
	}
	w.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// repositoryOf is the repository a package revision's name begins with
// (Porch names them <repository>.<package path>.<workspace>).
func repositoryOf(name string) string {
	repo, _, _ := strings.Cut(name, ".")
	return repo
}
