package porch

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 22 #1 and #3 on a real cluster: pvctl status and events read the
// variants, revisions and Events the controller wrote; pvctl
// stop-porch-controllers stops a Deployment shaped as Porch v1.5.3 ships
// porch-controllers (a real apiserver's validation of the update; there is
// no kubelet here, so no pod runs), and is a no-op the second time.
func TestOperateFromTheCluster(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "operate")
	e.appProd()
	pvctl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(filepath.Join(repoRoot, "bin/pvctl"), append(args, "--kubeconfig", adminKC)...).CombinedOutput()
		if err != nil {
			t.Fatalf("pvctl %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	has := func(out string, wants ...string) {
		t.Helper()
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("missing %q in:\n%s", w, out)
			}
		}
	}
	has(pvctl("status", "-n", e.ns), "PackageVariant  app-prod  True   NoErrors")
	has(pvctl("status", "-n", e.ns, "packagevariant/app-prod"), "PackageVariant app-prod (namespace "+e.ns,
		"Ready=True  NoErrors", "deploy.app.packagevariant-1: Draft; every readiness gate True", "Events:\n", "DraftCreated")
	e.eventually(converge, "the DraftCreated event listed", func() (bool, string) {
		out := pvctl("events", "-n", e.ns, "pv/app-prod", "-o", "json")
		var list struct {
			Kind  string         `json:"kind"`
			Items []corev1.Event `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			return false, err.Error()
		}
		if list.Kind != "List" {
			return false, out
		}
		for _, x := range list.Items {
			o := x.InvolvedObject
			if x.Reason == "DraftCreated" && o.Kind == "PackageVariant" && o.Name == "app-prod" && o.Namespace == e.ns {
				return true, ""
			}
		}
		return false, out
	})

	e.apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: porch-controllers, labels: {k8s-app: porch-controllers}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: porch-controllers}}
  template:
    metadata: {labels: {k8s-app: porch-controllers}}
    spec:
      containers:
      - name: porch-controllers
        image: docker.io/nephio/porch-controllers:v1.5.3
        env:
        - {name: ENABLE_PACKAGEVARIANTS, value: "true"}
        - {name: ENABLE_PACKAGEVARIANTSETS, value: "true"}
`)
	has(pvctl("stop-porch-controllers", "-n", e.ns, "--dry-run"), "would stop")
	has(pvctl("stop-porch-controllers", "-n", e.ns), "stopped Porch's PackageVariant and PackageVariantSet controllers",
		"remove the variable ENABLE_PACKAGEVARIANTS", "scale it to 0 replicas")
	var d appsv1.Deployment
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "porch-controllers"}, &d); err != nil {
		t.Fatal(err)
	}
	if *d.Spec.Replicas != 0 || len(d.Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Errorf("after stop: replicas %d, env %v", *d.Spec.Replicas, d.Spec.Template.Spec.Containers[0].Env)
	}
	has(pvctl("stop-porch-controllers", "-n", e.ns), "already stopped; nothing to do")
}
