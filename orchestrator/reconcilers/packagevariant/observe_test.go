package packagevariant

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Issue 61 #3 (rule observe-cadence): a variant with a Published target
// comes back on its interval, though nothing wakes it (the annotation's
// when it has one, bounded below; the controller's when it does not
// parse); one with nothing published, or a controller without an
// interval, does not. A commit on the branch is then seen at the
// requeue alone.
func TestObservationOnACadence(t *testing.T) {
	e, _ := publishedVariant(t, false)
	e.r.ObserveInterval, e.r.Jitter = 5*time.Minute, func(time.Duration) time.Duration { return 0 }
	again := func() time.Duration {
		t.Helper()
		res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.RequeueAfter
	}
	if got := again(); got != 5*time.Minute {
		t.Fatalf("a published variant comes back after %s, want 5m", got)
	}
	for val, want := range map[string]time.Duration{"2h": 2 * time.Hour, "10s": observe.MinObserveInterval, "soon": 5 * time.Minute, "-1m": 5 * time.Minute} {
		e.annotate("app-prod", observe.ObserveIntervalAnnotation, val)
		if got := again(); got != want {
			t.Errorf("%s: %s: comes back after %s, want %s", observe.ObserveIntervalAnnotation, val, got, want)
		}
	}
	e.r.Jitter = nil
	e.annotate("app-prod", observe.ObserveIntervalAnnotation, "10m")
	if got := again(); got < 10*time.Minute || got > 11*time.Minute {
		t.Fatalf("with jitter: %s, want 10m to 11m", got)
	}

	// The requeue alone sees a commit on the branch.
	changed, file := aPersonsCommit(t, e.files(e.newestPublished()))
	e.branch(changed)
	again()
	if c := e.condition("app-prod", pvapi.ConditionPublishedDrift); c.Reason != pvapi.ReasonContentChanged || !strings.Contains(c.Message, file) {
		t.Fatalf("PublishedDrift = %+v", c)
	}

	e.r.ObserveInterval = 0
	if got := again(); got != 0 {
		t.Fatalf("without an interval: comes back after %s", got)
	}
	d := approvingEnv(t, false)
	d.r.ObserveInterval = 5 * time.Minute
	d.store.Publish(ns, "blueprints", "app", blueprint(t))
	d.variant(appVariant) // no approval: a draft only
	res, err := d.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
	if err != nil || res.RequeueAfter != 0 {
		t.Fatalf("a variant with nothing published: %v, comes back after %s", err, res.RequeueAfter)
	}
}

// Issue 61 #3: the observations run whatever the steps before them said: a
// Waiting approval (Porch's listing behind an approval already made)
// skipped the drift, which then waited for the next reconcile.
func TestObservationAfterAWaitingApproval(t *testing.T) {
	e, pub := publishedVariant(t, false)
	next := blueprint(t)
	next["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	e.store.Publish(ns, "blueprints", "app", next)
	changed, _ := aPersonsCommit(t, e.files(pub))
	e.branch(changed)
	e.r.Store = approvedBehind{e.store}
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
	if err != nil || res.RequeueAfter != cacheRetry {
		t.Fatalf("reconcile: %v, %+v; want the approval's wait", err, res)
	}
	if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, pvapi.ConditionPublishedDrift); c == nil {
		t.Fatalf("no drift observed after the waiting approval: %+v", e.get("app-prod").Status.Conditions)
	}
}

// BenchmarkObservation: what one observation of a converged published
// variant costs (rule observe-cadence, docs/performance.md): the store's
// calls (on Porch, listings served by the informer cache and reads only
// when the branch moved) and the writes, none.
func BenchmarkObservation(b *testing.B) {
	e, _ := publishedVariant(b, false)
	e.r.ObserveInterval = observe.DefaultObserveInterval
	e.mustReconcile("app-prod")
	e.store.ResetCalls()
	writes := e.totalWrites()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.mustReconcile("app-prod")
	}
	calls := 0
	for _, n := range e.store.Calls() {
		calls += n
	}
	b.ReportMetric(float64(calls)/float64(b.N), "store-calls/observation")
	b.ReportMetric(float64(e.store.Calls()["getResources"])/float64(b.N), "reads/observation")
	b.ReportMetric(float64(e.totalWrites()-writes)/float64(b.N), "writes/observation")
}
