// Package settled is a store.Store over any other that settles what Porch
// v1.5.3 leaves unsettled (rule porch-failure-modes), so that no
// reconciler handles it: the PackageVariant reconciler, whose drafts they
// are, and through it the controller, pvctl run and pvctl's cluster mode
// all get the same answers.
//
//   - A write answered with an error may have landed (Porch's "remote not
//     found" after its push): the store reads the draft back and returns a
//     *WriteError that says which: landed (the draft moved on from the
//     version the write started from; its digest as it now is), or not
//     known (not landed, or read back as before from a Porch whose cache is
//     behind its push, or not readable: the digest of what was sent, for
//     the next reconcile to confirm). A conflict is refused: nothing landed.
//   - A draft this process created may not be listed yet (the informer
//     cache lags a create; Porch may not send the watch event at all), and
//     Porch may record a draft without its owner reference (its repository
//     refresh got there first, or a create that failed). Each owner's draft
//     made last is remembered (the expectations pattern): ListOwned reads
//     it directly when the listing lacks it and returns it (owned), takes
//     it back (ownerless, not published: its owner, labels and annotations
//     as the create asked), or says the listing is behind (*NotListedError)
//     while it is young and not settled gone. A create that fails is read
//     back at once: the draft made after all is the create's; one recorded
//     ownerless is taken back; a workspace taken that the listing did not
//     show moves to the next; a draft of a failed create that shows up
//     later, ownerless, is taken back by the owner's next create.
//   - A listed draft can read NotFound (Porch dropped it from its cache and
//     shows it again at its next refresh, or lost it): GetResources says so
//     in a *PhantomError, waiting up to PhantomAfter before it is taken for
//     lost and left out of the owner's listing from then on.
//
// What it remembers has a lifetime: an owner's record is forgotten with
// the owner (Forget), a draft's note when the listing no longer shows it.
package settled

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/variant"
)

// CreatedTTL is how long a created draft the listing does not show is
// waited for: a draft deleted meanwhile must not hold its owner for ever.
const CreatedTTL = 2 * time.Minute

// PhantomAfter is how long a listed draft must read NotFound, directly,
// before it is taken for lost. Porch v1.5.3 drops a draft it has just
// created from its cache when a repository refresh that listed the
// repository before the create finishes after it, and shows it again at
// its next refresh; a draft taken for lost sooner is made twice
// (e2e-porch TestDeletionPolicies).
const PhantomAfter = time.Minute

// MaxTakenWorkspaces bounds the workspaces a create tries past the one
// asked for, when Porch says it is taken though the listing did not show
// it.
const MaxTakenWorkspaces = 3

// Store settles a store's answers; the zero value is not usable (New).
type Store struct {
	store.Store
	now    func() time.Time
	mu     sync.Mutex
	owners map[string]*owner
	// notes are the drafts that read NotFound though listed, by name;
	// phantoms counts those taken for lost.
	notes    map[string]*note
	phantoms int
}

// New is a settled store over inner; now is its clock (nil: the real one).
func New(inner store.Store, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{Store: inner, now: now, owners: map[string]*owner{}, notes: map[string]*note{}}
}

// owner is what the store remembers for one owner (a variant's UID).
type owner struct {
	created   *draft   // the draft it made (or took back) last
	asked     *draft   // the draft whose create failed, which Porch may record without owner
	reclaimed []string // taken back since the owner last asked (Reclaimed)
	// renderFailed is the owner's last create that Porch refused for its
	// render (name and error): the draft Porch rolled back may stay listed
	// and readable, ownerless, and refuse every update (NotFound).
	renderFailed *failedRender
}

// failedRender is a create refused for its render: the draft's name, the
// task it asked for, Porch's answer.
type failedRender struct {
	name string
	task store.Task
	err  error
}

// draft is a draft an owner asked for.
type draft struct {
	spec     store.DraftSpec
	name     string
	at       time.Time
	listed   bool // the owner's listing showed it once
	notFound int  // direct reads that found no such revision, in a row
}

// note is what is known of a listed draft that reads NotFound.
type note struct {
	owner   string // whose listing showed it ("": none yet)
	phantom bool
	unread  time.Time // first read NotFound since it last read
}

// NotListedError: the draft the owner created last is neither listed nor
// found yet; the listing is behind its create.
type NotListedError struct{ Name string }

func (e *NotListedError) Error() string {
	return fmt.Sprintf("Porch does not show draft %s yet", e.Name)
}

// PhantomError: a listed draft reads NotFound. Lost: it has for
// PhantomAfter, and is left out of its owner's listing from now on;
// otherwise Waited is how long it has.
type PhantomError struct {
	Name   string
	Waited time.Duration
	Lost   bool
	Err    error
}

func (e *PhantomError) Error() string { return e.Err.Error() }
func (e *PhantomError) Unwrap() error { return e.Err }

