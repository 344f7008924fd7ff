package porch

import (
	"fmt"
	"path/filepath"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
)

// Issue 21 #5, the controller side on a real Porch: with
// --approve-by-policy and config/rbac/approve-by-policy.yaml (the
// ServiceAccount's rights, nothing more), a variant asking for
// approval.nephio.org/policy: initial gets its first draft proposed and
// approved through Porch's approval subresource, once it is finished.
func TestApproveByPolicyOnPorch(t *testing.T) {
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

// approvingController restarts the controller with --approve-by-policy and
// config/rbac/approve-by-policy.yaml's rights, and back without them when
// the test ends.
func approvingController(t *testing.T) {
	t.Helper()
	if _, err := kubectl("", "apply", "-f", filepath.Join(repoRoot, "config/rbac/approve-by-policy.yaml")); err != nil {
		t.Fatal(err)
	}
	stopController()
	controllerExtraArgs = []string{"--approve-by-policy"}
	if err := startController(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopController()
		controllerExtraArgs = nil
		if err := startController(); err != nil {
			t.Error(err)
		}
	})
}
