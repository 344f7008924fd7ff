package observe

import (
	"context"
	"fmt"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/apimachinery/pkg/types"
)

// resourcesStore answers GetResources from files and resource versions by
// name; the rest of Store is not used by DriftOf.
type resourcesStore struct {
	store.Store
	files map[string]map[string]string
	rvs   map[string]string
	reads int
}

func (s *resourcesStore) GetResources(_ context.Context, _, name string) (store.Resources, error) {
	s.reads++
	f, ok := s.files[name]
	if !ok {
		return store.Resources{}, fmt.Errorf("package revision %s: not found", name)
	}
	return store.Resources{Files: f, ResourceVersion: s.rvs[name]}, nil
}

type oneMemory map[types.UID]Entry

func (m oneMemory) Drift(uid types.UID) (Entry, bool) { e, ok := m[uid]; return e, ok }
func (m oneMemory) SetDrift(uid types.UID, e Entry)   { m[uid] = e }

// The branch's commit a health check may accept for a published revision
// is the commit whose files were compared with it: an informer's listing
// of Porch's placeholder that still shows the branch at the old
// revision's commit, while Porch already serves the new files, does not
// make the old commit one that holds the new revision (a Flux
// Kustomization still at the old commit is not healthy at the new one).
func TestBranchCommitIsTheOneRead(t *testing.T) {
	c1, c2 := strings.Repeat("1", 40), strings.Repeat("2", 40)
	v2files := map[string]string{"deployment.yaml": "image: nginx:1.28\n"}
	v := &pvapi.PackageVariant{}
	v.UID, v.Namespace, v.Name = "uid-1", "ns", "app-g-000-app"
	pub := store.Revision{Namespace: "ns", Name: "g-000.app.packagevariant-2", Repository: "g-000", Package: "app", Workspace: "packagevariant-2",
		Revision: 2, Lifecycle: store.Published, ResourceVersion: c2, Commit: c2, Owners: []store.OwnerRef{{UID: "uid-1"}}}
	stale := store.Revision{Namespace: "ns", Name: "g-000.app.main", Repository: "g-000", Package: "app", Workspace: "main",
		Revision: -1, Lifecycle: store.Published, Placeholder: true, ResourceVersion: c1, Commit: c1}
	target := &pvapi.DownstreamTarget{Name: pub.Name, Revision: 2, Commit: c2}
	for _, tc := range []struct {
		name, readRV, want string
	}{
		{"the read answers the new commit", c2, c2},
		{"the read answers a version that is no commit", "17", ""},
		{"the read answers the listing's version", c1, c1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &resourcesStore{files: map[string]map[string]string{pub.Name: v2files, stale.Name: v2files},
				rvs: map[string]string{pub.Name: c2, stale.Name: tc.readRV}}
			o := Observer{Store: s, Memory: oneMemory{}}
			for round := 1; round <= 2; round++ { // the second from memory
				d, head, err := o.DriftOf(context.Background(), v, pub, []store.Revision{stale, pub})
				if err != nil || d != nil {
					t.Fatalf("round %d: drift %+v, err %v", round, d, err)
				}
				if head.holds != pub.Name || head.commit != tc.want || head.branch != "main" {
					t.Fatalf("round %d: head %+v, want the branch holding %s at %q", round, head, pub.Name, tc.want)
				}
				want := []string{c2}
				if tc.want != "" && tc.want != c2 {
					want = append(want, tc.want)
				}
				if got := healthRevision(v, target, head).Commits; strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("round %d: revision.commits %v, want %v", round, got, want)
				}
			}
			if s.reads != 2 {
				t.Fatalf("%d reads, want 2 (pub and the branch, once)", s.reads)
			}
		})
	}
}
