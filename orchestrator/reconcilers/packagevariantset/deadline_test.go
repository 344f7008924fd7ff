package packagevariantset

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

// hangingStore is a Porch that never answers a listing.
type hangingStore struct{ store.Store }

func (hangingStore) ListRevisions(ctx context.Context, _ store.PackageKey) ([]store.Revision, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A Porch that never answers the set's listing of its upstream: the
// reconcile ends at its deadline, Ready=False DeadlineExceeded says so,
// and the error is returned to be retried.
func TestSetReconcileEndsAtItsDeadline(t *testing.T) {
	e := newEnv(t, repo("cluster-01", map[string]string{"env": "prod"}))
	e.set(prodSet)
	e.r.Store = hangingStore{e.r.Store}
	e.r.ReconcileTimeout = 300 * time.Millisecond
	err := fntest.Returns(t, 30*time.Second, func() error { return e.try() })
	if err == nil || !strings.HasPrefix(err.Error(), "the reconcile passed its deadline of 300ms (--reconcile-timeout) and stopped; it is retried: ") {
		t.Fatalf("the reconcile's error: %v", err)
	}
	ready := apimeta.FindStatusCondition(e.getSet().Status.Conditions, pvapi.ConditionReady)
	if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != kit.ReasonDeadlineExceeded {
		t.Fatalf("Ready: %+v", ready)
	}
	t.Log(ready.Message)
}
