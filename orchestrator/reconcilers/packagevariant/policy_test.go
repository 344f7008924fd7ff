package packagevariant

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// Rule policy-flows-down, the child's side: a variant obeys its
// spec.policy, else its own annotation of the policy (deprecated), and
// reads nothing of its set for it: a set annotated otherwise changes
// nothing (the set writes its policies into the child's spec).
func TestPolicyIsTheChildsOwn(t *testing.T) {
	e := newEnv(t)
	v := &pvapi.PackageVariant{}
	v.Name, v.Namespace = "app-prod", ns
	v.Annotations = map[string]string{observe.DriftPolicyAnnotation: "adopt", observe.ObserveIntervalAnnotation: "30m", DraftUpgradeAnnotation: "stall"}
	v.OwnerReferences = []metav1.OwnerReference{{APIVersion: "config.porch.kpt.dev/v1alpha2", Kind: "PackageVariantSet", Name: "app", UID: "set-uid", Controller: ptr(true)}}
	ctx := context.Background()
	if p, why := observe.DriftPolicy(v); p != observe.DriftAdopt || why != "" {
		t.Fatalf("the variant's own annotation: drift %q (%s)", p, why)
	}
	v.Spec.Policy = &pv.Policy{Drift: observe.DriftRevert, ObserveInterval: "2h", DraftUpgrade: DraftUpgradeInPlace}
	if p, _ := observe.DriftPolicy(v); p != observe.DriftRevert {
		t.Fatalf("spec.policy.drift revert over the annotation: %q", p)
	}
	if d := (observe.Cadence{Interval: e.r.ObserveInterval}).IntervalOf(ctx, v); d != 2*time.Hour {
		t.Fatalf("spec.policy.observeInterval 2h: %v", d)
	}
	if why := e.r.draftUpgradePolicy(ctx, v); why != "" {
		t.Fatalf("spec.policy.draftUpgrade in-place: %q", why)
	}
	v.Spec.Policy = &pv.Policy{DraftUpgrade: DraftUpgradeStall}
	if why := e.r.draftUpgradePolicy(ctx, v); why != "PackageVariant app-prod (`spec.policy.draftUpgrade`) asks for Porch's behaviour (pvkit.dev/draft-upgrade: \"stall\"): approve or delete the draft" {
		t.Fatalf("the stall names the field: %q", why)
	}
}

// A policy is refused where it is written: the CRD's schema (which the
// API server and pvctl's embedded cluster hold every write to) refuses a
// bad spec.policy value, naming the field.
func TestBadPolicyRefusedNamingItsField(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ policy, field string }{
		{"{observeInterval: 5x}", "spec.policy.observeInterval"},
		{"{drift: fix}", "spec.policy.drift"},
		{"{draftUpgrade: merge}", "spec.policy.draftUpgrade"},
	} {
		v := &pvapi.PackageVariant{}
		if err := sigsyaml.Unmarshal([]byte(appVariant+"  policy: "+tc.policy+"\n"), v); err != nil {
			t.Fatal(err)
		}
		v.Namespace = ns
		err := e.client.Create(context.Background(), v)
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("policy %s: %v, want a refusal naming %s", tc.policy, err, tc.field)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A policy given by its deprecated annotation is said once a generation,
// as a Normal Event naming the field that replaces it; a steady resync
// says nothing, and the field set says nothing either.
func TestDeprecatedPolicyAnnotationSaid(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(strings.Replace(appVariant, "  name: app-prod\n", "  name: app-prod\n  annotations: {pvkit.dev/drift-policy: revert}\n", 1))
	e.mustReconcile("app-prod")
	want := "Normal DeprecatedAnnotation the annotation pvkit.dev/drift-policy is deprecated on a PackageVariant: set spec.policy.drift instead (the annotation is read while the field is absent)"
	if evs := strings.Join(e.events(), "\n"); !strings.Contains(evs, want) {
		t.Fatalf("events:\n%s\nwant %q", evs, want)
	}
	e.mustReconcile("app-prod")
	if evs := strings.Join(e.events(), "\n"); strings.Contains(evs, "DeprecatedAnnotation") {
		t.Fatalf("said again in a steady resync:\n%s", evs)
	}
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Policy = &pv.Policy{Drift: observe.DriftRevert} })
	e.mustReconcile("app-prod")
	if evs := strings.Join(e.events(), "\n"); strings.Contains(evs, "DeprecatedAnnotation") {
		t.Fatalf("said with the field set:\n%s", evs)
	}
}
