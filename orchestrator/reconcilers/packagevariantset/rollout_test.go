package packagevariantset

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
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

// Issue 33 (rule staged-rollouts), issue 42 #1 (rule
// child-status-contract): the set judges a moved child from the child's
// status alone (its downstream targets' upstream lock, lifecycle and
// Blocked; no read of the child's packages), on the cache first, and reads
// it fresh only to confirm what the cache shows done or failed; a wave is
// never judged done on a cached status.
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
	lock := store.LockFor(up[0])
	at := &pvapi.UpstreamLock{Repo: lock.Repository, Package: lock.Package, Ref: lock.Ref}
	elsewhere := &pvapi.UpstreamLock{Repo: lock.Repository, Package: lock.Package, Ref: "app/v0"}
	child := func(c client.Client, ready metav1.ConditionStatus, observed int64, targets ...pvapi.DownstreamTarget) {
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
		movedTo(t, c, v)
		v.Status.ObservedGeneration = observed
		v.Status.Conditions = []metav1.Condition{{Type: pvapi.ConditionReady, Status: ready, Reason: "R", LastTransitionTime: metav1.NewTime(testNow)}}
		v.Status.DownstreamTargets = targets
		if err := c.Status().Update(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	observe := func() verdict {
		t.Helper()
		vd, err := cached.r.observe(ctx, ns, "c", up[0], gate{deadline: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return vd
	}
	st.ResetCalls()

	// Not Ready in the cache: not done, and no fresh read.
	child(cached.client, metav1.ConditionFalse, 2)
	child(fresh.client, metav1.ConditionTrue, 2)
	if vd := observe(); vd.Done || vd.Failed || reader.reads != 0 {
		t.Fatalf("cached not Ready: %+v, %d fresh reads; want neither and none", vd, reader.reads)
	}
	// What the child's status says of its target at the rollout's
	// revision, judged as the cache and the fresh read both show it.
	gated := pvapi.DownstreamTarget{Name: "deploy.app.packagevariant-1", Lifecycle: "Draft", UpstreamLock: at,
		Blocked: &pvapi.Blocked{Reason: pvapi.ReasonGateClosed, Message: `readiness gate "example.com/reviewed" is False (NotYet: waiting for a review)`}}
	for _, tc := range []struct {
		name   string
		target pvapi.DownstreamTarget
		want   verdict
	}{
		{"a closed gate", gated, verdict{Failed: true, Why: `draft deploy.app.packagevariant-1 is not approvable: readiness gate "example.com/reviewed" is False (NotYet: waiting for a review)`}},
		{"rejected", pvapi.DownstreamTarget{Name: "deploy.app.packagevariant-1", Lifecycle: "Draft", UpstreamLock: at,
			Blocked: &pvapi.Blocked{Reason: pvapi.ReasonRejected, Message: "a person rejected it"}}, verdict{Failed: true, Why: "draft deploy.app.packagevariant-1 was rejected"}},
		{"awaiting approval", pvapi.DownstreamTarget{Name: "deploy.app.packagevariant-1", Lifecycle: "Proposed", UpstreamLock: at,
			Blocked: &pvapi.Blocked{Reason: pvapi.ReasonAwaitingApproval, Message: "Proposed, not yet approved: policy initial: a revision is published"}},
			verdict{Why: "draft deploy.app.packagevariant-1 is Proposed, not yet approved: policy initial: a revision is published"}},
		{"a gated draft of another upstream", pvapi.DownstreamTarget{Name: "deploy.app.packagevariant-1", Lifecycle: "Draft", UpstreamLock: elsewhere, Blocked: gated.Blocked},
			verdict{Why: "no draft at the target yet"}},
		{"published elsewhere", pvapi.DownstreamTarget{Name: "deploy.app.v1", Lifecycle: "Published", UpstreamLock: elsewhere}, verdict{Why: "no draft at the target yet"}},
		{"no lock", pvapi.DownstreamTarget{Name: "deploy.app.v1", Lifecycle: "Published"}, verdict{Why: "no draft at the target yet"}},
		{"published at the target", pvapi.DownstreamTarget{Name: "deploy.app.v2", Lifecycle: "Published", UpstreamLock: at}, verdict{Done: true}},
	} {
		child(cached.client, metav1.ConditionTrue, 2, tc.target)
		child(fresh.client, metav1.ConditionTrue, 2, tc.target)
		before := reader.reads
		if vd := observe(); vd != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, vd, tc.want)
		}
		if n, want := reader.reads-before, map[bool]int{true: 1}[tc.want.Done || tc.want.Failed]; n != want {
			t.Errorf("%s: %d fresh reads, want %d", tc.name, n, want)
		}
	}
	if n := len(st.Calls()); n != 0 {
		t.Errorf("the set read the store %v judging its child; want nothing (its status is the contract)", st.Calls())
	}
	// Published at the target in the cache's eyes, behind fresh (the child
	// not reconciled since it moved): not done.
	done := pvapi.DownstreamTarget{Name: "deploy.app.v2", Lifecycle: "Published", UpstreamLock: at}
	child(cached.client, metav1.ConditionTrue, 2, done)
	child(fresh.client, metav1.ConditionTrue, 1, done)
	if vd := observe(); vd.Done || vd.Failed {
		t.Fatalf("judged done on a cached status: %+v", vd)
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
			movedTo(t, e.client, v)
			v.Status.ObservedGeneration = 1
			v.Status.Conditions = []metav1.Condition{{Type: pvapi.ConditionReady, Status: metav1.ConditionFalse, Reason: pvapi.ReasonRenderFailed,
				Message: "render failed: set-labels: exit 1", ObservedGeneration: tc.condGeneration, LastTransitionTime: metav1.NewTime(testNow.Add(-tc.since))}}
			if err := e.client.Status().Update(ctx, v); err != nil {
				t.Fatal(err)
			}
			vd, err := e.r.observe(ctx, ns, "c", up[0], gate{deadline: time.Hour})
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

// movedTo creates child v and moves it once (a spec change: its
// generation 2, as the API server counts it), as a set's rollout does.
func movedTo(t *testing.T, c client.Client, v *pvapi.PackageVariant) {
	t.Helper()
	ctx := context.Background()
	if err := c.Create(ctx, v); err != nil {
		t.Fatal(err)
	}
	v.Spec.Upstream.WorkspaceName, v.Spec.Upstream.Revision = "v1", 1
	if err := c.Update(ctx, v); err != nil {
		t.Fatal(err)
	}
	if v.Generation != 2 {
		t.Fatalf("a moved child at generation %d, want 2", v.Generation)
	}
}

// rule health-gated-rollouts: with a health check, a published target at
// the rollout's revision is done only when reported healthy for
// minSuccess; not healthy past the deadline (from when it was first read
// so) is failed; the waits say until when, in times, so that a waiting
// set's status does not change each pass.
func TestHealthGate(t *testing.T) {
	g := gate{deadline: 10 * time.Minute, minSuccess: 5 * time.Minute, health: true}
	pub := func(h *pvapi.TargetHealth) pvapi.DownstreamTarget {
		return pvapi.DownstreamTarget{Name: "deploy.app.v2", Lifecycle: "Published", Health: h}
	}
	since := metav1.NewTime(testNow)
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	for _, tc := range []struct {
		name string
		t    pvapi.DownstreamTarget
		now  time.Time
		want verdict
	}{
		{"not read yet", pub(nil), at(time.Hour), verdict{Why: "deploy.app.v2 is published; its health check is not read yet"}},
		{"not reported", pub(&pvapi.TargetHealth{Status: metav1.ConditionUnknown, Reason: "ObjectNotFound", Message: "no Kustomization", Since: since}), at(time.Minute),
			verdict{Why: "deploy.app.v2 is published, the cluster has not reported it healthy (ObjectNotFound: no Kustomization)", Recheck: at(10 * time.Minute),
				Due: "fails unless reported healthy by then (progressDeadlineSeconds)"}},
		{"not healthy past the deadline", pub(&pvapi.TargetHealth{Status: metav1.ConditionFalse, Reason: "NotHealthy", Message: "at v1", Since: since}), at(11 * time.Minute),
			verdict{Failed: true, Why: "deploy.app.v2 not healthy for 10m0s: at v1 (NotHealthy)"}},
		{"healthy, soaking", pub(&pvapi.TargetHealth{Status: metav1.ConditionTrue, Reason: "Healthy", Since: since}), at(time.Minute),
			verdict{Why: "deploy.app.v2 healthy since 2026-11-22T00:00:00Z, done at 2026-11-22T00:05:00Z if it stays so (minSuccessSeconds)", Recheck: at(5 * time.Minute),
				Due: "done if still healthy then (minSuccessSeconds)"}},
		{"healthy long enough", pub(&pvapi.TargetHealth{Status: metav1.ConditionTrue, Reason: "Healthy", Since: since}), at(5*time.Minute + time.Second), verdict{Done: true}},
	} {
		if got := g.healthy(factsOf(&pvapi.PackageVariant{Status: pvapi.PackageVariantStatus{DownstreamTargets: []pvapi.DownstreamTarget{tc.t}}}).Targets[0], tc.now); got != tc.want {
			t.Errorf("%s: %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	// Without a health check, published is done; with one, judge asks it.
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
	v.Status.ObservedGeneration = 1
	v.Status.Conditions = []metav1.Condition{{Type: pvapi.ConditionReady, Status: metav1.ConditionTrue}}
	up := store.Revision{Repository: "blueprints", Package: "app", Revision: 2, Lifecycle: store.Published}
	lock := store.LockFor(up)
	target := pub(nil)
	target.UpstreamLock = &pvapi.UpstreamLock{Repo: lock.Repository, Package: lock.Package, Ref: lock.Ref}
	v.Status.DownstreamTargets = []pvapi.DownstreamTarget{target}
	if vd := (gate{deadline: time.Hour}).judge(factsOf(v), up, testNow); !vd.Done {
		t.Errorf("no health check: %+v, want done", vd)
	}
	if vd := g.judge(factsOf(v), up, testNow); vd.Done || vd.Why != "deploy.app.v2 is published; its health check is not read yet" {
		t.Errorf("health check not read: %+v", vd)
	}
	// rule published-drift: a drifted child waits for a person, health or not.
	v.Status.DownstreamTargets[0].Drift = &pvapi.TargetDrift{Reason: pvapi.ReasonNewerRevision, Revision: "deploy.app.v3", Message: "deploy.app.v3 is newer"}
	if vd := (gate{deadline: time.Hour}).judge(factsOf(v), up, testNow); vd.Done || vd.Failed || vd.Why != "deploy.app.v2 drifted (NewerRevision): deploy.app.v3 is newer" {
		t.Errorf("drifted: %+v", vd)
	}
}

// issue 57 #1: a target whose cluster reports it failed (the check's
// failed expression) fails the child at once, long before the deadline;
// one merely not healthy waits.
func TestFailedHealthFailsAtOnce(t *testing.T) {
	g := gate{deadline: time.Hour, health: true}
	since := metav1.NewTime(testNow)
	target := func(reason string) targetFacts {
		return targetFacts{Name: "deploy.app.v2", Lifecycle: "Published",
			Health: &pvapi.TargetHealth{Status: metav1.ConditionFalse, Reason: reason, Message: "Kustomization fleet/deploy-app reports deploy.app.v2 failed", Since: since}}
	}
	got := g.healthy(target(pvapi.ReasonHealthFailed), testNow.Add(time.Second))
	want := verdict{Failed: true, Why: "deploy.app.v2 failed on the cluster: Kustomization fleet/deploy-app reports deploy.app.v2 failed (HealthFailed)"}
	if got != want {
		t.Errorf("failed: %+v\nwant %+v", got, want)
	}
	if got := g.healthy(target(pvapi.ReasonNotHealthy), testNow.Add(time.Second)); got.Failed || got.Recheck != testNow.Add(time.Hour) {
		t.Errorf("not healthy: %+v, want waiting until the deadline", got)
	}
}

// A child's status change that judge reads brings its set back: a
// target's health, lifecycle, lock or block, not only its conditions
// (e2e-porch: a canary reported healthy left its wave open, its set not
// reconciled).
func TestChildProgressedSeesWhatJudgeReads(t *testing.T) {
	p := childProgressed()
	base := &pvapi.PackageVariant{}
	base.Status.DownstreamTargets = []pvapi.DownstreamTarget{{Name: "d.app.v2", Lifecycle: "Proposed"}}
	for name, change := range map[string]func(*pvapi.DownstreamTarget){
		"health":    func(t *pvapi.DownstreamTarget) { t.Health = &pvapi.TargetHealth{Status: metav1.ConditionTrue} },
		"lifecycle": func(t *pvapi.DownstreamTarget) { t.Lifecycle = "Published" },
		"lock":      func(t *pvapi.DownstreamTarget) { t.UpstreamLock = &pvapi.UpstreamLock{Ref: "app/v2"} },
		"blocked":   func(t *pvapi.DownstreamTarget) { t.Blocked = &pvapi.Blocked{Reason: pvapi.ReasonGateClosed} },
		"drift":     func(t *pvapi.DownstreamTarget) { t.Drift = &pvapi.TargetDrift{Reason: pvapi.ReasonNewerRevision} },
	} {
		next := base.DeepCopy()
		change(&next.Status.DownstreamTargets[0])
		if !p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: next}) {
			t.Errorf("a change of the target's %s does not bring the set back", name)
		}
	}
	same := base.DeepCopy()
	same.Status.DownstreamTargets[0].LastWrite = "sha256:x"
	if p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: same}) {
		t.Error("a change judge does not read brings the set back")
	}
}

// Issue 57 #5: a paused rollout makes the set not Ready (it read
// Ready=True Reconciled beside RolloutPaused=True): reason RolloutPaused,
// the pause's cause in the message, observedGeneration current (decided,
// not retried); Ready again once it resumes.
func TestPausedRolloutIsNotReady(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.set(churnSet)
	e.reconcile()
	ready := func() *metav1.Condition {
		return apimeta.FindStatusCondition(e.getSet().Status.Conditions, pvapi.ConditionReady)
	}
	if c := ready(); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("before the pause: Ready %+v", c)
	}
	s := e.getSet()
	s.Annotations = map[string]string{RolloutPauseAnnotation: "true"}
	if err := e.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	e.r.Store.(*fakestore.Store).Publish(ns, "blueprints", "app", storetest.Blueprint)
	if err := e.try(); err != nil {
		t.Fatal(err)
	}
	c := ready()
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != pvapi.ConditionRolloutPaused ||
		!strings.HasPrefix(c.Message, "the staged rollout is paused (PausedByOperator): ") {
		t.Fatalf("paused: Ready %+v", c)
	}
	if set := e.getSet(); set.Status.ObservedGeneration != set.Generation {
		t.Fatalf("paused: observedGeneration %d, generation %d", set.Status.ObservedGeneration, set.Generation)
	}
	if st := apimeta.FindStatusCondition(e.getSet().Status.Conditions, pvapi.ConditionStalled); st == nil || st.Status != metav1.ConditionFalse {
		t.Fatalf("paused: Stalled %+v, want False (nothing to fix in the spec)", st)
	}
	s = e.getSet()
	delete(s.Annotations, RolloutPauseAnnotation)
	if err := e.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := e.try(); err != nil {
		t.Fatal(err)
	}
	if c := ready(); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("resumed: Ready %+v", c)
	}
}

