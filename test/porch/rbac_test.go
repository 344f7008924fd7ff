package porch

import (
	"path/filepath"
	"strings"
	"testing"
)

// Issue 44 #4 on the stack: config/namespaced/approve-by-policy, applied
// for a namespace, lets its ServiceAccount approve there and nowhere else
// (kubectl auth can-i as that account). The subject is a probe account of
// its own, so that the suite's controller, which approves everywhere, does
// not answer for it.
func TestNamespacedApprovalGrantOnStack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "approvalgrant")
	out, err := kubectl("", "kustomize", filepath.Join(repoRoot, "config/namespaced/approve-by-policy"))
	if err != nil {
		t.Fatal(err)
	}
	out = strings.ReplaceAll(out, "namespace: fleet", "namespace: "+e.ns)
	out = strings.Replace(out, "  name: pvkit-controller\n  namespace: pvkit-system", "  name: approval-probe\n  namespace: pvkit-system", 1)
	if !strings.Contains(out, "name: approval-probe") {
		t.Fatalf("the binding's subject was not replaced:\n%s", out)
	}
	if _, err := kubectl(out, "apply", "--server-side", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	can := func(ns string) string {
		t.Helper()
		got, _ := kubectl("", "auth", "can-i", "update", "packagerevisions.porch.kpt.dev", "--subresource=approval", "-n", ns,
			"--as=system:serviceaccount:pvkit-system:approval-probe")
		return strings.TrimSpace(got)
	}
	if got := can(e.ns); got != "yes" {
		t.Errorf("approval in the bound namespace %s: %q, want yes", e.ns, got)
	}
	if got := can("default"); got != "no" {
		t.Errorf("approval in namespace default: %q, want no (a cluster-wide grant)", got)
	}
}
