package packagevariantset

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// settleMember writes a child's status as its own reconciler would once
// its package is published at the upstream its spec pins (the member's
// revision selected from the store), Ready, its health as given (nil: a
// rollout's health check not read yet).
func settleMember(t *testing.T, e *env, v pvapi.PackageVariant, health *pvapi.TargetHealth) {
	t.Helper()
	ctx := context.Background()
	u := v.Spec.Upstream
	revs, err := e.r.Store.ListRevisions(ctx, store.PackageKey{Namespace: ns, Repository: u.Repo, Package: u.Package})
	if err != nil {
		t.Fatal(err)
	}
	i := len(revs) - 1 // the latest published: what an unpinned member selects
	for j, r := range revs {
		if u.Revision != 0 && r.Revision == u.Revision {
			i = j
		}
	}
	v.Status.ObservedGeneration = v.Generation
	kit.Set(&v.Status.Conditions, v.Generation, kit.Fixed(testNow), pvapi.ConditionReady, metav1.ConditionTrue, pvapi.ReasonNoErrors, "ok")
	v.Status.DownstreamTargets = []pvapi.DownstreamTarget{{Name: fmt.Sprintf("%s.g%d", v.Name, v.Generation), Lifecycle: "Published",
		UpstreamLock: kit.StatusLock(store.LockFor(revs[i])), Health: health}}
	if err := e.client.Status().Update(ctx, &v); err != nil {
		t.Fatal(err)
	}
}

// One rollout over units, its undo: a grouped rollout with a health check
// undone counts a target back at the from revision when every member is
// done there as a wave's member is, healthy included, as a set of one
// package counts a child; published alone is not back (it counted "10 of
// 10 back" while the canary's cluster had not reported its members
// healthy).
func TestGroupUndoWaitsForHealthAtFrom(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.publishGroup()
	e.set(strings.Replace(groupedSet, "  rollout:\n", "  rollout:\n    minSuccessSeconds: 600\n    health: {apiVersion: v1, kind: ConfigMap, nameExpr: \"'app'\", condition: \"true\"}\n", 1))
	healthy := &pvapi.TargetHealth{Status: metav1.ConditionTrue, Reason: "Healthy", Since: metav1.NewTime(testNow.Add(-time.Hour))}
	e.reconcile()
	for _, c := range e.children() {
		settleMember(t, e, c, healthy)
	}
	e.reconcile()
	if st := e.getSet().Status.Rollout; st == nil || st.Phase != "Complete" {
		t.Fatalf("the first revision's rollout: %+v", st)
	}
	// A second group revision moves upf: the canary's target moves.
	st := e.r.Store.(*fakestore.Store)
	st.Publish(ns, "catalog", "free5gc-upf", storetest.Blueprint)
	e.publishGroup2()
	e.reconcile()
	ro := e.getSet().Status.Rollout
	if ro.Target.Name == ro.From.Name {
		t.Fatalf("no second revision: %+v", ro)
	}
	e.reconcile() // the canary's members moved
	e.editSet(func(s *pvsapi.PackageVariantSet) { s.Annotations[RolloutUndoAnnotation] = ro.Target.Name })
	e.reconcile() // pinned back
	e.reconcile() // counted from the children as they now are
	// The canary's members are back at from, published there, their
	// cluster's health not read again yet.
	for _, c := range e.children() {
		if c.Spec.Downstream.Repo == "r-003" {
			settleMember(t, e, c, nil)
		}
	}
	e.reconcile()
	p := e.getSet().Status.Rollout.UndoProgress
	if p == nil || p.Children != 10 || p.Back != 10 || p.Done != 9 {
		t.Fatalf("undo progress %+v: want 10 targets pinned back, 9 done (the canary's members not reported healthy at from)", p)
	}
	// Healthy at from for a minute of the soak's ten: the undo's next gate
	// is when the soak ends, as a wave's would be (pvctl run --until
	// waits for it).
	for _, c := range e.children() {
		if c.Spec.Downstream.Repo == "r-003" {
			settleMember(t, e, c, &pvapi.TargetHealth{Status: metav1.ConditionTrue, Reason: "Healthy", Since: metav1.NewTime(testNow.Add(-time.Minute))})
		}
	}
	e.reconcile()
	ro = e.getSet().Status.Rollout
	if n := ro.Next; ro.UndoProgress == nil || ro.UndoProgress.Done != 9 || n == nil || n.At != testNow.Add(9*time.Minute).UTC().Format(time.RFC3339) ||
		!strings.Contains(n.What, "(on its way back to "+ro.From.Name+")") {
		t.Fatalf("soaking at from: undo %+v, next gate %+v", ro.UndoProgress, ro.Next)
	}
	for _, c := range e.children() {
		if c.Spec.Downstream.Repo == "r-003" {
			settleMember(t, e, c, healthy)
		}
	}
	e.reconcile()
	if p := e.getSet().Status.Rollout.UndoProgress; p == nil || p.Done != 10 {
		t.Fatalf("undo progress %+v: want 10 done once the canary's members are healthy at from", p)
	}
}

// publishGroup2 publishes the group's second revision: upf at its
// second revision, smf at its first.
func (e *env) publishGroup2() {
	e.r.Store.(*fakestore.Store).Publish(ns, "blueprints", "free5gc", map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"group.yaml": "apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n" +
			"spec:\n  members:\n  - {name: upf, upstream: {repo: catalog, package: free5gc-upf, revision: 2}}\n  - {name: smf, upstream: {repo: catalog, package: free5gc-smf, revision: 1}}\n",
	})
}
