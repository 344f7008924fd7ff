package settled

import (
	"context"
	"errors"
	"fmt"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// ListOwned lists the revisions owned by uid as the inner store lists
// them, without the drafts taken for lost (phantoms), with the draft the
// owner made last when the listing lacks it (rule listing-lags): read
// directly, it is returned when it is the owner's, taken back when it is
// there without owner and not published (Reclaimed names it), waited for
// (*NotListedError) while it is younger than CreatedTTL and not settled
// gone (two direct reads NotFound in a row, or one of a draft listed
// before), and otherwise forgotten (gone, published, someone else's).
func (s *Store) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	revs, err := s.Store.ListOwned(ctx, namespace, uid)
	if err != nil {
		return nil, err
	}
	revs = s.real(uid, revs)
	d, missing := s.missing(uid, revs)
	if !missing {
		return revs, nil
	}
	rev, err := s.Store.Read(ctx, namespace, d.name)
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	case err == nil && rev.OwnedBy(uid):
		return append(revs, rev), nil
	case err == nil && !rev.Lifecycle.IsPublished() && len(rev.Owners) == 0:
		if rev, err = s.reclaim(ctx, uid, d.spec, rev); err != nil {
			return nil, err
		}
		return append(revs, rev), nil
	case err != nil && s.now().Sub(d.at) < CreatedTTL && !s.gone(uid, d.name):
		return nil, &NotListedError{Name: d.name}
	}
	s.mu.Lock()
	if o := s.rec(uid, false); o != nil && o.created != nil && o.created.name == d.name {
		o.created = nil
	}
	s.mu.Unlock()
	return revs, nil
}

// real leaves the phantoms out of an owner's listing, and notes each
// listed draft's owner; the notes of the owner's drafts the listing no
// longer shows are dropped, and those no owner claimed once old.
func (s *Store) real(uid string, revs []store.Revision) []store.Revision {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.notes) == 0 {
		return revs // the steady case: nothing to leave out, nothing allocated
	}
	listed := make(map[string]bool, len(revs))
	out := revs[:0:0]
	for _, rev := range revs {
		listed[rev.Name] = true
		n := s.notes[rev.Name]
		if n != nil {
			n.owner = uid
		}
		if n == nil || !n.phantom {
			out = append(out, rev)
		}
	}
	now := s.now()
	for name, n := range s.notes {
		// An owner's note goes when its listing no longer shows the draft;
		// a note no listing claimed (a read of a revision nobody lists
		// here, an upstream gone) once it is older than PhantomAfter.
		if n.owner == uid && !listed[name] || n.owner == "" && (n.phantom || !n.unread.IsZero() && now.Sub(n.unread) > PhantomAfter) {
			s.drop(name)
		}
	}
	return out
}

// missing is the draft uid made last when revs lack it; it is
// remembered for as long as it is the draft made last, listed or not:
// Porch can drop a draft's owner reference at any time (a repository
// refresh racing a write), and its owner must then take it back rather
// than create another.
func (s *Store) missing(uid string, revs []store.Revision) (draft, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.rec(uid, false)
	if o == nil || o.created == nil {
		return draft{}, false
	}
	if contains(revs, o.created.name) {
		o.created.listed, o.created.notFound = true, 0
		return *o.created, false
	}
	return *o.created, true
}

// gone records a direct read that found no revision name, and reports
// whether that settles it: twice in a row, or once for a draft listed
// before. A draft Porch lost right after creating it is then created
// again within a second or so, not after CreatedTTL.
func (s *Store) gone(uid, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.rec(uid, false)
	if o == nil || o.created == nil || o.created.name != name {
		return true
	}
	o.created.notFound++
	return o.created.listed || o.created.notFound >= 2
}

