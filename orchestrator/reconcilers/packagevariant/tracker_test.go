package packagevariant

import (
	"errors"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"

	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/apimachinery/pkg/types"
)

// Issue 28 #3: the draft tracker's one question, observe, in a table: what
// of the draft a variant created last, given the owned revisions listed
// and what a direct look finds.
func TestTrackerObserve(t *testing.T) {
	const uid = types.UID("u")
	pkg := store.PackageKey{Namespace: "ns", Repository: "deploy", Package: "app"}
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	someone := []store.OwnerRef{{UID: "someone"}}
	mine := []store.OwnerRef{{UID: string(uid)}}
	for _, tt := range []struct {
		name     string
		track    bool             // a draft d was created at t0
		listed   bool             // the listing shows it
		pkg      store.PackageKey // the downstream observed
		read     *store.Revision  // what a direct read finds (nil: not found)
		readErr  error            // a read that fails
		reads    int              // direct reads that found nothing before
		wasListd bool
		at       time.Duration // how long after t0
		want     verdict
		wantErr  string
	}{
		{name: "nothing tracked", want: present},
		{name: "listed", track: true, listed: true, want: present},
		{name: "another package: forgotten", track: true, pkg: store.PackageKey{Namespace: "ns", Repository: "deploy", Package: "other"}, want: present},
		{name: "the variant's, not listed: the listing lags", track: true, read: &store.Revision{Name: "d", Lifecycle: store.Draft, Owners: mine}, want: unlisted},
		{name: "the variant's long after its create: still its own", track: true, at: 10 * createdTTL, read: &store.Revision{Name: "d", Lifecycle: store.Proposed, Owners: mine}, want: unlisted},
		{name: "ownerless in the package", track: true, read: &store.Revision{Name: "d", Lifecycle: store.Draft}, want: reclaim},
		{name: "someone else's", track: true, read: &store.Revision{Name: "d", Lifecycle: store.Draft, Owners: someone}, want: lost},
		{name: "published meanwhile, the variant's", track: true, read: &store.Revision{Name: "d", Lifecycle: store.Published, Owners: mine}, want: unlisted},
		{name: "published meanwhile, without owner", track: true, read: &store.Revision{Name: "d", Lifecycle: store.Published}, want: lost},
		{name: "not found once", track: true, want: wait},
		{name: "not found twice: gone", track: true, reads: 1, want: lost},
		{name: "listed before, not found: deleted", track: true, wasListd: true, want: lost},
		{name: "not found, too old to wait for", track: true, at: createdTTL, want: lost},
		{name: "the read fails", track: true, readErr: errors.New("timeout"), want: present, wantErr: "timeout"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tr memory
			if tt.track {
				tr.didCreate(uid, pkg, "d", t0)
				if tt.wasListd {
					tr.missing(uid, pkg, []string{"d"})
				}
				for i := 0; i < tt.reads; i++ {
					tr.gone(uid, "d")
				}
			}
			names := []string{"other-draft"}
			if tt.listed {
				names = append(names, "d")
			}
			observed := pkg
			if tt.pkg != (store.PackageKey{}) {
				observed = tt.pkg
			}
			get := func(name string) (store.Revision, error) {
				switch {
				case tt.readErr != nil:
					return store.Revision{}, tt.readErr
				case tt.read == nil:
					return store.Revision{}, store.ErrNotFound
				}
				return *tt.read, nil
			}
			got, rev, err := tr.observe(uid, observed, names, t0.Add(tt.at), get)
			if (err != nil) != (tt.wantErr != "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("verdict = %d, want %d", got, tt.want)
			}
			if (got == reclaim || got == wait || got == unlisted) && rev.Name != "d" {
				t.Fatalf("revision = %+v", rev)
			}
			_, stillTracked := tr.last(uid)
			if wantTracked := tt.track && got != lost && tt.pkg == (store.PackageKey{}); stillTracked != wantTracked {
				t.Fatalf("tracked after: %v, want %v", stillTracked, wantTracked)
			}
		})
	}
}

