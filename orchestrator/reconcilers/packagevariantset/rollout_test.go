package packagevariantset

import (
	"context"
	"sync"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingReader is the manager's API reader: it counts its reads and
// serves the fresh copy of each object.
type countingReader struct {
	client.Reader
	mu    sync.Mutex
	reads int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Reader.Get(ctx, key, o, opts...)
}

// Issue 33 (rule staged-rollouts): the set judges a moved child on the
// cache first and reads it fresh only to confirm what the cache shows done
// or failed, and a child done at the target once (it stays published); a
// wave is never judged done on a cached status. A draft's
// readiness gates are read once per draft version, not on every reconcile
// of the set (the N=200 release bench: a rollout's requests per variant).
func TestRolloutObservesFreshOnlyToConfirm(t *testing.T) {
	ctx := context.Background()
	cached := newEnv(t)
	fresh := newEnv(t)
	st := cached.r.Store.(*fakestore.Store)
	up, err := st.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: "blueprints", Package: "app"})
	if err != nil || len(up) != 1 {
		t.Fatalf("upstream: %v %v", up, err)
	}
	reader := &countingReader{Reader: fresh.client}
	cached.r.Reader = reader
	child := func(c client.Client, ready metav1.ConditionStatus, observed int64) {
		t.Helper()
		v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c", UID: "uid-c", Generation: 2}}
		v.Spec.Upstream = &pv.Upstream{Repo: "blueprints", Package: "app"}
		v.Spec.Downstream = &pv.Downstream{Repo: "deploy", Package: "app"}
		old := &pvapi.PackageVariant{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(v), old); err == nil {
			if err := c.Delete(ctx, old); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Create(ctx, v); err != nil {
			t.Fatal(err)
		}
		v.Status.ObservedGeneration = observed
		v.Status.Conditions = []metav1.Condition{{Type: pvapi.ConditionReady, Status: ready, Reason: "R", LastTransitionTime: metav1.NewTime(testNow)}}
		if err := c.Status().Update(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	observe := func() (bool, bool, string) {
		t.Helper()
		vd, err := cached.r.observe(ctx, ns, "c", up[0], time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return vd.Done, vd.Failed, vd.Why
	}
	st.AddRepository(ns, "deploy")
	draft, err := st.CreateDraft(ctx, store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app", Workspace: "packagevariant-1",
		Owners: []store.OwnerRef{{APIVersion: pvapi.GroupVersion.String(), Kind: "PackageVariant", Name: "c", UID: "uid-c"}},
		Task:   store.Task{Type: store.Clone, Upstream: up[0].Name}})
	if err != nil {
		t.Fatal(err)
	}

	// Not Ready in the cache: not done, and no fresh read.
	child(cached.client, metav1.ConditionFalse, 2)
	child(fresh.client, metav1.ConditionTrue, 2)
	if done, failed, _ := observe(); done || failed || reader.reads != 0 {
		t.Fatalf("cached not Ready: done %v failed %v, %d fresh reads; want neither and none", done, failed, reader.reads)
	}
	// A draft whose readiness gate is False: failed, confirmed fresh; its
	// resources read once for two reconciles.
	child(cached.client, metav1.ConditionTrue, 2)
	files := st.Files(ns, draft.Name)
	files["Kptfile"] = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  readinessGates:\n  - conditionType: example.com/reviewed\nstatus:\n  conditions:\n  - type: example.com/reviewed\n    status: \"False\"\n    reason: NotYet\n    message: waiting for a review\n"
	st.SetFiles(ns, draft.Name, files)
	st.ResetCalls()
	for i := 0; i < 2; i++ {
		done, failed, why := observe()
		if done || !failed || why != `draft deploy.app.packagevariant-1 is not approvable: readiness gate "example.com/reviewed" is False (NotYet: waiting for a review)` {
			t.Fatalf("a closed gate: done %v failed %v %q", done, failed, why)
		}
	}
	if n := st.Calls()[fakestore.OpGetResources]; n != 1 || reader.reads != 2 {
		t.Fatalf("two reconciles read the draft's resources %d times (want 1) and the child fresh %d times (want 2)", n, reader.reads)
	}
	// Published at the target in the cache's eyes, behind fresh (the child
	// not reconciled since it moved): not done.
	if _, err := st.Approve(ns, draft.Name); err != nil {
		t.Fatal(err)
	}
	child(fresh.client, metav1.ConditionTrue, 1)
	if done, failed, _ := observe(); done || failed {
		t.Fatalf("judged done on a cached status: done %v failed %v", done, failed)
	}
	child(fresh.client, metav1.ConditionTrue, 2)
	before := reader.reads
	for i := 0; i < 3; i++ {
		if done, _, _ := observe(); !done {
			t.Fatal("fresh and cached done: not done")
		}
	}
	if n := reader.reads - before; n != 1 {
		t.Fatalf("a child done at the target read fresh %d times over three reconciles, want once", n)
	}
}

// Issue 47 #6: a moved child whose render fails keeps observedGeneration
// behind (a retried error), and the rollout skipped it for ever: no
// budget, no deadline, nothing named. Its Ready condition at the new
// generation judges it: waiting, saying what for, then failed past the
// progress deadline.
func TestChildThatCannotRenderFails(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	up, err := e.r.Store.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: "blueprints", Package: "app"})
	if err != nil || len(up) != 1 {
		t.Fatalf("upstream: %v %v", up, err)
	}
	for _, tc := range []struct {
		name           string
		condGeneration int64
		since          time.Duration
		failed         bool
		why            string
	}{
		{"within the deadline", 2, 10 * time.Minute, false, "RenderFailed: render failed: set-labels: exit 1"},
		{"past the deadline", 2, 2 * time.Hour, true, "not Ready for 1h0m0s (RenderFailed: render failed: set-labels: exit 1)"},
		{"not reconciled since it moved", 1, 2 * time.Hour, false, "not reconciled since it moved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c", UID: "uid-c", Generation: 2}}
			v.Spec.Upstream = &pv.Upstream{Repo: "blueprints", Package: "app"}
			v.Spec.Downstream = &pv.Downstream{Repo: "deploy", Package: "app"}
			_ = e.client.Delete(ctx, v.DeepCopy())
			if err := e.client.Create(ctx, v); err != nil {
				t.Fatal(err)
			}
			v.Status.ObservedGeneration = 1
			v.Status.Conditions = []metav1.Condition{{Type: pvapi.ConditionReady, Status: metav1.ConditionFalse, Reason: pvapi.ReasonRenderFailed,
				Message: "render failed: set-labels: exit 1", ObservedGeneration: tc.condGeneration, LastTransitionTime: metav1.NewTime(testNow.Add(-tc.since))}}
			if err := e.client.Status().Update(ctx, v); err != nil {
				t.Fatal(err)
			}
			vd, err := e.r.observe(ctx, ns, "c", up[0], time.Hour)
			if err != nil || vd.Done || vd.Failed != tc.failed || vd.Why != tc.why {
				t.Fatalf("%+v (%v); want failed %v %q", vd, err, tc.failed, tc.why)
			}
			// Waiting on a deadline, the set comes back when it passes.
			if want := testNow.Add(-tc.since + time.Hour); !tc.failed && tc.condGeneration == 2 && !vd.Recheck.Equal(want) {
				t.Fatalf("recheck at %v, want %v", vd.Recheck, want)
			}
		})
	}
}
