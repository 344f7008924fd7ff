package packagevariant

import (
	"context"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// movedReader is the API server while the cache lags a hand-over: the
// variant read past the cache carries another shard's label (or is gone).
type movedReader struct {
	client.Reader
	shard string // "-": gone
}

func (m movedReader) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	if m.shard == "-" {
		return apierrors.NewNotFound(pvapi.GroupVersion.WithResource("packagevariants").GroupResource(), key.Name)
	}
	if err := m.Reader.Get(ctx, key, o, opts...); err != nil {
		return err
	}
	l := o.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[v1alpha2.ShardLabel] = m.shard
	o.SetLabels(l)
	return nil
}

// Issue 56 #1: a variant handed over to another shard while this shard's
// cache still shows it creates no draft here (two shards creating one
// variant's draft at once would make two); it is read fresh first, and
// the reconcile stops, not retried. Still this shard's, it goes on.
func TestShardNoDraftOnceHandedOver(t *testing.T) {
	for _, tt := range []struct {
		shard, why string
	}{
		{"b", "PackageVariant app-prod moved to shard b: no draft created here, its controller has it"},
		{"-", "PackageVariant app-prod is gone: no draft created"},
	} {
		e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(appVariant)
		e.r.Shard, e.r.Reader = &kit.Shard{}, movedReader{Reader: e.client, shard: tt.shard}
		res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
		if err != nil || res.RequeueAfter != 0 {
			t.Fatalf("moved to %q: %v, %+v; want no error and no requeue", tt.shard, err, res)
		}
		if revs := e.downstream("app-prod"); len(revs) != 0 {
			t.Fatalf("moved to %q: drafts created: %+v", tt.shard, revs)
		}
		if err := e.r.stillMine(context.Background(), e.get("app-prod")); err == nil || err.Error() != tt.why {
			t.Fatalf("moved to %q: outcome %v, want %q", tt.shard, err, tt.why)
		}
	}
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.r.Shard, e.r.Reader = &kit.Shard{Key: "b"}, movedReader{Reader: e.client, shard: "b"}
	e.mustReconcile("app-prod")
	if revs := e.downstream("app-prod"); len(revs) != 1 {
		t.Fatalf("still this shard's: drafts %+v, want one", revs)
	}
}
