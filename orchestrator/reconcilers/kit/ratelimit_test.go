package kit

import (
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Issue 44 #5: a request that keeps failing is retried with a backoff that
// doubles from 5 ms and stops growing at MaxRetryDelay (controller-runtime's
// default went on to 16 min 40 s); a success forgets it.
func TestRetryBackoffIsCapped(t *testing.T) {
	rl := RateLimiter()
	req := reconcile.Request{}
	req.Name = "a"
	var last time.Duration
	for i := 0; i < 40; i++ {
		last = rl.When(req)
	}
	if last != MaxRetryDelay {
		t.Fatalf("after 40 failures the delay is %s, want the cap %s", last, MaxRetryDelay)
	}
	rl.Forget(req)
	if d := rl.When(req); d > time.Second {
		t.Fatalf("after a success the first retry waits %s", d)
	}
}
