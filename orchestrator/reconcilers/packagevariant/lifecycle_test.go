package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

func TestDeleteAndOrphan(t *testing.T) {
	for _, policy := range []string{"delete", "orphan"} {
		t.Run(policy, func(t *testing.T) {
			e := newEnv(t)
			e.store.Publish(ns, "blueprints", "app", blueprint(t))
			e.variant(strings.Replace(appVariant, "labels: {env: prod}", "labels: {env: prod}\n  deletionPolicy: "+policy, 1))
			e.mustReconcile("app-prod")
			pub, _ := e.store.Approve(ns, e.downstream("app-prod")[0].Name)
			e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.PackageContext.Data["tier"] = "gold" })
			e.mustReconcile("app-prod") // a published revision and an edit draft
			if err := e.client.Delete(context.Background(), e.get("app-prod")); err != nil {
				t.Fatal(err)
			}
			e.mustReconcile("app-prod")
			revs := e.downstream("app-prod")
			if policy == "delete" {
				if len(revs) != 1 || revs[0].Name != pub.Name || revs[0].Lifecycle != store.DeletionProposed || revs[0].OwnedBy(uid("app-prod")) {
					t.Fatalf("want the draft deleted and the published revision proposed for deletion: %+v", revs)
				}
			} else if len(revs) != 2 || revs[0].OwnedBy(uid("app-prod")) || revs[1].OwnedBy(uid("app-prod")) || revs[0].Lifecycle != store.Published {
				t.Fatalf("want both revisions kept and disowned: %+v", revs)
			}
			v := &pvapi.PackageVariant{}
			if err := e.client.Get(context.Background(), clientKey("app-prod"), v); err == nil {
				t.Fatalf("the variant must be gone once its finalizer is removed: %+v", v.Finalizers)
			}
		})
	}
}

// A reconcile of a deleted variant that read a lagging cache (the
// finalizer still there, the variant already gone) finishes without an
// error: seen on a real Porch as ERROR "packagevariants ... not found" for
// every variant of a deleted set.
func TestDeleteOfAVariantGoneAlready(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	if err := e.client.Delete(context.Background(), e.get("app-prod")); err != nil {
		t.Fatal(err)
	}
	stale := e.get("app-prod")
	e.mustReconcile("app-prod")
	if err := e.client.Get(context.Background(), clientKey("app-prod"), &pvapi.PackageVariant{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the variant is not gone: %v", err)
	}
	if err := e.r.reconcileDelete(context.Background(), stale); err != nil {
		t.Fatalf("deleting from a stale read: %v, want no error", err)
	}
}

// rule finalizer-waits: a failing delete keeps the finalizer; the retry finishes the job.
func TestFailingDeleteKeepsFinalizer(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	if err := e.client.Delete(context.Background(), e.get("app-prod")); err != nil {
		t.Fatal(err)
	}
	e.store.Inject(fakestore.Fault{Op: fakestore.OpDelete, Err: errors.New("porch is down")})
	err := e.reconcile("app-prod")
	if err == nil || !strings.Contains(err.Error(), "porch is down") {
		t.Fatalf("reconcile error = %v", err)
	}
	if v := e.get("app-prod"); !controllerutil.ContainsFinalizer(v, pv.Finalizer) {
		t.Fatal("the finalizer was removed although the draft was not deleted")
	}
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Reason != pvapi.ReasonDeleting || !strings.Contains(c.Message, "porch is down") {
		t.Fatalf("Ready = %+v", c)
	}
	e.mustReconcile("app-prod")
	if n := len(e.downstream("app-prod")); n != 0 {
		t.Fatalf("%d revisions left", n)
	}
}

// rule idempotent-drafts: a create that timed out after succeeding gives exactly one draft,
// found at once (the package is listed again when a create fails).
func TestCreateTimeoutGivesOneDraft(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.store.Inject(fakestore.Fault{Op: fakestore.OpCreate, Err: errors.New("context deadline exceeded"), After: true})
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || !revs[0].OwnedBy(uid("app-prod")) {
		t.Fatalf("want exactly one owned draft, got %+v", revs)
	}
	contains(t, e.files(revs[0]), "package-context.yaml", "env: prod")
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
}

// A create that fails and leaves nothing is reported and retried.
func TestCreateFailureIsRetried(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.store.Inject(fakestore.Fault{Op: fakestore.OpCreate, Err: errors.New("porch is down")})
	err := e.reconcile("app-prod")
	if err == nil || !strings.Contains(err.Error(), `creating a clone draft of default/deploy/app-prod in workspace "packagevariant-1": porch is down`) {
		t.Fatalf("reconcile = %v", err)
	}
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "porch is down") {
		t.Fatalf("Ready = %+v", c)
	}
	e.mustReconcile("app-prod")
	if revs := e.downstream("app-prod"); len(revs) != 1 || revs[0].Workspace != "packagevariant-1" {
		t.Fatalf("want one draft in packagevariant-1, got %+v", revs)
	}
}

