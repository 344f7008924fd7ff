package packagevariantset

import (
	"context"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const churnSet = `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: app
spec:
  upstream: {repo: blueprints, package: app}
  targets:
  - repositorySelector:
      matchLabels: {env: prod}
  rollout:
    errorBudget: 5%
    waves:
    - name: canary
      selector:
        matchLabels: {ring: canary}
      size: 1
    - name: early
      size: 10%
      maxUpdate: 5
    - name: rest
      maxUpdate: 25%
`

// Issue 43 #6, with the set reconciler: the rollout of a set over 100
// repositories, each tick one reconcile of the set, then the children's
// own controller (simulated: a moved child's status says Ready and
// published at its new upstream a random number of ticks later; a few
// children fail and are skipped). Injected, as a controller meets them:
// the set reads its children from a cache one tick behind a third of the
// time (the fresh read that confirms done or failed reads the truth), a
// fifth of its status writes are lost (the next reconcile starts from the
// status before), and new upstream revisions arrive mid-wave. After every
// tick, against the children as stored: no child moves to a target before
// its wave opens in what the reconcile decided; Complete only when every
// child but the held and skipped ones is published at the target; and
// once the churn stops the rollout completes at the last revision.
func TestRolloutWithTheReconcilerUnderChurn(t *testing.T) {
	seeds := 2
	if testing.Short() {
		seeds = 1
	}
	for seed := int64(1); seed <= int64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { reconcilerChurn(t, seed, 100) })
	}
}

// Issue 61 #4: the simulation replays from its seed, exactly (it drew its
// random numbers while ranging over a map of the children).
func TestReconcilerChurnReplaysItsSeed(t *testing.T) {
	if a, b := reconcilerChurn(t, 3, 60), reconcilerChurn(t, 3, 60); a != b {
		t.Fatalf("seed 3 played twice differs:\n%s\n---\n%s", a, b)
	}
}

// reconcilerChurn runs the simulation and returns its trace: each tick's
// rollout as the reconcile decided it.
func reconcilerChurn(t *testing.T, seed int64, n int) string {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	var trace strings.Builder
	var objs []client.Object
	for i := 0; i < n; i++ {
		labels := map[string]string{"env": "prod"}
		if i == 17 {
			labels["ring"] = "canary"
		}
		objs = append(objs, repo(fmt.Sprintf("r-%03d", i), labels))
	}
	e := newEnv(t, objs...)
	truth := e.client
	st := e.r.Store.(*fakestore.Store)
	// The cache: the children as a tick before, a third of the time.
	cache := &staleChildren{Client: truth}
	e.r.Client, e.r.Reader = cache, truth
	// Lost status writes: the patch is taken (what the reconcile decided
	// is recorded) and, a fifth of the time, dropped.
	var decided *v1alpha2.RolloutStatus
	e.r.Client = &lossyStatus{Client: cache, lose: func() bool { return rng.Intn(5) == 0 }, decided: &decided}
	e.set(churnSet)
	fails := map[string]bool{}
	for i := 0; i < 2; i++ {
		fails[fmt.Sprintf("app-r-%03d-app", 50+rng.Intn(n-50))] = true
	}
	doneAt := map[string]int{} // a moved child's tick to be done, by generation
	for tick := 1; tick <= 300; tick++ {
		churning := tick < 180
		if churning && rng.Intn(30) == 0 {
			st.Publish(ns, "blueprints", "app", storetest.Blueprint) // a new revision, mid-wave or not
		}
		before := pins(t, truth)
		cache.stale = churning && rng.Intn(3) == 0
		decided = nil
		if err := e.try(); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		cache.snapshot(t)
		if decided != nil {
			checkTick(t, tick, decided, before, children(t, truth), e.getSet().Annotations, fails)
			fmt.Fprintf(&trace, "%d %s %s %s\n", tick, decided.Phase, decided.Target.Name, decided.Message)
		}
		if t.Failed() {
			t.Logf("seed %d fails at tick %d", seed, tick)
			return trace.String()
		}
		// The children's controller, and the operator skipping failures,
		// in name order: the draws are the seed's, whatever the map's.
		var skip []string
		kids := children(t, truth)
		for _, name := range slices.Sorted(maps.Keys(kids)) {
			v := kids[name]
			if fails[name] {
				skip = append(skip, name)
			}
			key := fmt.Sprintf("%s@%d", name, v.Generation)
			if v.Status.ObservedGeneration == v.Generation && !fails[name] {
				continue
			}
			if _, ok := doneAt[key]; !ok {
				doneAt[key] = tick + 1 + rng.Intn(3)
			}
			if tick >= doneAt[key] {
				settle(t, st, truth, v, fails[name])
			}
		}
		sort.Strings(skip)
		e.editAnnotation(RolloutSkipAnnotation, strings.Join(skip, ","))
	}
	s := e.getSet()
	revs, _ := st.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: "blueprints", Package: "app"})
	if r := s.Status.Rollout; r == nil || r.Phase != v1alpha2.RolloutComplete || r.Target.Revision != len(revs) {
		t.Fatalf("seed %d: after the churn: %+v (the upstream has %d revisions)", seed, r, len(revs))
	}
	return trace.String()
}

