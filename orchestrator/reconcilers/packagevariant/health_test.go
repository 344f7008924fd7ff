package packagevariant

import (
	"context"
	"strings"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// healthVariantYAML is appVariant with a health check on a Team-shaped
// object named after the downstream repository, whose status.applied
// names the git tag of the revision the cluster runs (as Flux's
// lastAppliedRevision does).
const healthVariantYAML = appVariant + `  health:
    apiVersion: example.com/v1
    kind: Team
    nameExpr: downstream.repo + "-sync"
    condition: has(object.status) && object.status.applied == revision.ref
`

// rule health-gated-rollouts: a variant with spec.health reads the
// object for its Published target only, records True/False/Unknown with
// the reason and the object, keeps Since while the status stays, and
// writes nothing on a steady resync.
func TestHealthOfAPublishedTarget(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "ana"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(healthVariantYAML)
	e.mustReconcile("app-prod")
	if h := e.get("app-prod").Status.DownstreamTargets[0].Health; h != nil {
		t.Fatalf("a draft has a health: %+v", h)
	}
	pub, err := e.store.Approve(ns, e.downstream("app-prod")[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	health := func() pvapi.TargetHealth {
		t.Helper()
		e.mustReconcile("app-prod")
		ts := e.get("app-prod").Status.DownstreamTargets
		if len(ts) != 1 || ts[0].Name != pub.Name || ts[0].Health == nil {
			t.Fatalf("targets: %+v", ts)
		}
		return *ts[0].Health
	}
	// No object yet: Unknown, named.
	h := health()
	if h.Status != metav1.ConditionUnknown || h.Reason != pvapi.ReasonObjectNotFound || h.Object != "Team default/deploy-sync" ||
		h.Message != `no Team "deploy-sync" in namespace "default": the cluster has not reported on `+pub.Name {
		t.Fatalf("no object: %+v", h)
	}
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("a variant whose cluster has not reported is not Ready: %+v", c)
	}
	// The object reports an older revision: False.
	sync := team("deploy-sync", "x")
	sync.Object["status"] = map[string]any{"applied": "app-prod/v0"}
	if err := e.client.Create(context.Background(), sync); err != nil {
		t.Fatal(err)
	}
	e.r.Clock = kit.Fixed(testNow.Add(time.Minute))
	if h = health(); h.Status != metav1.ConditionFalse || h.Reason != pvapi.ReasonNotHealthy || !h.Since.Time.Equal(testNow.Add(time.Minute)) ||
		!strings.Contains(h.Message, "Team default/deploy-sync does not report "+pub.Name) {
		t.Fatalf("older revision: %+v", h)
	}
	// It reports this one: True, since now; a later resync keeps Since and
	// writes nothing.
	setStatus(t, e, sync, map[string]any{"applied": "app-prod/v1"})
	e.r.Clock = kit.Fixed(testNow.Add(2 * time.Minute))
	if h = health(); h.Status != metav1.ConditionTrue || h.Reason != pvapi.ReasonHealthy || !h.Since.Time.Equal(testNow.Add(2*time.Minute)) {
		t.Fatalf("applied: %+v", h)
	}
	// The check's failed expression holds: False HealthFailed, naming it,
	// whatever the condition says (a failure wins).
	e.edit("app-prod", func(v *pvapi.PackageVariant) {
		v.Spec.Health.Failed = `has(object.status.failed) && object.status.failed == revision.ref`
	})
	setStatus(t, e, sync, map[string]any{"applied": "app-prod/v0", "failed": "app-prod/v1"})
	e.r.Clock = kit.Fixed(testNow.Add(90 * time.Second))
	if h = health(); h.Status != metav1.ConditionFalse || h.Reason != pvapi.ReasonHealthFailed || !h.Since.Time.Equal(testNow.Add(90*time.Second)) ||
		h.Message != "Team default/deploy-sync reports "+pub.Name+" failed (has(object.status.failed) && object.status.failed == revision.ref)" {
		t.Fatalf("failed: %+v", h)
	}
	setStatus(t, e, sync, map[string]any{"applied": "app-prod/v1", "failed": "app-prod/v1"})
	if h = health(); h.Reason != pvapi.ReasonHealthFailed {
		t.Fatalf("failed and applied: %+v, want HealthFailed (a failure wins)", h)
	}
	// A failed expression that cannot be evaluated: Unknown, naming it.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Health.Failed = "object.status.nothing == 1" })
	if h = health(); h.Status != metav1.ConditionUnknown || h.Reason != pvapi.ReasonCheckFailed ||
		!strings.Contains(h.Message, `spec.health.failed "object.status.nothing == 1": no such key: nothing`) {
		t.Fatalf("a failing failed expression: %+v", h)
	}
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Health.Failed = "" })
	setStatus(t, e, sync, map[string]any{"applied": "app-prod/v1"})
	e.r.Clock = kit.Fixed(testNow.Add(2 * time.Minute))
	if h = health(); h.Status != metav1.ConditionTrue || !h.Since.Time.Equal(testNow.Add(2*time.Minute)) {
		t.Fatalf("applied again: %+v", h)
	}
	before := e.totalWrites()
	e.r.Clock = kit.Fixed(testNow.Add(3 * time.Minute))
	if h = health(); !h.Since.Time.Equal(testNow.Add(2 * time.Minute)) {
		t.Fatalf("a steady resync moved Since: %+v", h)
	}
	if n := e.totalWrites() - before; n != 0 {
		t.Errorf("a steady resync wrote %d times", n)
	}
	// A condition that cannot be evaluated: Unknown with CEL's words.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Health.Condition = "object.status.missing == revision.ref" })
	if h = health(); h.Status != metav1.ConditionUnknown || h.Reason != pvapi.ReasonCheckFailed ||
		!strings.Contains(h.Message, `spec.health.condition "object.status.missing == revision.ref": no such key: missing`) {
		t.Fatalf("a failing condition: %+v", h)
	}
	// A kind the operator does not let pvkit read: Unknown, never read.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Health.Kind, v.Spec.Health.APIVersion = "Secret", "v1" })
	if h = health(); h.Status != metav1.ConditionUnknown || h.Reason != pvapi.ReasonKindNotAllowed ||
		!strings.Contains(h.Message, "spec.health names kind Secret, a kind pvkit may not read") {
		t.Fatalf("a Secret: %+v", h)
	}
	// No health check: no health.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Health = nil })
	e.mustReconcile("app-prod")
	if h := e.get("app-prod").Status.DownstreamTargets[0].Health; h != nil {
		t.Fatalf("health without a check: %+v", h)
	}
}

