package packagevariantset

import (
	"context"
	"slices"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// shardView is what a sharded manager's cache serves: sets and variants of
// the shard only (the informers' label selector), everything else as it
// is; writes go through.
func shardView(truth client.WithWatch, s *kit.Shard) client.Client {
	hidden := func(o client.Object) bool {
		switch o.(type) {
		case *pvapi.PackageVariant, *pvsapi.PackageVariantSet:
			return !s.Owns(o.GetLabels())
		}
		return false
	}
	return interceptor.NewClient(truth, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, o, opts...); err != nil {
				return err
			}
			if hidden(o) {
				return apierrors.NewNotFound(pvapi.GroupVersion.WithResource("packagevariants").GroupResource(), key.Name)
			}
			return nil
		},
		List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, l, opts...); err != nil {
				return err
			}
			if pl, ok := l.(*pvapi.PackageVariantList); ok {
				pl.Items = slices.DeleteFunc(pl.Items, func(v pvapi.PackageVariant) bool { return hidden(&v) })
			}
			return nil
		},
	})
}

// shardOf reads the shard labels of the set's children.
func (e *env) shardsOfChildren() map[string]string {
	out := map[string]string{}
	for name, c := range e.children() {
		out[name] = c.Labels[v1alpha2.ShardLabel]
	}
	return out
}

func (e *env) labelSet(shard string) {
	s := e.getSet()
	setShard(s, shard)
	if err := e.client.Update(context.Background(), s); err != nil {
		e.t.Fatal(err)
	}
}

// Issue 56 #1: a set's children carry its shard label; relabelling the set
// hands it and its children over to the new shard's controller, which
// moves the children (read past its cache, once) and then plans with them:
// nothing created twice, nothing removed.
func TestShardHandOver(t *testing.T) {
	e := newEnv(t, world()...)
	truth := e.client.(client.WithWatch)
	e.set(fanout)
	unlabelled := &kit.Shard{}
	e.r.Client, e.r.Reader, e.r.Shard = shardView(truth, unlabelled), truth, unlabelled
	e.reconcile()
	for name, shard := range e.shardsOfChildren() {
		if shard != "" {
			t.Fatalf("child %s of an unlabelled set has shard %q", name, shard)
		}
	}
	if s := e.getSet().Status.Shard; s != "" {
		t.Fatalf("status.shard = %q, want empty", s)
	}
	e.events()

	// Relabelled to b: the unlabelled shard's controller no longer sees
	// it; b's does, and hands it over.
	e.labelSet("b")
	if err := e.try(); err != nil { // the unlabelled shard: the set is gone from its cache
		t.Fatalf("the old shard: %v", err)
	}
	b := &kit.Shard{Key: "b"}
	e.r.Client, e.r.Shard = shardView(truth, b), b
	if err := e.try(); err != nil {
		t.Fatal(err)
	}
	for name, shard := range e.shardsOfChildren() {
		if shard != "b" {
			t.Fatalf("child %s has shard %q after the hand-over, want b", name, shard)
		}
	}
	if s := e.getSet().Status.Shard; s != "b" {
		t.Fatalf("status.shard = %q, want b", s)
	}
	if ev := e.events(); !slices.Contains(ev, "Normal "+EventHandedOver) {
		t.Fatalf("events: %v", ev)
	}
	before := e.total()
	e.reconcile()
	e.reconcile()
	if w := e.total() - before; w != 0 {
		t.Fatalf("the handed-over set made %d writes (creates, removals or updates of children it has)", w)
	}
	if n := len(e.children()); n != 4 {
		t.Fatalf("%d children, want 4", n)
	}
	if c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Ready"); c == nil || c.Status != "True" {
		t.Fatalf("Ready = %+v", c)
	}

	// And back to the unlabelled shard: the label goes from every child.
	e.labelSet("")
	e.r.Client, e.r.Shard = shardView(truth, unlabelled), unlabelled
	if err := e.try(); err != nil {
		t.Fatal(err)
	}
	for name, shard := range e.shardsOfChildren() {
		if shard != "" {
			t.Fatalf("child %s has shard %q back in the unlabelled shard", name, shard)
		}
	}
	e.reconcile()
	if n := len(e.children()); n != 4 {
		t.Fatalf("%d children, want 4", n)
	}
}

// A child a person moved to another shard (its set's shard unchanged) is
// taken back: the set's shard cannot see it, so it would create it again;
// the create finds it and labels it back.
func TestShardChildTakenBack(t *testing.T) {
	e := newEnv(t, world()...)
	truth := e.client.(client.WithWatch)
	e.set(fanout)
	e.labelSet("b")
	b := &kit.Shard{Key: "b"}
	e.r.Client, e.r.Reader, e.r.Shard = shardView(truth, b), truth, b
	e.reconcile()
	if s := e.shardsOfChildren(); len(s) != 4 || s["app-cluster-02-app"] != "b" {
		t.Fatalf("children's shards: %v", s)
	}
	child := &pvapi.PackageVariant{}
	if err := truth.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-cluster-02-app"}, child); err != nil {
		t.Fatal(err)
	}
	setShard(child, "x")
	if err := truth.Update(context.Background(), child); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	if s := e.shardsOfChildren(); len(s) != 4 || s["app-cluster-02-app"] != "b" {
		t.Fatalf("children's shards after the take-back: %v", s)
	}
}

// A PackageVariant of another shard holding a child's name is not taken:
// the create's error says so.
func TestShardOthersNameNotTaken(t *testing.T) {
	other := &pvapi.PackageVariant{}
	other.Namespace, other.Name, other.Labels = ns, "app-cluster-01-app", map[string]string{v1alpha2.ShardLabel: "x"}
	e := newEnv(t, append(world(), other)...)
	truth := e.client.(client.WithWatch)
	e.set(fanout)
	unlabelled := &kit.Shard{}
	e.r.Client, e.r.Reader, e.r.Shard = shardView(truth, unlabelled), truth, unlabelled
	err := e.try()
	if err == nil || !strings.Contains(err.Error(), `create PackageVariant "app-cluster-01-app": packagevariants.config.porch.kpt.dev "app-cluster-01-app" already exists`) {
		t.Fatalf("err = %v", err)
	}
	got := &pvapi.PackageVariant{}
	if err := truth.Get(context.Background(), client.ObjectKeyFromObject(other), got); err != nil || got.Labels[v1alpha2.ShardLabel] != "x" {
		t.Fatalf("the other shard's PackageVariant: %v %v", got.Labels, err)
	}
}
