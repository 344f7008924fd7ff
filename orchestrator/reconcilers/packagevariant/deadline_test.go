package packagevariant

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hangingStore is a Porch that never answers a draft's creation: the call
// returns only when its context ends.
type hangingStore struct{ store.Store }

func (hangingStore) CreateDraft(ctx context.Context, _ store.DraftSpec) (store.Revision, error) {
	<-ctx.Done()
	return store.Revision{}, ctx.Err()
}

// A Porch that never answers: the reconcile ends at its deadline (the
// worker is free), Ready=False DeadlineExceeded names the bound and what
// was under way, and the error is returned to be retried; the status is
// written though the steps' context has ended.
func TestReconcileEndsAtItsDeadline(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "ana"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.r.Store = hangingStore{e.store}
	e.r.ReconcileTimeout = 300 * time.Millisecond
	err := fntest.Returns(t, 30*time.Second, func() error { return e.reconcile("app-prod") })
	if err == nil || !strings.HasPrefix(err.Error(), "the reconcile passed its deadline of 300ms (--reconcile-timeout) and stopped; it is retried: ") {
		t.Fatalf("the reconcile's error: %v", err)
	}
	t.Log(err)
	v := e.get("app-prod")
	ready := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != kit.ReasonDeadlineExceeded || ready.Message != err.Error() {
		t.Fatalf("Ready: %+v", ready)
	}
	if rec := apimeta.FindStatusCondition(v.Status.Conditions, kit.ConditionReconciling); rec == nil || rec.Status != metav1.ConditionTrue {
		t.Fatalf("Reconciling: %+v", rec)
	}
}
