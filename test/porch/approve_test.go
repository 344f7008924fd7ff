package porch

import (
	"fmt"
	"slices"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
)

// Issue 21 #5, the controller side on a real Porch: with
// --approve-by-policy and config/rbac/approve-by-policy.yaml (the
// ServiceAccount's rights, nothing more), a variant asking for
// approval.nephio.org/policy: initial gets its first draft proposed and
// approved through Porch's approval subresource, once it is finished.
func TestApproveByPolicyOnPorch(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "approve")
	approvingController(t)
	e.upstream(blueprint(t))
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(fmt.Sprintf(gatedVariant, ""))
	e.eventually(converge, "the draft approved by policy", func() (bool, string) {
		if ok, msg := e.ready("app-gated"); !ok {
			return false, msg
		}
		var seen string
		for _, r := range e.revisions("deploy", "app") {
			seen += fmt.Sprintf("%s %s %d; ", r.Name, r.Spec.Lifecycle, r.Spec.Revision)
			if r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished && r.Spec.Revision == 1 && len(r.OwnerReferences) == 1 {
				return true, ""
			}
		}
		return false, seen
	})
	for _, r := range e.revisions("deploy", "app") {
		if r.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished && r.Spec.WorkspaceName != "main" {
			t.Errorf("a revision left unpublished: %s %s", r.Name, r.Spec.Lifecycle)
		}
	}
}

// approvingController makes sure the controller approves by policy: the
// suite's does (controllerExtraArgs), so that the tests that need it run
// beside the others, without a restart.
func approvingController(t *testing.T) {
	t.Helper()
	if !slices.Contains(controllerExtraArgs, "--approve-by-policy") {
		t.Fatal("the suite's controller does not approve by policy (controllerExtraArgs)")
	}
}