// checkTick checks what one reconcile decided against the children as
// stored before and after it.
func checkTick(t *testing.T, tick int, r *v1alpha2.RolloutStatus, before map[string]string, now map[string]pvapi.PackageVariant, ann map[string]string, fails map[string]bool) {
	t.Helper()
	after := map[string]string{}
	for name, v := range now {
		if u := v.Spec.Upstream; u != nil {
			after[name] = fmt.Sprintf("%s/%d", u.WorkspaceName, u.Revision)
		}
	}
	target := fmt.Sprintf("%s/%d", r.Target.Workspace, r.Target.Revision)
	open, waveOf := len(r.Waves), map[string]int{}
	for i, w := range r.Waves {
		if w.State != v1alpha2.WaveComplete && open == len(r.Waves) {
			open = i
		}
		for _, m := range w.Members {
			waveOf[m] = i
		}
	}
	for name, pin := range after {
		if pin == target && before[name] != target && waveOf[name] > open {
			t.Fatalf("tick %d: %s of wave %s moved to %s while wave %d is open", tick, name, r.Waves[waveOf[name]].Name, target, open)
		}
	}
	if r.Phase != v1alpha2.RolloutComplete || r.From == nil {
		return
	}
	held := controls(ann).Hold
	for name, pin := range after {
		if held[name] || fails[name] {
			continue
		}
		v := now[name]
		published := v.Status.ObservedGeneration == v.Generation && len(v.Status.DownstreamTargets) == 1 &&
			v.Status.DownstreamTargets[0].UpstreamLock != nil && v.Status.DownstreamTargets[0].UpstreamLock.Ref == fmt.Sprintf("app/v%d", r.Target.Revision)
		if pin != target || !published {
			t.Fatalf("tick %d: Complete at %s while %s is at %s (published there: %v): %s", tick, r.Target.Name, name, pin, published, r.Message)
		}
	}
}

// settle is the child's controller: Ready and published at the upstream
// its spec pins (or Stalled, for a child that fails).
func settle(t *testing.T, st *fakestore.Store, c client.Client, v pvapi.PackageVariant, fail bool) {
	t.Helper()
	ctx := context.Background()
	u := v.Spec.Upstream
	var lock *store.Lock
	revs, _ := st.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: u.Repo, Package: u.Package})
	for _, r := range revs {
		if r.Workspace == u.WorkspaceName && r.Revision == u.Revision {
			lock = store.LockFor(r)
		}
	}
	v.Status.ObservedGeneration = v.Generation
	if fail {
		kit.Set(&v.Status.Conditions, v.Generation, kit.Fixed(testNow), pvapi.ConditionStalled, metav1.ConditionTrue, pvapi.ReasonMutationFailed, "a broken blueprint")
		kit.Set(&v.Status.Conditions, v.Generation, kit.Fixed(testNow), pvapi.ConditionReady, metav1.ConditionFalse, pvapi.ReasonMutationFailed, "a broken blueprint")
	} else {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, pvapi.ConditionStalled)
		kit.Set(&v.Status.Conditions, v.Generation, kit.Fixed(testNow), pvapi.ConditionReady, metav1.ConditionTrue, pvapi.ReasonNoErrors, "ok")
		v.Status.DownstreamTargets = []pvapi.DownstreamTarget{{Name: fmt.Sprintf("%s.app.g%d", v.Name, v.Generation), Lifecycle: "Published", UpstreamLock: kit.StatusLock(lock)}}
	}
	if err := c.Status().Update(ctx, &v); err != nil {
		t.Fatal(err)
	}
}

func children(t *testing.T, c client.Client) map[string]pvapi.PackageVariant {
	t.Helper()
	var l pvapi.PackageVariantList
	if err := c.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]pvapi.PackageVariant{}
	for _, v := range l.Items {
		out[v.Name] = v
	}
	return out
}

// pins are the children's upstreams as "workspace/revision".
func pins(t *testing.T, c client.Client) map[string]string {
	out := map[string]string{}
	for name, v := range children(t, c) {
		if u := v.Spec.Upstream; u != nil {
			out[name] = fmt.Sprintf("%s/%d", u.WorkspaceName, u.Revision)
		}
	}
	return out
}

func (e *env) editAnnotation(key, value string) {
	s := e.getSet()
	if s.Annotations[key] == value {
		return
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations[key] = value
	if err := e.client.Update(context.Background(), s); err != nil {
		e.t.Fatal(err)
	}
}

// staleChildren serves the set's reads of its children from the last
// snapshot while stale (a cache one tick behind); everything else, and
// every read while not stale, from the truth.
type staleChildren struct {
	client.Client
	stale bool
	last  map[string]pvapi.PackageVariant
}

func (s *staleChildren) snapshot(t *testing.T) { s.last = children(t, s.Client) }

func (s *staleChildren) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	if v, ok := o.(*pvapi.PackageVariant); ok && s.stale {
		if old, ok := s.last[key.Name]; ok {
			old.DeepCopyInto(v)
			return nil
		}
	}
	return s.Client.Get(ctx, key, o, opts...)
}

func (s *staleChildren) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	if pl, ok := l.(*pvapi.PackageVariantList); ok && s.stale && s.last != nil {
		pl.Items = nil
		for _, v := range s.last {
			pl.Items = append(pl.Items, *v.DeepCopy())
		}
		return nil
	}
	return s.Client.List(ctx, l, opts...)
}

// lossyStatus records the set's status each reconcile decided, and loses
// some of the writes.
type lossyStatus struct {
	client.Client
	lose    func() bool
	decided **v1alpha2.RolloutStatus
}

func (l *lossyStatus) Status() client.SubResourceWriter {
	return &lossyWriter{SubResourceWriter: l.Client.Status(), l: l}
}

type lossyWriter struct {
	client.SubResourceWriter
	l *lossyStatus
}

func (w *lossyWriter) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	if s, ok := o.(*pvsapi.PackageVariantSet); ok {
		if r := s.Status.Rollout; r != nil {
			c := *r.DeepCopy()
			*w.l.decided = &c
		}
		if w.l.lose() {
			return nil // lost: the next reconcile reads the status before
		}
	}
	return w.SubResourceWriter.Patch(ctx, o, p, opts...)
}