// An invalid health check stalls the variant naming the field.
func TestInvalidHealthCheckStalls(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.stored(strings.Replace(healthVariantYAML, `nameExpr: downstream.repo + "-sync"`, `nameExpr: "downstream.repo + 1"`, 1))
	e.stalls("app-prod")
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Reason != pvapi.ReasonValidationError ||
		!strings.Contains(c.Message, "spec.health.nameExpr") || !strings.Contains(c.Message, "does not compile: 1:17: found no matching overload for '_+_' applied to '(string, int)'") {
		t.Fatalf("Stalled = %+v", c)
	}
}

func setStatus(t *testing.T, e *env, u *unstructured.Unstructured, status map[string]any) {
	t.Helper()
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(u.GroupVersionKind())
	if err := e.client.Get(context.Background(), clientKey(u.GetName()), cur); err != nil {
		t.Fatal(err)
	}
	cur.Object["status"] = status
	if err := e.client.Update(context.Background(), cur); err != nil {
		t.Fatal(err)
	}
}

// The controller watches the health check's kind and maps an object of it
// to the variants whose check names it.
func TestHealthObjectMapsToItsVariant(t *testing.T) {
	e := newEnv(t)
	e.variant(healthVariantYAML)
	if got := names(e.r.mapInjected(context.Background(), team("deploy-sync", "x"))); got != "app-prod" {
		t.Fatalf("the health object maps to %q", got)
	}
	if got := names(e.r.mapInjected(context.Background(), team("other-sync", "x"))); got != "" {
		t.Fatalf("another object maps to %q", got)
	}
}

// rule published-drift: a newer published revision of the downstream
// package that the variant did not make (a person's copy and approval) is
// reported on the variant's published target, as the condition
// PublishedDrift and a Warning Event once; nothing is written to the
// package; a steady resync writes nothing more; once the variant's own
// revision is the newest again, the drift is gone.
func TestNewerRevisionOutsideTheVariantIsReported(t *testing.T) {
	e := approvingEnv(t, false)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("the variant's revision: %s", got)
	}
	e.mustReconcile("app-prod")
	e.events()
	// A person's revision 2 of the package, made outside the variant.
	own := e.downstream("app-prod")[0]
	theirs := e.store.Publish(ns, "deploy", "app-prod", e.files(own))
	storeWrites := e.store.Writes()
	e.mustReconcile("app-prod")
	if n := e.store.Writes() - storeWrites; n != 0 {
		t.Errorf("reporting the drift wrote to the package %d times; want none", n)
	}
	v := e.get("app-prod")
	d := v.Status.DownstreamTargets[0].Drift
	want := theirs.Name + " (revision 2 of app-prod in deploy) is newer than the variant's deploy.app-prod.packagevariant-1 (revision 1) and was not made by it"
	if d == nil || d.Reason != pvapi.ReasonNewerRevision || d.Revision != theirs.Name || !strings.HasPrefix(d.Message, want) {
		t.Fatalf("drift: %+v", d)
	}
	if c := e.condition("app-prod", pvapi.ConditionPublishedDrift); c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonNewerRevision || !strings.HasPrefix(c.Message, want) {
		t.Fatalf("condition: %+v", c)
	}
	if ev := strings.Join(e.events(), "\n"); !strings.Contains(ev, "Warning PublishedDrift "+want) {
		t.Fatalf("events:\n%s", ev)
	}
	before := e.totalWrites()
	e.mustReconcile("app-prod")
	if n := e.totalWrites() - before; n != 0 {
		t.Errorf("a steady resync of a drifted variant wrote %d times", n)
	}
	if ev := e.events(); len(ev) != 0 {
		t.Errorf("a steady resync recorded events: %q", ev)
	}
	// The person's revision deleted: no drift, no condition.
	theirs.Lifecycle = store.DeletionProposed
	if err := e.store.Update(context.Background(), theirs); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Delete(context.Background(), ns, theirs.Name); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	v = e.get("app-prod")
	if v.Status.DownstreamTargets[0].Drift != nil || apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionPublishedDrift) != nil {
		t.Fatalf("drift after the revision went: %+v %+v", v.Status.DownstreamTargets[0].Drift, v.Status.Conditions)
	}
}
