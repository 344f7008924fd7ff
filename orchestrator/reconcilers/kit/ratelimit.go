package kit

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// MaxRetryDelay bounds the backoff of a transient failure:
// Porch v1.5.3 sometimes fails every write to a repository for a while
// ("ref file is empty"), and controller-runtime's default backoff grows to
// 16 minutes 40 seconds, so a repository that healed could wait that long
// for its next try. Both reconcilers retry from 5 ms, doubling, to at most
// MaxRetryDelay; the variant shows Reconciling=True with Porch's error
// meanwhile, and pvkit_porch_requests_total{code} counts the failures.
const MaxRetryDelay = 2 * time.Minute

// RateLimiter is the reconcilers' work queue rate limiter:
// controller-runtime's default (exponential per item, and 10 per second
// with a burst of 100 overall) with the per-item delay capped at
// MaxRetryDelay.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](5*time.Millisecond, MaxRetryDelay),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(10), 100)},
	)
}