// staleSets is the cache lagging the set's own status writes: a
// PackageVariantSet reads as it was when taken; the rest passes through.
type staleSets struct {
	client.Client
	set *pvsapi.PackageVariantSet
}

func (s staleSets) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	if set, ok := o.(*pvsapi.PackageVariantSet); ok && key.Name == s.set.Name {
		s.set.DeepCopyInto(set)
		return nil
	}
	return s.Client.Get(ctx, key, o, opts...)
}

// A rollout is planned from the set read past the cache: a cache that
// lags the undo (e2e-porch TestFailingCanaryUndoneOnPorch) does not move
// the canary to the target again.
func TestRolloutPlansFromTheFreshSet(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.set(churnSet)
	e.reconcile()
	e.r.Store.(*fakestore.Store).Publish(ns, "blueprints", "app", storetest.Blueprint)
	e.reconcile()
	atV2 := func() []string { return e.pinnedTo(2) }
	if m := atV2(); len(m) != 1 {
		t.Fatalf("the canary moved: %v", m)
	}
	stale := e.getSet() // before the undo
	s := e.getSet()
	s.Annotations = map[string]string{RolloutUndoAnnotation: s.Status.Rollout.Target.Name}
	if err := e.client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	if m := atV2(); len(m) != 0 || !e.getSet().Status.Rollout.Undone {
		t.Fatalf("undone: %v at v2, %+v", m, e.getSet().Status.Rollout)
	}
	fresh := e.r.Client
	e.r.Client, e.r.Reader = staleSets{Client: fresh, set: stale}, fresh
	e.reconcile()
	if m := atV2(); len(m) != 0 || !e.getSet().Status.Rollout.Undone {
		t.Fatalf("with the cache behind the undo: %v at v2, %+v", m, e.getSet().Status.Rollout)
	}
}

// pinnedTo names the children pinned to upstream revision rev.
func (e *env) pinnedTo(rev int) []string {
	var out []string
	for name, c := range e.children() {
		if c.Spec.Upstream != nil && c.Spec.Upstream.Revision == rev {
			out = append(out, name)
		}
	}
	return out
}
