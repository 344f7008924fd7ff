package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
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

// A variant handed over to another process (a shard relabelled, a
// restart) while the listing lags: the new process remembers no draft of
// it, its status names one. The status's draft is read directly and
// mutated; no second draft (e2e-porch TestShardsOnPorch made
// packagevariant-2 beside the packagevariant-1 the status named). A
// named draft deleted since is not waited for: the next clone comes.
func TestHandedOverDraftTheListingDoesNotShow(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || len(e.get("app-prod").Status.DownstreamTargets) != 1 {
		t.Fatalf("before the hand-over: %+v", revs)
	}
	lag := &lagging{Store: e.store, hidden: map[string]bool{revs[0].Name: true}}
	e.r = &Reconciler{Client: e.client, Store: lag, Clock: kit.Fixed(testNow), Recorder: e.rec, Kinds: teamKinds}
	before := e.totalWrites()
	e.mustReconcile("app-prod")
	if got := e.downstream("app-prod"); len(got) != 1 || got[0].Name != revs[0].Name {
		t.Fatalf("after the hand-over, the listing without the draft: %+v; want %s alone", got, revs[0].Name)
	}
	if w := e.totalWrites() - before; w != 0 {
		t.Fatalf("the hand-over wrote %d times; want none (the draft is as the variant left it)", w)
	}
	if c := e.condition("app-prod", "Ready"); c.Status != "True" {
		t.Fatalf("Ready = %+v", c)
	}
	if err := e.store.Delete(context.Background(), ns, revs[0].Name); err != nil {
		t.Fatal(err)
	}
	e.r = &Reconciler{Client: e.client, Store: lag, Clock: kit.Fixed(testNow), Recorder: e.rec, Kinds: teamKinds}
	e.mustReconcile("app-prod")
	if got := e.downstream("app-prod"); len(got) != 1 || got[0].ResourceVersion == revs[0].ResourceVersion {
		t.Fatalf("the named draft deleted: %+v; want a new clone", got)
	}
}

// emptied is the store with the named drafts holding no file (Porch's
// half-failed create), once each.
type emptied struct {
	store.Store
	empty map[string]bool
}

func (s *emptied) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if s.empty[name] {
		delete(s.empty, name)
		return store.Resources{}, fmt.Errorf("package revision %s/%s %w", namespace, name, store.ErrNoResources)
	}
	return s.Store.GetResources(ctx, namespace, name)
}

// The draft a variant just made holds no file (e2e-porch TestShardsOnPorch:
// Porch answered a create 500 and left the draft listed, empty, for good):
// it is deleted, said in a Warning Event, and made again; a draft holding
// no file that is not the one the variant made last is named, not deleted.
func TestEmptyDraftIsMadeAgain(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.r.Store = &emptied{Store: e.store, empty: map[string]bool{"deploy.app-prod.packagevariant-1": true}}
	err := e.reconcile("app-prod")
	if revs := e.downstream("app-prod"); len(revs) != 0 {
		t.Fatalf("the empty draft was kept: %+v (%v)", revs, err)
	}
	if ev := strings.Join(e.events(), "\n"); !strings.Contains(ev, "Warning EmptyDraftDeleted draft deploy.app-prod.packagevariant-1 holds no file (Porch's create of it failed half-way): deleted; the downstream is made again") {
		t.Fatalf("events: %s", ev)
	}
	e.mustReconcile("app-prod")
	if revs := e.downstream("app-prod"); len(revs) != 1 || e.condition("app-prod", "Ready").Status != "True" {
		t.Fatalf("made again: %+v, Ready %+v", revs, e.condition("app-prod", "Ready"))
	}
	// Another process meets the draft empty: not its own last, named.
	e.r = &Reconciler{Client: e.client, Store: &emptied{Store: e.store, empty: map[string]bool{"deploy.app-prod.packagevariant-1": true}},
		Clock: kit.Fixed(testNow), Recorder: e.rec, Kinds: teamKinds}
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Labels = map[string]string{"env": "prod", "tier": "2"} })
	err = e.reconcile("app-prod")
	if err == nil || !strings.Contains(err.Error(), "has no resources: it is not the draft this variant made last, so it is left for a person to delete (porchctl rpkg del deploy.app-prod.packagevariant-1)") {
		t.Fatalf("an empty draft not its last: %v", err)
	}
	if revs := e.downstream("app-prod"); len(revs) != 1 {
		t.Fatalf("a draft not its last was deleted: %+v", revs)
	}
}

// rolledBack is the store as Porch v1.5.3 answers a create whose render
// fails under load: the create is refused for its render, and the draft it
// rolled back stays listed, owned, with no files.
type rolledBack struct {
	store.Store
	zombies map[string]bool
}

func (s *rolledBack) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	rev, err := s.Store.CreateDraft(ctx, spec)
	if err != nil {
		return rev, err
	}
	s.zombies[rev.Name] = true
	return store.Revision{}, fmt.Errorf("%w: Internal error occurred: fn.render: pkg /: pipeline.run: exit code 1", store.ErrRenderFailed)
}

func (s *rolledBack) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if s.zombies[name] {
		return store.Resources{}, fmt.Errorf("package revision %s/%s %w", namespace, name, store.ErrNoResources)
	}
	return s.Store.GetResources(ctx, namespace, name)
}

// The draft Porch rolled back when the variant's create failed its render,
// still listed with no files, is that render failure: the variant reads
// RenderFailed, not an empty draft left for a person (e2e-porch
// TestGroupReleaseOnPorch under load: the canary failed on "has no
// resources: it is not the draft this variant made last").
func TestRolledBackDraftIsTheRenderFailure(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.r.Store = &rolledBack{Store: e.store, zombies: map[string]bool{}}
	for i := 1; i <= 2; i++ {
		err := e.reconcile("app-prod")
		if err == nil || !errors.Is(err, store.ErrRenderFailed) {
			t.Fatalf("reconcile %d: %v", i, err)
		}
		if c := e.condition("app-prod", "Ready"); c.Reason != pvapi.ReasonRenderFailed {
			t.Fatalf("reconcile %d: Ready %+v", i, c)
		}
		if i == 2 && !strings.Contains(err.Error(), "(Porch still lists deploy.app-prod.packagevariant-1, the draft it rolled back, with no files)") {
			t.Fatalf("reconcile %d: %v", i, err)
		}
	}
}