// A create that failed is remembered until a draft is created or taken
// back; a draft lost meanwhile does not forget it.
func TestTrackerAsked(t *testing.T) {
	var tr memory
	pkg := store.PackageKey{Namespace: "ns", Repository: "deploy", Package: "app"}
	tr.didCreate("u", pkg, "d1", time.Time{})
	tr.didAsk("u", "d2")
	if _, _, err := tr.observe("u", pkg, nil, time.Time{}.Add(createdTTL), func(string) (store.Revision, error) { return store.Revision{}, store.ErrNotFound }); err != nil {
		t.Fatal(err)
	}
	if name, ok := tr.askedFor("u"); !ok || name != "d2" {
		t.Fatalf("askedFor = %q, %v", name, ok)
	}
	tr.didCreate("u", pkg, "d2", time.Time{})
	if _, ok := tr.askedFor("u"); ok {
		t.Fatal("a create still asked for after the draft was created")
	}
}

// Issue 42 #2: a listed draft that reads NotFound is waited for
// phantomAfter from its first such read (a read that finds it starts
// again), then lost: a phantom, left out of the listing; forget drops
// everything the tracker has of the variant, in one record.
func TestTrackerReadThatFindsNothing(t *testing.T) {
	var tr memory
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	listing := []store.Revision{{Name: "d"}, {Name: "e"}}
	if w, lost := tr.unreadable("u", "d", t0); w != 0 || lost {
		t.Fatalf("first read: waited %s, lost %v", w, lost)
	}
	tr.readable("u", "d")
	if w, lost := tr.unreadable("u", "d", t0.Add(time.Hour)); w != 0 || lost {
		t.Fatalf("after a read that found it, the wait starts again: waited %s, lost %v", w, lost)
	}
	if w, lost := tr.unreadable("u", "d", t0.Add(time.Hour+phantomAfter/2)); w != phantomAfter/2 || lost {
		t.Fatalf("within phantomAfter: waited %s, lost %v", w, lost)
	}
	if _, lost := tr.unreadable("u", "d", t0.Add(time.Hour+phantomAfter)); !lost {
		t.Fatal("past phantomAfter: not lost")
	}
	if got := tr.real("u", listing); len(got) != 1 || got[0].Name != "e" {
		t.Fatalf("the phantom is listed: %v", got)
	}
	// The listing no longer shows the phantom: its note is pruned.
	tr.prune("u", []string{"e"})
	if v, notes := tr.size(); v != 1 || notes != 0 || tr.m["u"].phantoms != 0 {
		t.Fatalf("after the prune: %d variants, %d notes, %d phantoms", v, notes, tr.m["u"].phantoms)
	}
	tr.unreadable("u", "e", t0)
	tr.forget("u")
	if got := tr.real("u", listing); len(got) != 2 || len(tr.m) != 0 {
		t.Fatalf("forget left something: %v %v", got, tr.m)
	}
}

// The status keeps a target's lock while what is read or made names the
// same upstream revision (the lock a clone makes has the repository, the
// one Porch lists the commit): no second status patch for it.
func TestSameUpstream(t *testing.T) {
	made := &pvapi.UpstreamLock{Repo: "blueprints", Package: "app", Ref: "app/v2"}
	for _, tc := range []struct {
		l    store.Lock
		want bool
	}{
		{store.Lock{Package: "app", Ref: "app/v2", Commit: "3be610b"}, true},
		{store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v2"}, true},
		{store.Lock{Package: "app", Ref: "infra/app/v2"}, true},
		{store.Lock{Package: "app", Ref: "app/v3"}, false},
		{store.Lock{Repository: "other", Package: "app", Ref: "app/v2"}, false},
		{store.Lock{Package: "app", Ref: "drafts/app/v2"}, false},
	} {
		if got := sameUpstream(made, &tc.l); got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.l, got, tc.want)
		}
	}
	if sameUpstream(nil, &store.Lock{Package: "app", Ref: "app/v2"}) {
		t.Error("no lock recorded is the same as one")
	}
}