// WriteError is a write of a draft's files answered with an error other
// than a conflict or a refused render, read back: Landed, the draft moved
// on since the version the write started from and Digest is the draft as
// it now is; otherwise nothing is known of it and Digest is what was sent.
type WriteError struct {
	Name   string
	Landed bool
	Digest string
	Err    error
}

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// rec is uid's record, made when create is true; the caller holds mu.
func (s *Store) rec(uid string, create bool) *owner {
	o := s.owners[uid]
	if o == nil && create {
		o = &owner{}
		s.owners[uid] = o
	}
	return o
}

// Forget drops all the store remembers for an owner (its variant is gone).
func (s *Store) Forget(uid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.owners, uid)
	for name, n := range s.notes {
		if n.owner == uid {
			s.drop(name)
		}
	}
}

// drop drops a draft's note; the caller holds mu.
func (s *Store) drop(name string) {
	if s.notes[name].phantom {
		s.phantoms--
	}
	delete(s.notes, name)
}

// Size is how many owners the store remembers and how many drafts' notes.
func (s *Store) Size() (owners, notes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.owners), len(s.notes)
}

// Made reports whether name is the draft the owner made last, or whose
// create failed last: the drafts that hold nothing of anyone else's.
func (s *Store) Made(uid, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.rec(uid, false)
	return o != nil && (o.created != nil && o.created.name == name || o.asked != nil && o.asked.name == name)
}

// renderFailedNamed is any owner's last create of name that Porch refused
// for its render, or nil.
func (s *Store) renderFailedNamed(name string) *failedRender {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.owners {
		if o.renderFailed != nil && o.renderFailed.name == name {
			return o.renderFailed
		}
	}
	return nil
}

// ForgetDraft drops a draft made or asked for (deleted by its owner).
func (s *Store) ForgetDraft(uid, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.rec(uid, false); o != nil {
		if o.created != nil && o.created.name == name {
			o.created = nil
		}
		if o.asked != nil && o.asked.name == name {
			o.asked = nil
		}
	}
}

// Reclaimed are the owner's drafts taken back since it last asked.
func (s *Store) Reclaimed(uid string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.rec(uid, false)
	if o == nil {
		return nil
	}
	out := o.reclaimed
	o.reclaimed = nil
	return out
}

// UpdateResourcesRendered writes a draft's files; an error that is not a
// refusal is read back into a *WriteError.
func (s *Store) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	wrote(ctx)
	render, after, err := s.Store.UpdateResourcesRendered(ctx, namespace, name, res)
	if err == nil || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrRenderFailed) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrNoResources) {
		return render, after, err
	}
	we := &WriteError{Name: name, Digest: variant.Fingerprint(res.Files), Err: err}
	now, rerr := s.Store.GetResources(ctx, namespace, name)
	if rerr == nil && res.ResourceVersion != "" && now.ResourceVersion != res.ResourceVersion {
		we.Landed, we.Digest = true, variant.Fingerprint(now.Files)
	}
	return render, store.Resources{}, we
}

// GetResources reads a revision's files; a listed draft that reads
// NotFound directly too is a *PhantomError.
func (s *Store) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	res, err := s.Store.GetResources(ctx, namespace, name)
	if errors.Is(err, store.ErrNoResources) {
		if rf := s.renderFailedNamed(name); rf != nil {
			// The draft Porch rolled back when its create failed the
			// render, still listed with no files (Porch v1.5.3 under
			// load): that render failure is the answer, as the create's was.
			return res, fmt.Errorf("%w (Porch still lists %s, the draft it rolled back, with no files)", rf.err, name)
		}
	}
	if !errors.Is(err, store.ErrNotFound) {
		s.readable(name)
		return res, err
	}
	if _, rerr := s.Store.Read(ctx, namespace, name); !errors.Is(rerr, store.ErrNotFound) {
		return res, err
	}
	waited, lost := s.unreadable(name)
	return res, &PhantomError{Name: name, Waited: waited, Lost: lost, Err: err}
}

// unreadable records a NotFound read of a listed draft: how long it has
// read so, and whether that is long enough to take it for lost.
func (s *Store) unreadable(name string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := s.notes[name]
	if n == nil {
		n = &note{}
		s.notes[name] = n
	}
	if n.unread.IsZero() {
		n.unread = now
	}
	waited := now.Sub(n.unread)
	if waited < PhantomAfter {
		return waited, false
	}
	if !n.phantom {
		s.phantoms++
	}
	n.phantom, n.unread = true, time.Time{}
	return waited, true
}

// readable records that a draft read.
func (s *Store) readable(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.notes[name]; n != nil && !n.phantom {
		delete(s.notes, name)
	}
}

// contains reports whether revs has a revision named name.
func contains(revs []store.Revision, name string) bool {
	return slices.ContainsFunc(revs, func(r store.Revision) bool { return r.Name == name })
}