// Create creates a draft as spec asks, owned by its first owner, settling
// Porch's answer (rule idempotent-drafts, rule never-ownerless): the draft
// of a create that failed before, recorded since without owner, is taken
// back instead of creating another; a create that fails is read back at
// once past the cache, and the draft there is the create's when it is the
// owner's (the create succeeded after all), taken back when it has no
// owner, and a workspace taken though the listing did not show it moves
// to next(workspace), at most MaxTakenWorkspaces times. reclaimed says the
// draft returned was taken back. A create that fails is remembered (a
// later create, or listing, takes its draft back if it shows up), but for
// a render failure, which is returned as it is, with no read back.
func (s *Store) Create(ctx context.Context, spec store.DraftSpec, next func(taken string) string) (rev store.Revision, reclaimed bool, err error) {
	wrote(ctx)
	uid := ownerOf(spec)
	if rev, ok, err := s.reclaimAsked(ctx, uid, spec); ok || err != nil {
		return rev, ok, err
	}
	rev, err = s.Store.CreateDraft(ctx, spec)
	if errors.Is(err, store.ErrRenderFailed) {
		// Porch refused it: it rendered the draft it made and, the render
		// failing, rolled it back (closed, then deleted: v1.5.3's
		// CreatePackageRevision). What a read finds is that draft on its
		// way out, ownerless, and taking it back fails NotFound: the
		// package's own failure must reach the variant as a render failure,
		// not as Porch's. It is not read back, and not asked for again.
		s.mu.Lock()
		s.rec(uid, true).renderFailed = &failedRender{name: store.RevisionName(spec.Repository, spec.Package, spec.Workspace), task: spec.Task, err: err}
		s.mu.Unlock()
		return store.Revision{}, false, &CreateError{Workspace: spec.Workspace, Err: err}
	}
	for taken := 0; err != nil; taken++ {
		name := store.RevisionName(spec.Repository, spec.Package, spec.Workspace)
		got, rerr := s.Store.Read(ctx, spec.Namespace, name) // past the cache, which may not have it
		if rerr == nil && !got.Lifecycle.IsPublished() {
			rf := s.renderFailedAt(uid, name)
			if got.OwnedBy(uid) {
				rev, err = got, nil // the create succeeded after all
				break
			} else if len(got.Owners) == 0 && rf != nil && rf.task == spec.Task {
				// The draft Porch rolled back when this same create failed
				// its render, still listed ("workspaceNames must be
				// unique"): the render failure is the answer, again.
				return store.Revision{}, false, &CreateError{Workspace: spec.Workspace,
					Err: fmt.Errorf("%w (Porch still lists %s, the draft it rolled back, and refuses its workspace)", rf.err, name)}
			} else if len(got.Owners) == 0 && rf == nil {
				rev, err = s.reclaim(ctx, uid, spec, got)
				return rev, err == nil, err
			}
			// Else the rolled-back draft of an earlier create (another
			// upstream: the fix): its workspace is taken, the next one below.
		}
		if (rerr != nil && !errors.Is(rerr, store.ErrNotFound)) || !errors.Is(err, store.ErrAlreadyExists) || taken == MaxTakenWorkspaces || next == nil {
			break
		}
		spec.Workspace = next(spec.Workspace)
		rev, err = s.Store.CreateDraft(ctx, spec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.rec(uid, true)
	if err != nil {
		o.asked = &draft{spec: spec, name: store.RevisionName(spec.Repository, spec.Package, spec.Workspace), at: s.now()}
		return store.Revision{}, false, &CreateError{Workspace: spec.Workspace, Err: err}
	}
	o.created, o.asked, o.renderFailed = &draft{spec: spec, name: rev.Name, at: s.now()}, nil, nil
	return rev, false, nil
}

// renderFailedAt is the owner's last create of name that Porch refused
// for its render, or nil.
func (s *Store) renderFailedAt(uid, name string) *failedRender {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.rec(uid, false); o != nil && o.renderFailed != nil && o.renderFailed.name == name {
		return o.renderFailed
	}
	return nil
}

// CreateError is a create that failed, in the workspace it asked for last.
type CreateError struct {
	Workspace string
	Err       error
}

func (e *CreateError) Error() string { return e.Err.Error() }
func (e *CreateError) Unwrap() error { return e.Err }

// CreateDraft is Create without moving past a taken workspace.
func (s *Store) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	rev, _, err := s.Create(ctx, spec, nil)
	return rev, err
}

// reclaimAsked takes back the draft of the owner's failed create of the
// same package when it is there without owner.
func (s *Store) reclaimAsked(ctx context.Context, uid string, spec store.DraftSpec) (store.Revision, bool, error) {
	s.mu.Lock()
	var asked *draft
	if o := s.rec(uid, false); o != nil && o.asked != nil && o.asked.spec.Repository == spec.Repository && o.asked.spec.Package == spec.Package {
		asked = o.asked
	}
	s.mu.Unlock()
	if asked == nil {
		return store.Revision{}, false, nil
	}
	rev, err := s.Store.Read(ctx, spec.Namespace, asked.name)
	if err != nil || rev.Lifecycle.IsPublished() || len(rev.Owners) > 0 {
		return store.Revision{}, false, nil
	}
	rev, err = s.reclaim(ctx, uid, spec, rev)
	return rev, err == nil, err
}

// reclaim makes uid the owner of an ownerless draft it asked for, with the
// labels and annotations its create asked for.
func (s *Store) reclaim(ctx context.Context, uid string, spec store.DraftSpec, rev store.Revision) (store.Revision, error) {
	rev.Owners = spec.Owners
	rev.Labels = store.Overlay(rev.Labels, spec.Labels)
	rev.Annotations = store.Overlay(rev.Annotations, spec.Annotations)
	wrote(ctx) // a listing that takes a draft back writes too
	err := s.Store.Update(ctx, rev)
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.rec(uid, true)
	if err != nil {
		o.asked = &draft{spec: spec, name: rev.Name, at: s.now()}
		return store.Revision{}, fmt.Errorf("taking back the ownerless draft %s: %w", rev.Name, err)
	}
	o.created, o.asked = &draft{spec: spec, name: rev.Name, at: s.now()}, nil
	o.reclaimed = append(o.reclaimed, rev.Name)
	rev.ResourceVersion = "" // changed by the update
	return rev, nil
}

// ownerOf is the UID of a draft's controller owner (its first owner).
func ownerOf(spec store.DraftSpec) string {
	for _, o := range spec.Owners {
		if o.Controller {
			return o.UID
		}
	}
	if len(spec.Owners) > 0 {
		return spec.Owners[0].UID
	}
	return ""
}

// WithNamed is revs, an owner's revisions of package key as listed, with
// the revisions named that the listing lacks, read directly (rule
// listing-lags): the store remembers only what this process made, and an
// owner handed over from another process (a shard's hand-over, a
// restart) knows its drafts by name alone, from its status (e2e-porch
// TestShardsOnPorch: the listing lagged the hand-over, and the new shard
// cloned a second draft beside the first). A named revision that is gone,
// not the owner's or of another package is left out. Steady state costs
// nothing: the listing shows them.
func (s *Store) WithNamed(ctx context.Context, key store.PackageKey, uid string, revs []store.Revision, names []string) ([]store.Revision, error) {
	for _, name := range names {
		if name == "" || contains(revs, name) {
			continue
		}
		rev, err := s.Store.Read(ctx, key.Namespace, name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			continue
		case err != nil:
			return nil, fmt.Errorf("reading %s, named but not listed: %w", name, err)
		case rev.Key() != key || !rev.OwnedBy(uid):
			continue
		}
		revs = append(revs, rev)
	}
	return revs, nil
}