// Never an ownerless draft (issue 13.4): Porch records the new draft
// before its owner reference lands and the create fails; the variant takes
// the draft it asked for back at once, with its labels, and makes no other.
func TestOwnerlessDraftIsReclaimedAtOnce(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.us-east1:5432"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.store.Inject(fakestore.Fault{Op: fakestore.OpCreate, Err: errors.New(`packagerevisions.porch.kpt.dev "deploy.app-prod.packagevariant-1" already exists`), After: true, Ownerless: true})
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || !revs[0].OwnedBy(uid("app-prod")) || revs[0].Labels["env"] != "prod" || revs[0].Workspace != "packagevariant-1" {
		t.Fatalf("want the one draft asked for, owned, with the variant's labels: %+v", revs)
	}
	contains(t, e.files(revs[0]), "package-context.yaml", "env: prod")
	ev := e.events()
	if len(ev) != 1 || ev[0] != "Normal DraftReclaimed took back draft deploy.app-prod.packagevariant-1: Porch recorded it before its owner reference landed" {
		t.Fatalf("Events = %q", ev)
	}
	before := e.totalWrites()
	e.mustReconcile("app-prod")
	if w := e.totalWrites() - before; w != 0 || len(e.downstream("app-prod")) != 1 {
		t.Fatalf("after the reclaim: %d writes, %d revisions", w, len(e.downstream("app-prod")))
	}
}

// The same when the draft shows up only after the failed create returned
// (the refresh is late): the next reconcile takes it back instead of
// creating packagevariant-2.
func TestOwnerlessDraftIsReclaimedWhenItShowsUp(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.store.Inject(fakestore.Fault{Op: fakestore.OpCreate, Err: errors.New("the server was unable to return a response in the time allotted")})
	if err := e.reconcile("app-prod"); err == nil {
		t.Fatal("a failed create with nothing to take back must be reported")
	}
	// Porch's refresh records the draft after all, without owner.
	if _, err := e.store.CreateDraft(context.Background(), store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod",
		Workspace: "packagevariant-1", Task: store.Task{Type: store.Clone, Upstream: e.store.All(ns)[0].Name}}); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || !revs[0].OwnedBy(uid("app-prod")) || revs[0].Workspace != "packagevariant-1" {
		t.Fatalf("want packagevariant-1 taken back, got %+v", revs)
	}
}

// An ownerless draft the variant did not ask for (an earlier process's) is
// reported on the variant when it creates a draft next to it.
func TestOwnerlessDraftIsReported(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	if _, err := e.store.CreateDraft(context.Background(), store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod",
		Workspace: "packagevariant-1", Task: store.Task{Type: store.Clone, Upstream: e.store.All(ns)[0].Name}}); err != nil {
		t.Fatal(err)
	}
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	ev := e.events()
	if len(ev) != 2 || !strings.HasPrefix(ev[0], "Warning OwnerlessDraft deploy.app-prod.packagevariant-1 in default/deploy/app-prod has no owner") {
		t.Fatalf("Events = %q", ev)
	}
	if revs := e.downstream("app-prod"); len(revs) != 2 {
		t.Fatalf("want the ownerless draft left alone and a new one: %+v", revs)
	}
}

