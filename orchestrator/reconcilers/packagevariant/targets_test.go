package packagevariant

import (
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

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
