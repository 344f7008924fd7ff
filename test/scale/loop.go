package scale

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// item is one queued reconcile: a set's or a variant's.
type item struct {
	set  bool
	name string
}

// loop is the controller as controller-runtime runs it, without an API
// server: one rate-limited work queue (a key is never reconciled by two
// workers at once; a failure is retried with the controller's backoff; a
// RequeueAfter is honoured), W workers, and the watches the manager sets
// up, as the cluster client's writes: a variant written by its set is
// queued; a variant's every write queues its set.
type loop struct {
	q        workqueue.TypedRateLimitingInterface[item]
	pv       *packagevariant.Reconciler
	pvs      *packagevariantset.Reconciler
	inflight atomic.Int64
	done     atomic.Int64
	failures atomic.Int64
	wg       sync.WaitGroup
}

// watched wraps the cluster client with the watches: writes queue their
// reconciles (q is read when the write happens: the loop sets it).
func watched(c client.WithWatch, l **loop) client.Client {
	queue := func(o client.Object, self bool) {
		if *l == nil {
			return
		}
		if _, ok := o.(*pvapi.PackageVariant); !ok {
			return
		}
		if self {
			(*l).q.Add(item{name: o.GetName()})
		}
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "PackageVariantSet" {
				(*l).q.Add(item{set: true, name: ref.Name})
			}
		}
	}
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, o, opts...)
			if err == nil {
				queue(o, true)
			}
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			err := c.Update(ctx, o, opts...)
			if err == nil {
				queue(o, true)
			}
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			err := c.Patch(ctx, o, p, opts...)
			if err == nil {
				queue(o, true)
			}
			return err
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			err := c.SubResource(sub).Patch(ctx, o, p, opts...)
			if err == nil {
				queue(o, false)
			}
			return err
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, o, opts...)
			if err == nil {
				queue(o, false)
			}
			return err
		},
	})
}

func newLoop(pv *packagevariant.Reconciler, pvs *packagevariantset.Reconciler) *loop {
	return &loop{
		q:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[item]()),
		pv: pv, pvs: pvs,
	}
}

// start runs w workers until stop.
func (l *loop) start(ctx context.Context, w int) {
	for range w {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				it, shutdown := l.q.Get()
				if shutdown {
					return
				}
				l.inflight.Add(1)
				l.reconcile(ctx, it)
				l.inflight.Add(-1)
				l.q.Done(it)
			}
		}()
	}
}

func (l *loop) reconcile(ctx context.Context, it item) {
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: it.name}}
	var res ctrl.Result
	var err error
	if it.set {
		res, err = l.pvs.Reconcile(ctx, req)
	} else {
		res, err = l.pv.Reconcile(ctx, req)
	}
	l.done.Add(1)
	switch {
	case err != nil:
		l.failures.Add(1)
		l.q.AddRateLimited(it)
	case res.RequeueAfter > 0:
		l.q.Forget(it)
		l.q.AddAfter(it, res.RequeueAfter)
	case res.Requeue: //nolint:staticcheck // the reconcilers may still ask for it
		l.q.AddRateLimited(it)
	default:
		l.q.Forget(it)
	}
}

// idle says whether nothing is queued or running (delayed requeues aside).
func (l *loop) idle() bool { return l.q.Len() == 0 && l.inflight.Load() == 0 }

// stop shuts the queue down and waits for the workers.
func (l *loop) stop() {
	l.q.ShutDown()
	l.wg.Wait()
}

// waitIdle waits until the loop has been idle for settle, or timeout.
func (l *loop) waitIdle(settle, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	var since time.Time
	for time.Now().Before(deadline) {
		if l.idle() {
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) >= settle {
				return true
			}
		} else {
			since = time.Time{}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}