// A published downstream proposed for deletion that the variant wants again
// goes back to Published (kptdev/kpt#3759).
func TestUnproposeDeletion(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	pub, _ := e.store.Approve(ns, e.downstream("app-prod")[0].Name)
	pub.Lifecycle, pub.ResourceVersion = store.DeletionProposed, ""
	if err := e.store.Update(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	if revs := e.downstream("app-prod"); len(revs) != 1 || revs[0].Lifecycle != store.Published {
		t.Fatalf("want the revision un-proposed: %+v", revs)
	}
}

// A status patch that loses to a newer write is rebased on the variant as
// it is and written (it was dropped); one that loses every
// time (StatusRebases rebases) is no error either: the reconcile asks to
// run again shortly, and that run, reading afresh, patches the status.
// Here the lost patch is the one that records a write before it is sent
// (intend), so nothing is sent; TestFourStatusConflictsLoseNoLastWrite
// loses the patch after the write.
func TestStatusPatchLostIsRequeued(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.conflicts.Next(1)
	e.mustReconcile("app-prod")
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue || len(e.get("app-prod").Status.DownstreamTargets) != 1 {
		t.Fatalf("a conflict once: the status was not rebased and written: %+v", e.get("app-prod").Status)
	}

	e = newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.conflicts.Next(1 + kit.StatusRebases)
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: clientKey("app-prod")})
	if err != nil {
		t.Fatalf("a lost status patch: %v, want no error", err)
	}
	if res.RequeueAfter != kit.StatusLostRetry {
		t.Fatalf("a lost status patch: requeue after %v, want %v", res.RequeueAfter, kit.StatusLostRetry)
	}
	if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, pvapi.ConditionReady); c != nil {
		t.Fatalf("the lost patch was written after all: %+v", c)
	}
	e.mustReconcile("app-prod")
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready after the retry: %+v", c)
	}
	if n := len(e.downstream("app-prod")); n != 1 {
		t.Fatalf("%d downstream revisions after the retry, want 1", n)
	}
}

// phantomStore lists a draft that does not exist, as the controller's
// informer cache did after Porch lost a draft it had just created
// (e2e-porch TestDeletionPolicies, three variants cloning into one
// repository at once): the listing shows it for hours; reading it, or
// looking it up directly, finds nothing.
type phantomStore struct {
	*fakestore.Store
	phantom store.Revision
}

func (p phantomStore) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	revs, err := p.Store.ListOwned(ctx, namespace, uid)
	if p.phantom.OwnedBy(uid) {
		revs = append(revs, p.phantom)
	}
	return revs, err
}

func (p phantomStore) ListRevisions(ctx context.Context, k store.PackageKey) ([]store.Revision, error) {
	revs, err := p.Store.ListRevisions(ctx, k)
	if p.phantom.Key() == k {
		revs = append(revs, p.phantom)
	}
	return revs, err
}

func (p phantomStore) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if name == p.phantom.Name {
		return store.Resources{}, fmt.Errorf("packagerevisionresources %q not found: %w", name, store.ErrNotFound)
	}
	return p.Store.GetResources(ctx, namespace, name)
}

func (p phantomStore) Read(ctx context.Context, namespace, name string) (store.Revision, error) {
	if name == p.phantom.Name {
		return store.Revision{}, fmt.Errorf("packagerevision %q not found: %w", name, store.ErrNotFound)
	}
	return p.Store.Read(ctx, namespace, name)
}

