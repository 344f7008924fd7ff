package porch

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// failing: the repositories whose last writes all failed as Porch
	// fails a repository (an internal error, "ref file is empty", a
	// timeout, no answer), by namespace/repository; a write that succeeds
	// removes its entry.
	failing map[string]*RepositoryFailure
	now     func() time.Time
}

// RepositoryFailure is a repository whose writes keep failing: since the first of the failures in a row, how many, the last
// error.
type RepositoryFailure struct {
	Namespace, Repository string
	Since                 time.Time
	Failures              int
	Last                  string
}

// write is one write to a repository, holding its lock until end.
type write struct {
	w     *repoWrites
	key   string
	l     *sync.Mutex
	ended bool
}

// lock takes the repository's write lock; end releases it.
func (w *repoWrites) lock(namespace, repository string) *write {
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
	return &write{w: w, key: key, l: l}
}

// end releases the lock (once; later calls only return err) and records
// the write's outcome: a success ends the repository's failure, a failure
// of the repository's (repositoryFailure) adds to it. A failure that is
// not the first in a row is returned naming the repository and for how
// long its writes have failed, so that the variant's condition says it.
func (wr *write) end(err error) error {
	if wr.ended {
		return err
	}
	wr.ended = true
	defer wr.l.Unlock()
	w := wr.w
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now
	if w.now != nil {
		now = w.now
	}
	switch {
	case err == nil:
		delete(w.failing, wr.key)
		return nil
	case !repositoryFailure(err):
		return err
	}
	if w.failing == nil {
		w.failing = map[string]*RepositoryFailure{}
	}
	f := w.failing[wr.key]
	if f == nil {
		ns, repo, _ := strings.Cut(wr.key, "/")
		f = &RepositoryFailure{Namespace: ns, Repository: repo, Since: now()}
		w.failing[wr.key] = f
	}
	f.Failures++
	f.Last = err.Error()
	if f.Failures == 1 {
		return err
	}
	return fmt.Errorf("Porch's repository %s has failed every write for %s (%d in a row; pvkit retries, backing off to %s): %w",
		wr.key, now().Sub(f.Since).Round(time.Second), f.Failures, retryCap, err)
}

// retryCap is kit.MaxRetryDelay, as said in the error (the store does not
// import the reconcilers).
const retryCap = "2m0s"

// repositoryFailure reports whether err is Porch failing a repository
// rather than refusing a request: not a conflict, a missing or existing
// object, a render failure or an invalid request.
func repositoryFailure(err error) bool {
	var st apierrors.APIStatus
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAlreadyExists), errors.Is(err, store.ErrConflict), errors.Is(err, store.ErrRenderFailed):
		return false
	case errors.As(err, &st):
		code := st.Status().Code
		return code >= 500 || code == 429 || code == 0
	}
	return true // no answer: the connection, a timeout
}

// failures lists the failing repositories, by namespace and name.
func (w *repoWrites) failures() []RepositoryFailure {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]RepositoryFailure, 0, len(w.failing))
	for _, f := range w.failing {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Repository < out[j].Namespace+"/"+out[j].Repository
	})
	return out
}

// repositoryOf is the repository a package revision's name begins with
// (Porch names them <repository>.<package path>.<workspace>).
func repositoryOf(name string) string {
	repo, _, _ := strings.Cut(name, ".")
	return repo
}
