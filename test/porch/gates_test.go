package porch

import (
	"context"
	"fmt"
	"slices"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const gatedVariant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: app-gated}
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: app}
  annotations: {approval.nephio.org/policy: initial}
  packageContext:
    data: {env: prod}
  injectors:
  - kind: ConfigMap
    name: us-east1-endpoints
%s`

// Issue 21 #3 on a real Porch: a draft is not approvable between its clone
// and its mutation. Here the mutation's write is refused for good (the
// variant's pipeline names a function Porch cannot run, so Porch's render
// fails): the draft Porch holds carries pvkit's mutation gate, False, so
// porchctl's readiness check (PackageRevisionIsReady, which Nephio's
// approval controller also uses) says not ready, and it has no approval
// annotation. Fixed, the same draft gets the gate True and the annotation.
func TestNoDraftApprovableBeforeItsMutation(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "gates")
	e.upstream(blueprint(t))
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(fmt.Sprintf(gatedVariant, "  pipeline:\n    mutators:\n    - image: example.com/no-such-function:v1\n"))
	var draft porchapi.PackageRevision
	e.eventually(converge, "a draft whose mutation Porch refused", func() (bool, string) {
		d := e.owned("deploy", "app")
		if len(d) != 1 {
			return false, fmt.Sprintf("%d owned drafts", len(d))
		}
		draft = d[0]
		var v pvapi.PackageVariant
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-gated"}, &v); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
		if c == nil || c.Reason != pvapi.ReasonRenderFailed {
			return false, fmt.Sprintf("Ready = %+v", c)
		}
		return true, ""
	})
	gate := func(pr porchapi.PackageRevision) string {
		if !slices.ContainsFunc(pr.Spec.ReadinessGates, func(g porchapi.ReadinessGate) bool { return g.ConditionType == variant.MutationGate }) {
			return "no gate"
		}
		for _, c := range pr.Status.Conditions {
			if c.Type == variant.MutationGate {
				return string(c.Status)
			}
		}
		return "no condition"
	}
	if g := gate(draft); g != "False" || porchapi.PackageRevisionIsReady(draft.Spec.ReadinessGates, draft.Status.Conditions) {
		t.Errorf("the unfinished draft %s: mutation gate %s, ready %v (gates %v, conditions %v)", draft.Name, g,
			porchapi.PackageRevisionIsReady(draft.Spec.ReadinessGates, draft.Status.Conditions), draft.Spec.ReadinessGates, draft.Status.Conditions)
	}
	if _, ok := draft.Annotations["approval.nephio.org/policy"]; ok {
		t.Errorf("the unfinished draft asks for approval: %v", draft.Annotations)
	}
	e.apply(fmt.Sprintf(gatedVariant, ""))
	e.eventually(converge, "the same draft finished", func() (bool, string) {
		d := e.owned("deploy", "app")
		if len(d) != 1 || d[0].Name != draft.Name {
			return false, fmt.Sprintf("owned drafts %v", d)
		}
		if ok, msg := e.ready("app-gated"); !ok {
			return false, msg
		}
		if g := gate(d[0]); g != "True" || !porchapi.PackageRevisionIsReady(d[0].Spec.ReadinessGates, d[0].Status.Conditions) {
			return false, "mutation gate " + g
		}
		if d[0].Annotations["approval.nephio.org/policy"] != "initial" {
			return false, fmt.Sprintf("annotations %v", d[0].Annotations)
		}
		return true, ""
	})
}