// A listed owned draft that does not exist is left out once it has read
// NotFound for settled.PhantomAfter, and the variant makes its downstream without
// it: it failed on every reconcile, for ever (the informer cache is not
// told), and the variant never got a draft. Until then the variant waits,
// creating nothing.
func TestPhantomDraftIsLeftOut(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.us-east1:5432"), team("web", "alice"))
	now := testNow
	e.r.Clock = clockFunc(func() time.Time { return now })
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	uid := string(e.get("app-prod").UID)
	phantom := store.Revision{Namespace: ns, Name: "deploy.app-prod.packagevariant-1", Repository: "deploy", Package: "app-prod",
		Workspace: "packagevariant-1", Lifecycle: store.Draft, Owners: []store.OwnerRef{{UID: uid, Kind: "PackageVariant", Name: "app-prod"}}}
	e.r.Store = phantomStore{Store: e.store, phantom: phantom}
	for _, after := range []time.Duration{0, 30 * time.Second, settled.PhantomAfter - time.Second} {
		now = testNow.Add(after)
		// Waiting: read again soon, nothing written meanwhile.
		res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app-prod"}})
		if err != nil || res.RequeueAfter != phantomRetry {
			t.Fatalf("%s after the first NotFound: %+v, %v; want a requeue after %s", after, res, err, phantomRetry)
		}
		if n := len(e.downstream("app-prod")); n != 0 {
			t.Fatalf("%s after the first NotFound, the variant created %d drafts", after, n)
		}
	}
	now = testNow.Add(settled.PhantomAfter)
	e.mustReconcile("app-prod") // taken for lost
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || revs[0].Name != "deploy.app-prod.packagevariant-2" {
		t.Fatalf("downstream: %+v, want packagevariant-2, beside the phantom -1", revs)
	}
	if c := e.condition("app-prod", "Ready"); c.Status != "True" {
		t.Fatalf("Ready = %+v", c)
	}
	e.mustReconcile("app-prod") // and it stays left out
}

// comebackStore is phantomStore until back is set: the draft then reads
// again (Porch's next refresh put it back in its cache).
type comebackStore struct {
	phantomStore
	back *bool
}

func (c comebackStore) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if *c.back {
		return c.phantomStore.Store.GetResources(ctx, namespace, name)
	}
	return c.phantomStore.GetResources(ctx, namespace, name)
}

func (c comebackStore) Read(ctx context.Context, namespace, name string) (store.Revision, error) {
	if *c.back {
		return c.phantomStore.Store.Read(ctx, namespace, name)
	}
	return c.phantomStore.Read(ctx, namespace, name)
}

func (c comebackStore) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	if *c.back {
		return c.phantomStore.Store.ListOwned(ctx, namespace, uid)
	}
	return c.phantomStore.ListOwned(ctx, namespace, uid)
}

// Porch v1.5.3 drops a draft it has just created from its cache when a
// refresh races the create (three variants cloning into one repository at
// once, e2e-porch TestDeletionPolicies) and shows it again at its next
// refresh: a draft that reads NotFound for less than settled.PhantomAfter and then
// reads again is the variant's one draft; no second draft is made.
func TestDraftPorchShowsAgainIsKept(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.us-east1:5432"), team("web", "alice"))
	now := testNow
	e.r.Clock = clockFunc(func() time.Time { return now })
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 {
		t.Fatalf("%d drafts after the first reconcile", len(revs))
	}
	back := false
	e.r.Store = comebackStore{phantomStore: phantomStore{Store: e.store, phantom: revs[0]}, back: &back}
	// The variant changes, so the reconcile reads its draft: NotFound.
	v := e.get("app-prod")
	v.Spec.Labels = map[string]string{"tier": "web"}
	if err := e.client.Update(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	now = testNow.Add(5 * time.Second)
	e.mustReconcile("app-prod")
	now = testNow.Add(20 * time.Second)
	back = true
	e.mustReconcile("app-prod")
	revs = e.downstream("app-prod")
	if len(revs) != 1 || revs[0].Name != "deploy.app-prod.packagevariant-1" {
		t.Fatalf("downstream: %+v, want packagevariant-1 alone", revs)
	}
	if c := e.condition("app-prod", "Ready"); c.Status != "True" {
		t.Fatalf("Ready = %+v", c)
	}
	// Much later, another NotFound starts its own wait: the first is over.
	back = false
	now = testNow.Add(10 * time.Minute)
	v = e.get("app-prod")
	v.Spec.Labels = map[string]string{"tier": "api"}
	if err := e.client.Update(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	if n := len(e.downstream("app-prod")); n != 1 {
		t.Fatalf("%d drafts: a new NotFound was taken for lost at once", n)
	}
}
