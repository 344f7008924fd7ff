package packagevariant

import (
	"context"
	"slices"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// annotate sets (or, with "", removes) an annotation of a variant.
func (e *env) annotate(name, key, value string) {
	e.t.Helper()
	v := e.get(name)
	if v.Annotations == nil {
		v.Annotations = map[string]string{}
	}
	if value == "" {
		delete(v.Annotations, key)
	} else {
		v.Annotations[key] = value
	}
	if err := e.client.Update(context.Background(), v); err != nil {
		e.t.Fatal(err)
	}
}

// Issue 32 #4: a suspended variant writes nothing to Porch while its
// upstream moves, and says so (Suspended=True, one Normal Event, Ready as
// the last reconcile left it); resumed, it upgrades at once.
func TestSuspendAndResume(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	bp := blueprint(t)
	e.store.Publish(ns, "blueprints", "app", bp)
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	e.store.Approve(ns, e.downstream("app-prod")[0].Name)
	e.mustReconcile("app-prod")
	e.events()

	e.annotate("app-prod", kit.SuspendAnnotation, "true")
	bp2 := map[string]string{}
	for k, v := range bp {
		bp2[k] = v
	}
	bp2["deployment.yaml"] = strings.Replace(bp["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.store.Publish(ns, "blueprints", "app", bp2)
	storeWrites := e.store.Writes()
	for i := 0; i < 3; i++ {
		e.mustReconcile("app-prod")
	}
	if n := len(e.downstream("app-prod")); n != 1 || e.store.Writes() != storeWrites {
		t.Fatalf("suspended: %d revisions, %d writes to Porch; want the one published, none", n, e.store.Writes()-storeWrites)
	}
	c := e.condition("app-prod", kit.ConditionSuspended)
	if c.Status != metav1.ConditionTrue || c.Reason != kit.ReasonSuspended ||
		c.Message != `PackageVariant app-prod is suspended (pvkit.dev/suspend: "true"): nothing is written to Porch or to a child until it is resumed` {
		t.Errorf("Suspended = %+v", c)
	}
	if r := e.condition("app-prod", pvapi.ConditionReady); r.Status != metav1.ConditionTrue {
		t.Errorf("Ready changed while suspended: %+v", r)
	}
	if ev := e.events(); !slices.Equal(ev, []string{`Normal Suspended PackageVariant app-prod is suspended (pvkit.dev/suspend: "true"): nothing is written to Porch or to a child until it is resumed`}) {
		t.Errorf("events while suspended: %q", ev)
	}

	e.annotate("app-prod", kit.SuspendAnnotation, "false")
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 2 || revs[1].Lock == nil || revs[1].Lock.Ref != "app/v2" {
		t.Fatalf("resumed: want the upgrade draft to app/v2 at once: %+v", revs)
	}
	if apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, kit.ConditionSuspended) != nil {
		t.Errorf("resumed, the Suspended condition stays: %+v", e.get("app-prod").Status.Conditions)
	}
	if ev := e.events(); len(ev) < 2 || ev[0] != "Normal Resumed resumed: reconciling" || !strings.HasPrefix(ev[1], "Normal DraftUpgraded") {
		t.Errorf("events on resuming: %q", ev)
	}
}

// A typo suspends (the safe reading) and says what is wrong; a set's
// suspension holds its children; deletion is never suspended.
func TestSuspendReadings(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(strings.Replace(appVariant, "  name: app-prod\n", "  name: app-prod\n  annotations: {pvkit.dev/suspend: \"yes\"}\n", 1))
	e.mustReconcile("app-prod")
	if n := len(e.downstream("app-prod")); n != 0 {
		t.Fatalf("suspended by a typo, %d revisions were made", n)
	}
	if c := e.condition("app-prod", kit.ConditionSuspended); c.Message != `PackageVariant app-prod is suspended: pvkit.dev/suspend is "yes", neither "true" nor "false" (suspended until it is one of them): nothing is written to Porch or to a child until it is resumed` {
		t.Errorf("Suspended = %q", c.Message)
	}

	set := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns,
		Annotations: map[string]string{kit.SuspendAnnotation: "true"}},
		Spec: v1alpha2.PackageVariantSetSpec{Upstream: &pv.Upstream{Repo: "blueprints", Package: "app"},
			Targets: []v1alpha2.Target{{Repositories: []v1alpha2.RepositoryTarget{{Name: "deploy"}}}}}}
	if err := e.client.Create(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	setUID := set.UID
	child := strings.Replace(appVariant, "  name: app-prod\n", "  name: app-child\n  ownerReferences:\n  - {apiVersion: config.porch.kpt.dev/v1alpha2, kind: PackageVariantSet, name: apps, uid: "+string(setUID)+", controller: true}\n", 1)
	e.variant(strings.Replace(child, "package: app-prod}", "package: app-child}", 1))
	e.mustReconcile("app-child")
	if n := len(e.downstream("app-child")); n != 0 {
		t.Fatalf("the child of a suspended set made %d revisions", n)
	}
	if c := e.condition("app-child", kit.ConditionSuspended); !strings.HasPrefix(c.Message, `its PackageVariantSet apps is suspended (pvkit.dev/suspend: "true")`) {
		t.Errorf("the child's Suspended = %q", c.Message)
	}
	// Another set of the same name (another UID: the embedded cluster's
	// UIDs are the same for the same name, an API server's are not, so it
	// is stored with its own) is not this child's.
	if err := e.client.Delete(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	set.ResourceVersion, set.UID = "", "uid-other"
	if err := e.cluster.Seed(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-child")
	if n := len(e.downstream("app-child")); n != 1 {
		t.Fatalf("a set of the same name but another UID held the child: %d revisions", n)
	}
	// The mapping from a set to its children follows the controller owner.
	got := e.r.mapSetChildren(context.Background(), &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns, UID: setUID}})
	if len(got) != 1 || got[0].Name != "app-child" {
		t.Errorf("mapSetChildren = %v, want app-child", got)
	}
}

// Deleting a suspended variant is not suspended: its deletionPolicy
// applies (delete: the draft goes), and the variant is gone.
func TestDeletingASuspendedVariant(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	e.annotate("app-prod", kit.SuspendAnnotation, "true")
	e.mustReconcile("app-prod")
	if err := e.client.Delete(context.Background(), e.get("app-prod")); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	if revs := e.downstream("app-prod"); len(revs) != 0 {
		t.Fatalf("the suspended variant's draft was kept on deletion: %+v", revs)
	}
	if err := e.client.Get(context.Background(), clientKey("app-prod"), &pvapi.PackageVariant{}); err == nil {
		t.Fatal("the suspended variant is still there after its deletion")
	}
}

// Issue 32 #4: a reconcile request is recorded once handled
// (status.lastHandledReconcileAt), as pvctl reconcile waits for it.
func TestReconcileRequestHandled(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	if h := e.get("app-prod").Status.LastHandledReconcileAt; h != "" {
		t.Fatalf("handled %q before any request", h)
	}
	e.annotate("app-prod", kit.ReconcileRequestAnnotation, "2026-11-26T12:00:00Z")
	e.mustReconcile("app-prod")
	if h := e.get("app-prod").Status.LastHandledReconcileAt; h != "2026-11-26T12:00:00Z" {
		t.Fatalf("lastHandledReconcileAt = %q", h)
	}
	// Suspended, a request is not handled (pvctl reconcile refuses it first).
	e.annotate("app-prod", kit.SuspendAnnotation, "true")
	e.annotate("app-prod", kit.ReconcileRequestAnnotation, "2026-11-26T13:00:00Z")
	e.mustReconcile("app-prod")
	if h := e.get("app-prod").Status.LastHandledReconcileAt; h != "2026-11-26T12:00:00Z" {
		t.Fatalf("a suspended variant handled the request: %q", h)
	}
}
