package packagevariantset

import (
	"context"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// Rule policy-flows-down: a set's policies are written into each child's
// spec.policy, so a change of the set's drift policy reaches every child
// in one reconcile of the set, as a write to the child (its generation
// moves: the child's own watch wakes it), the child reading nothing of
// the set; a child's own annotation of a policy wins over the set's
// (its field is left out); a policy the children could not obey stalls
// the set, naming the annotation.
func TestSetPolicyFlowsDown(t *testing.T) {
	e := newEnv(t, canaryFleet()[:3]...)
	e.set(strings.Replace(strings.Split(churnSet, "  rollout:")[0], "  name: app\n", "  name: app\n  annotations: {pvkit.dev/drift-policy: adopt, pvkit.dev/observe-interval: 20m}\n", 1))
	e.reconcile()
	gens := map[string]int64{}
	for name, c := range e.children() {
		if p := c.Spec.Policy; p == nil || p.Drift != "adopt" || p.ObserveInterval != "20m" || p.DraftUpgrade != "" || p.RequireProvenance != nil {
			t.Fatalf("%s's spec.policy %+v: want the set's drift adopt and observe interval 20m", name, p)
		}
		gens[name] = c.Generation
	}
	// A person's own annotation on one child wins there.
	child := e.children()["app-r-001-app"]
	if child.Annotations == nil {
		child.Annotations = map[string]string{}
	}
	child.Annotations[pv.DriftPolicyAnnotation] = "report"
	if err := e.client.Update(context.Background(), &child); err != nil {
		t.Fatal(err)
	}
	gens["app-r-001-app"] = child.Generation
	e.editSet(func(s *pvsapi.PackageVariantSet) { s.Annotations[pv.DriftPolicyAnnotation] = "revert" })
	e.reconcile()
	for name, c := range e.children() {
		want := "revert"
		if name == "app-r-001-app" {
			want = ""
		}
		if p := c.Spec.Policy; p == nil || p.Drift != want || p.ObserveInterval != "20m" {
			t.Fatalf("after one reconcile of the set, %s's spec.policy %+v: want drift %q", name, p, want)
		}
		if name != "app-r-001-app" && c.Generation == gens[name] {
			t.Fatalf("%s: the set's policy change was no write to it (generation %d)", name, c.Generation)
		}
	}
	// A policy no child could obey: refused, naming the annotation.
	e.editSet(func(s *pvsapi.PackageVariantSet) { s.Annotations[pv.ObserveIntervalAnnotation] = "5x" })
	_ = e.try()
	c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, pvapi.ConditionStalled)
	if c == nil || c.Reason != pvsapi.ReasonValidationError ||
		c.Message != "`metadata.annotations[pvkit.dev/observe-interval]` is \"5x\", not a positive duration such as 10m; the set writes it into each child's spec.policy" {
		t.Fatalf("a bad observe interval on the set: %+v", c)
	}
}
