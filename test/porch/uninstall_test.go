package porch

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 22 #3: the uninstall procedure (make undeploy, then pvctl release)
// leaves every revision in place and ownerless, and every variant without
// pvkit's finalizer, so that a variant deleted afterwards goes at once and
// deletes nothing. Porch's own PackageRevisions are counted before and
// after.
func TestUninstallReleasesEverything(t *testing.T) {
	e := newEnv(t, "uninstall")
	e.appProd()
	count := func() int {
		var l porchapi.PackageRevisionList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}
	before := count()
	stopController() // make undeploy
	t.Cleanup(func() {
		if err := startController(); err != nil {
			t.Fatal(err)
		}
	})
	release := func(args ...string) string {
		cmd := exec.Command(filepath.Join(repoRoot, "bin/pvctl"), append([]string{"release", "--kubeconfig", adminKC, "-n", e.ns}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pvctl release %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := release("--dry-run"); !strings.Contains(out, "would release PackageRevision "+e.ns+"/deploy.app.packagevariant-1") {
		t.Fatalf("dry run:\n%s", out)
	}
	if len(e.owned("deploy", "app")) != 1 {
		t.Fatal("the dry run released the draft")
	}
	out := release()
	if !strings.Contains(out, "removed the finalizer of PackageVariant "+e.ns+"/app-prod") {
		t.Fatalf("release:\n%s", out)
	}
	if n := len(e.owned("deploy", "app")); n != 0 {
		t.Fatalf("%d revisions still owned by a variant", n)
	}
	var v pvapi.PackageVariant
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-prod"}, &v); err != nil || len(v.Finalizers) != 0 {
		t.Fatalf("variant: %v, finalizers %v", err, v.Finalizers)
	}
	if err := e.c.Delete(context.Background(), &v); err != nil {
		t.Fatal(err)
	}
	e.eventually(converge, "the variant gone at once", func() (bool, string) {
		err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-prod"}, &v)
		return client.IgnoreNotFound(err) == nil && err != nil, "still there"
	})
	if after := count(); after != before {
		t.Fatalf("%d PackageRevisions before the uninstall, %d after: something was deleted", before, after)
	}
}

// appProd sets up the blueprint, a deploy repository, the cluster's
// objects and one PackageVariant, app-prod, and waits until it is Ready
// with one owned draft.
func (e *env) appProd() {
	e.upstream(blueprint(e.t))
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: app-prod}
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: app}
  injectors:
  - kind: ConfigMap
    name: us-east1-endpoints
`)
	e.eventually(converge, "a draft, Ready", func() (bool, string) {
		if len(e.owned("deploy", "app")) != 1 {
			return false, "no owned draft"
		}
		return e.ready("app-prod")
	})
}
