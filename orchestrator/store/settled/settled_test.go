package settled

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// scripted is an inner store whose answers a test sets.
type scripted struct {
	store.Store
	owned   []store.Revision
	read    *store.Revision // a direct read (nil: not found)
	readErr error
	reads   int
	updated []store.Revision
	create  func(store.DraftSpec) (store.Revision, error)
}

func (s *scripted) ListOwned(context.Context, string, string) ([]store.Revision, error) {
	return s.owned, nil
}

func (s *scripted) Read(_ context.Context, _, name string) (store.Revision, error) {
	s.reads++
	switch {
	case s.readErr != nil:
		return store.Revision{}, s.readErr
	case s.read == nil || s.read.Name != name:
		return store.Revision{}, store.ErrNotFound
	}
	return *s.read, nil
}

func (s *scripted) Update(_ context.Context, rev store.Revision) error {
	s.updated = append(s.updated, rev)
	return nil
}

func (s *scripted) CreateDraft(_ context.Context, spec store.DraftSpec) (store.Revision, error) {
	return s.create(spec)
}

var t0 = time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)

// made is a settled store over inner whose owner "u" made draft
// deploy.app.packagevariant-1 at t0; the clock reads *now.
func made(t *testing.T, inner *scripted, now *time.Time) *Store {
	t.Helper()
	s := New(inner, func() time.Time { return *now })
	inner.create = func(spec store.DraftSpec) (store.Revision, error) {
		return store.Revision{Name: store.RevisionName(spec.Repository, spec.Package, spec.Workspace), Lifecycle: store.Draft, Owners: spec.Owners}, nil
	}
	if _, _, err := s.Create(context.Background(), spec(), nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func spec() store.DraftSpec {
	return store.DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "packagevariant-1",
		Owners: []store.OwnerRef{{UID: "u", Controller: true}}, Labels: map[string]string{"env": "prod"}}
}

const d = "deploy.app.packagevariant-1"

// The expectations of a draft made (rule listing-lags), in a table: what
// the owner's listing says of the draft it made last, given the listing
// and what a direct read finds: present, read directly (the listing
// lags), taken back (ownerless), waited for, or forgotten.
func TestListOwnedSettlesTheDraftMadeLast(t *testing.T) {
	someone := []store.OwnerRef{{UID: "someone"}}
	mine := []store.OwnerRef{{UID: "u"}}
	for _, tt := range []struct {
		name      string
		listed    bool
		read      *store.Revision
		readErr   error
		reads     int  // direct reads that found nothing before
		wasListed bool // the listing showed it before
		at        time.Duration
		want      string // "present", "unlisted", "reclaim", "wait", "lost"
		wantErr   string
	}{
		{name: "listed", listed: true, want: "present"},
		{name: "the owner's, not listed: the listing lags", read: &store.Revision{Name: d, Lifecycle: store.Draft, Owners: mine}, want: "unlisted"},
		{name: "the owner's long after its create: still its own", at: 10 * CreatedTTL, read: &store.Revision{Name: d, Lifecycle: store.Proposed, Owners: mine}, want: "unlisted"},
		{name: "ownerless", read: &store.Revision{Name: d, Lifecycle: store.Draft}, want: "reclaim"},
		{name: "someone else's", read: &store.Revision{Name: d, Lifecycle: store.Draft, Owners: someone}, want: "lost"},
		{name: "published meanwhile, the owner's", read: &store.Revision{Name: d, Lifecycle: store.Published, Owners: mine}, want: "unlisted"},
		{name: "published meanwhile, without owner", read: &store.Revision{Name: d, Lifecycle: store.Published}, want: "lost"},
		{name: "not found once", want: "wait", wantErr: "Porch does not show draft " + d + " yet"},
		{name: "not found twice: gone", reads: 1, want: "lost"},
		{name: "listed before, not found: deleted", wasListed: true, want: "lost"},
		{name: "not found, too old to wait for", at: CreatedTTL, want: "lost"},
		{name: "the read fails", readErr: errors.New("timeout"), wantErr: "timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := t0
			inner := &scripted{}
			s := made(t, inner, &now)
			other := store.Revision{Name: "deploy.app.other"}
			ctx := context.Background()
			if tt.wasListed {
				inner.owned = []store.Revision{other, {Name: d}}
				if _, err := s.ListOwned(ctx, "ns", "u"); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < tt.reads; i++ {
				s.gone("u", d)
			}
			inner.owned = []store.Revision{other}
			if tt.listed {
				inner.owned = append(inner.owned, store.Revision{Name: d})
			}
			inner.read, inner.readErr = tt.read, tt.readErr
			now = t0.Add(tt.at)
			got, err := s.ListOwned(ctx, "ns", "u")
			if (err != nil) != (tt.wantErr != "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			var nl *NotListedError
			if tt.want == "wait" && !errors.As(err, &nl) {
				t.Fatalf("a wait is no NotListedError: %v", err)
			}
			names := []string{}
			for _, r := range got {
				names = append(names, r.Name)
			}
			shows := strings.Contains(strings.Join(names, " "), d)
			switch tt.want {
			case "present", "unlisted", "reclaim":
				if !shows {
					t.Fatalf("listing %v, want %s in it", names, d)
				}
			case "lost":
				if shows || s.Made("u", d) {
					t.Fatalf("listing %v, made %v: want it forgotten", names, s.Made("u", d))
				}
			}
			reclaimed := s.Reclaimed("u")
			if (tt.want == "reclaim") != (len(reclaimed) == 1 && len(inner.updated) == 1) {
				t.Fatalf("reclaimed %v, updates %+v", reclaimed, inner.updated)
			}
			if tt.want == "reclaim" && (inner.updated[0].Owners[0].UID != "u" || inner.updated[0].Labels["env"] != "prod") {
				t.Fatalf("taken back without the create's owner and labels: %+v", inner.updated[0])
			}
		})
	}
}

// A create that fails is read back at once: the draft made after all is
// the create's, one recorded without owner is taken back, a workspace
// taken moves to the next; a create that failed for good is remembered
// and its draft, showing up later without owner, is taken back by the
// next create instead of a second draft.
func TestCreateSettlesAFailedCreate(t *testing.T) {
	ctx := context.Background()
	failing := func(inner *scripted) func(store.DraftSpec) (store.Revision, error) {
		return func(store.DraftSpec) (store.Revision, error) {
			return store.Revision{}, errors.New("Internal error occurred: context deadline exceeded")
		}
	}
	inner := &scripted{}
	inner.create = failing(inner)
	s := New(inner, func() time.Time { return t0 })
	inner.read = &store.Revision{Name: d, Lifecycle: store.Draft, Owners: []store.OwnerRef{{UID: "u"}}}
	if rev, reclaimed, err := s.Create(ctx, spec(), nil); err != nil || reclaimed || rev.Name != d {
		t.Fatalf("a create that succeeded after all: %+v %v %v", rev, reclaimed, err)
	}
	inner.read = &store.Revision{Name: d, Lifecycle: store.Draft}
	if rev, reclaimed, err := s.Create(ctx, spec(), nil); err != nil || !reclaimed || rev.Name != d || len(inner.updated) != 1 {
		t.Fatalf("a create recorded without owner: %+v %v %v", rev, reclaimed, err)
	}
	inner.read, inner.updated = nil, nil
	_, _, err := s.Create(ctx, spec(), nil)
	var ce *CreateError
	if !errors.As(err, &ce) || ce.Workspace != "packagevariant-1" || !s.Made("u", d) {
		t.Fatalf("a failed create: %v, remembered %v", err, s.Made("u", d))
	}
	inner.read = &store.Revision{Name: d, Lifecycle: store.Draft} // it shows up, ownerless
	created := 0
	inner.create = func(store.DraftSpec) (store.Revision, error) { created++; return store.Revision{}, nil }
	if rev, reclaimed, err := s.Create(ctx, spec(), nil); err != nil || !reclaimed || rev.Name != d || created != 0 {
		t.Fatalf("the failed create's draft: %+v reclaimed %v, %d creates, %v", rev, reclaimed, created, err)
	}
	// A workspace Porch says is taken, not found: the next.
	var asked []string
	inner.read = nil
	inner.create = func(sp store.DraftSpec) (store.Revision, error) {
		asked = append(asked, sp.Workspace)
		if len(asked) < 3 {
			return store.Revision{}, store.ErrAlreadyExists
		}
		return store.Revision{Name: store.RevisionName(sp.Repository, sp.Package, sp.Workspace), Owners: sp.Owners}, nil
	}
	n := 1
	next := func(string) string { n++; return "packagevariant-" + string(rune('0'+n)) }
	if rev, _, err := s.Create(ctx, spec(), next); err != nil || rev.Name != "deploy.app.packagevariant-3" || strings.Join(asked, ",") != "packagevariant-1,packagevariant-2,packagevariant-3" {
		t.Fatalf("taken workspaces: %+v %v, asked %v", rev, err, asked)
	}
}

// A create Porch refuses because its render failed is returned as a
// render failure, whatever a read finds: Porch v1.5.3 rolls the draft
// back (closes it, then deletes it), and taking back the ownerless draft
// on its way out failed NotFound, so the package's own failure reached the
// rollout as "taking back the ownerless draft ...: not found", judged only
// at the progress deadline (e2e-porch TestGroupReleaseOnPorch). No read,
// no update, nothing remembered.
func TestRenderFailedCreateIsNotTakenBack(t *testing.T) {
	inner := &scripted{}
	render := errors.Join(store.ErrRenderFailed, errors.New("Internal error occurred: Error occurred rendering package in kpt function pipeline"))
	inner.create = func(store.DraftSpec) (store.Revision, error) { return store.Revision{}, render }
	inner.read = &store.Revision{Name: d, Lifecycle: store.Draft} // the rollback's, ownerless
	s := New(inner, func() time.Time { return t0 })
	_, reclaimed, err := s.Create(context.Background(), spec(), nil)
	var ce *CreateError
	if !errors.Is(err, store.ErrRenderFailed) || !errors.As(err, &ce) || ce.Workspace != "packagevariant-1" || reclaimed ||
		!strings.Contains(err.Error(), "rendering package in kpt function pipeline") {
		t.Fatalf("a render-failed create: reclaimed %v, %v", reclaimed, err)
	}
	if inner.reads != 0 || len(inner.updated) != 0 || s.Made("u", d) {
		t.Fatalf("a render-failed create read %d times, updated %d, remembered %v", inner.reads, len(inner.updated), s.Made("u", d))
	}
	// Listed afterwards, owned and with no files: a read of it is that
	// render failure, not an empty draft.
	inner.Store = noFiles{}
	if _, err := s.GetResources(context.Background(), "ns", d); !errors.Is(err, store.ErrRenderFailed) ||
		!strings.Contains(err.Error(), "(Porch still lists deploy.app.packagevariant-1, the draft it rolled back, with no files)") {
		t.Fatalf("reading the rolled-back draft: %v", err)
	}
	inner.Store = nil
	// Retried, Porch still lists the draft it rolled back and refuses the
	// workspace: the answer is the render failure again, not an attempt to
	// take back a draft that every update finds gone.
	inner.create = func(store.DraftSpec) (store.Revision, error) {
		return store.Revision{}, errors.Join(store.ErrAlreadyExists, errors.New("workspaceNames must be unique"))
	}
	_, reclaimed, err = s.Create(context.Background(), spec(), func(string) string { return "packagevariant-2" })
	if !errors.Is(err, store.ErrRenderFailed) || reclaimed || len(inner.updated) != 0 ||
		!strings.Contains(err.Error(), "(Porch still lists deploy.app.packagevariant-1, the draft it rolled back, and refuses its workspace)") {
		t.Fatalf("the rolled-back draft still listed: reclaimed %v, %d updates, %v", reclaimed, len(inner.updated), err)
	}
	// A fix (another upstream) meets the same rolled-back draft: its
	// workspace is taken, and the create moves to the next one.
	fixed := spec()
	fixed.Task = store.Task{Type: store.Upgrade, NewUpstream: "blueprints.app.v3"}
	var asked []string
	inner.create = func(sp store.DraftSpec) (store.Revision, error) {
		asked = append(asked, sp.Workspace)
		if sp.Workspace == "packagevariant-1" {
			return store.Revision{}, errors.Join(store.ErrAlreadyExists, errors.New("workspaceNames must be unique"))
		}
		return store.Revision{Name: store.RevisionName(sp.Repository, sp.Package, sp.Workspace), Owners: sp.Owners}, nil
	}
	rev, reclaimed, err := s.Create(context.Background(), fixed, func(string) string { return "packagevariant-2" })
	if err != nil || reclaimed || rev.Name != "deploy.app.packagevariant-2" || len(inner.updated) != 0 || strings.Join(asked, ",") != "packagevariant-1,packagevariant-2" {
		t.Fatalf("the fix: %+v reclaimed %v, asked %v, %d updates, %v", rev, reclaimed, asked, len(inner.updated), err)
	}
}

// A listed draft that reads NotFound is waited for PhantomAfter from its
// first such read (a read that finds it starts again), then lost: left
// out of its owner's listing, its note dropped once the listing no
// longer shows it; Forget drops all of an owner.
func TestListedDraftThatReadsNotFound(t *testing.T) {
	now := t0
	inner := &scripted{}
	s := made(t, inner, &now)
	ctx := context.Background()
	phantom := func() *PhantomError {
		t.Helper()
		_, err := s.GetResources(ctx, "ns", d)
		var ph *PhantomError
		if !errors.As(err, &ph) || !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a listed draft read NotFound: %v", err)
		}
		return ph
	}
	inner.Store = notFound{}
	inner.owned = []store.Revision{{Name: d}, {Name: "deploy.app.other"}}
	if _, err := s.ListOwned(ctx, "ns", "u"); err != nil { // listed once
		t.Fatal(err)
	}
	if ph := phantom(); ph.Waited != 0 || ph.Lost {
		t.Fatalf("first read: %+v", ph)
	}
	now = t0.Add(PhantomAfter / 2)
	if ph := phantom(); ph.Waited != PhantomAfter/2 || ph.Lost {
		t.Fatalf("within PhantomAfter: %+v", ph)
	}
	now = t0.Add(PhantomAfter)
	if ph := phantom(); !ph.Lost {
		t.Fatalf("past PhantomAfter: %+v", ph)
	}
	got, err := s.ListOwned(ctx, "ns", "u")
	if err != nil || len(got) != 1 || got[0].Name != "deploy.app.other" {
		t.Fatalf("the phantom is listed: %v %v", got, err)
	}
	inner.owned = []store.Revision{{Name: "deploy.app.other"}}
	if _, err := s.ListOwned(ctx, "ns", "u"); err != nil {
		t.Fatal(err)
	}
	if owners, notes := s.Size(); owners != 1 || notes != 0 || s.phantoms != 0 {
		t.Fatalf("after the listing dropped it: %d owners, %d notes, %d phantoms", owners, notes, s.phantoms)
	}
	s.Forget("u")
	if owners, _ := s.Size(); owners != 0 {
		t.Fatalf("Forget left %d owners", owners)
	}
}

// notFound is an inner store whose reads of files find nothing.
type notFound struct{ store.Store }

func (notFound) GetResources(context.Context, string, string) (store.Resources, error) {
	return store.Resources{}, store.ErrNotFound
}

// A revision an owner knows by name alone (its status: a hand-over, a
// restart) that the listing lacks is read directly: added when it is the
// owner's and of the package, left out when gone, someone else's or of
// another package; a read that fails is an error naming it.
func TestWithNamed(t *testing.T) {
	ctx := context.Background()
	key := store.PackageKey{Namespace: "ns", Repository: "deploy", Package: "app"}
	listed := []store.Revision{{Name: "deploy.app.v1"}}
	for _, tc := range []struct {
		name string
		read *store.Revision
		err  error
		want int
	}{
		{"the owner's", &store.Revision{Name: d, Namespace: "ns", Repository: "deploy", Package: "app", Owners: []store.OwnerRef{{UID: "u"}}}, nil, 2},
		{"someone else's", &store.Revision{Name: d, Namespace: "ns", Repository: "deploy", Package: "app", Owners: []store.OwnerRef{{UID: "x"}}}, nil, 1},
		{"of another package", &store.Revision{Name: d, Namespace: "ns", Repository: "deploy", Package: "other", Owners: []store.OwnerRef{{UID: "u"}}}, nil, 1},
		{"gone", nil, nil, 1},
	} {
		s := New(&scripted{read: tc.read}, nil)
		got, err := s.WithNamed(ctx, key, "u", listed, []string{"deploy.app.v1", d})
		if err != nil || len(got) != tc.want {
			t.Errorf("%s: %v %v, want %d revisions", tc.name, got, err, tc.want)
		}
	}
	s := New(&scripted{readErr: errors.New("timeout")}, nil)
	if _, err := s.WithNamed(ctx, key, "u", listed, []string{d}); err == nil || err.Error() != "reading "+d+", named but not listed: timeout" {
		t.Errorf("a read that fails: %v", err)
	}
}

// A NotFound read of a revision no owner lists leaves a note that goes once
// older than PhantomAfter: reads of a gone upstream do not grow the store.
func TestUnclaimedNotesGo(t *testing.T) {
	now := t0
	inner := &scripted{Store: notFound{}}
	s := New(inner, func() time.Time { return now })
	ctx := context.Background()
	if _, err := s.GetResources(ctx, "ns", "blueprints.app.v9"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a gone revision: %v", err)
	}
	if _, notes := s.Size(); notes != 1 {
		t.Fatalf("%d notes after the read, want 1", notes)
	}
	now = t0.Add(PhantomAfter + time.Second)
	if _, err := s.ListOwned(ctx, "ns", "u"); err != nil {
		t.Fatal(err)
	}
	if _, notes := s.Size(); notes != 0 {
		t.Fatalf("%d notes after PhantomAfter, want none", notes)
	}
}

// noFiles answers every read of files with no resources.
type noFiles struct{ store.Store }

func (noFiles) GetResources(_ context.Context, namespace, name string) (store.Resources, error) {
	return store.Resources{}, fmt.Errorf("package revision %s/%s %w", namespace, name, store.ErrNoResources)
}
