package manager

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/api"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func porchControllers(replicas int32, env []corev1.EnvVar, args ...string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "porch-controllers", Namespace: "porch-system"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "porch-controllers", Image: "docker.io/nephio/porch-controllers:v1.5.3", Env: env, Args: args}}}}}}
}

var v153Env = []corev1.EnvVar{{Name: "ENABLE_PACKAGEVARIANTS", Value: "true"}, {Name: "ENABLE_PACKAGEVARIANTSETS", Value: "true"}}

// Issue 22 #3: the command that stops Porch's own PackageVariant and
// PackageVariantSet controllers, for each way Porch's controllers binary
// enables them; other reconcilers keep running; again is a no-op.
func TestStopPorchControllers(t *testing.T) {
	key := types.NamespacedName{Namespace: "porch-system", Name: "porch-controllers"}
	for _, tc := range []struct {
		name     string
		d        *appsv1.Deployment
		replicas int32
		env      []string
		args     []string
		says     []string
	}{
		{name: "Porch v1.5.3's manifest: both ENABLE_ variables", d: porchControllers(1, v153Env),
			replicas: 0, says: []string{"remove the variable ENABLE_PACKAGEVARIANTS from container porch-controllers",
				"remove the variable ENABLE_PACKAGEVARIANTSETS", "scale it to 0 replicas (no other reconciler is enabled)"}},
		{name: "--reconcilers with another reconciler", d: porchControllers(2, nil, "--reconcilers=packagevariants,rootsyncsets,packagevariantsets", "-v=2"),
			replicas: 2, args: []string{"--reconcilers=rootsyncsets", "-v=2"}, says: []string{"set container porch-controllers's args to [--reconcilers=rootsyncsets -v=2]"}},
		{name: "-reconcilers VALUE, and an ENABLE_ of another", d: porchControllers(1, []corev1.EnvVar{{Name: "ENABLE_WORKLOADIDENTITYBINDINGS"}, {Name: "ENABLE_PACKAGEVARIANTS"}}, "-reconcilers", "packagevariantsets"),
			replicas: 1, env: []string{"ENABLE_WORKLOADIDENTITYBINDINGS"}, args: []string{}, says: []string{"set container porch-controllers's args to []"}},
		{name: "--reconcilers=* cannot be narrowed", d: porchControllers(1, nil, "--reconcilers=*"),
			replicas: 0, args: []string{"--reconcilers=*"}, says: []string{"scale it to 0 replicas (--reconcilers=* enables every reconciler)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme, err := api.Scheme()
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.d).Build()
			ctx := context.Background()
			var d appsv1.Deployment
			if err := c.Get(ctx, key, &d); err != nil {
				t.Fatal(err)
			}
			dryRV := d.ResourceVersion
			var out bytes.Buffer
			if err := StopPorchControllers(ctx, c, key, true, &out); err != nil {
				t.Fatal(err)
			}
			if err := c.Get(ctx, key, &d); err != nil || d.ResourceVersion != dryRV {
				t.Fatalf("--dry-run wrote the Deployment (%v)", err)
			}
			if !strings.HasPrefix(out.String(), "Deployment porch-system/porch-controllers: would stop Porch's PackageVariant and PackageVariantSet controllers:\n") {
				t.Fatalf("dry run says:\n%s", out.String())
			}
			out.Reset()
			if err := StopPorchControllers(ctx, c, key, false, &out); err != nil {
				t.Fatal(err)
			}
			for _, s := range append(tc.says, "stopped Porch's PackageVariant", "rollout status deploy/porch-controllers") {
				if !strings.Contains(out.String(), s) {
					t.Errorf("missing %q in:\n%s", s, out.String())
				}
			}
			if err := c.Get(ctx, key, &d); err != nil {
				t.Fatal(err)
			}
			if d.ResourceVersion == dryRV {
				t.Fatalf("nothing written")
			}
			ct := d.Spec.Template.Spec.Containers[0]
			var env []string
			for _, e := range ct.Env {
				env = append(env, e.Name)
			}
			if *d.Spec.Replicas != tc.replicas || strings.Join(env, ",") != strings.Join(tc.env, ",") || strings.Join(ct.Args, " ") != strings.Join(tc.args, " ") {
				t.Errorf("after: replicas %d, env %v, args %q; want %d, %v, %q", *d.Spec.Replicas, env, ct.Args, tc.replicas, tc.env, tc.args)
			}
			out.Reset()
			rv := d.ResourceVersion
			if err := StopPorchControllers(ctx, c, key, false, &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "are already stopped; nothing to do") {
				t.Errorf("again: %s", out.String())
			}
			if err := c.Get(ctx, key, &d); err != nil || d.ResourceVersion != rv {
				t.Errorf("again wrote the Deployment (%v)", err)
			}
		})
	}
}

func TestStopPorchControllersErrors(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	err = StopPorchControllers(context.Background(), c, types.NamespacedName{Namespace: "porch", Name: "ctl"}, false, &bytes.Buffer{})
	if err == nil || err.Error() != "no Deployment porch/ctl: name Porch's controllers Deployment with --namespace and --deployment" {
		t.Fatalf("missing Deployment: %v", err)
	}
	var out, errs bytes.Buffer
	if code := StopPorchControllersMain(context.Background(), []string{"extra"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), `pvctl stop-porch-controllers: takes no arguments, not ["extra"]`) {
		t.Fatalf("an argument: exit %d, %q", code, errs.String())
	}
	errs.Reset()
	if code := StopPorchControllersMain(context.Background(), []string{"--replicas=0"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "unknown flag: --replicas") {
		t.Fatalf("a bad flag: exit %d, %q", code, errs.String())
	}
	errs.Reset()
	if code := StopPorchControllersMain(context.Background(), []string{"--kubeconfig", "/nonexistent/kubeconfig"}, &out, &errs); code != 1 || !strings.Contains(errs.String(), "pvctl stop-porch-controllers: loading the kubeconfig") {
		t.Fatalf("no kubeconfig: exit %d, %q", code, errs.String())
	}
	out.Reset()
	if code := StopPorchControllersMain(context.Background(), []string{"--help"}, &out, &errs); code != 0 || !strings.Contains(out.String(), "--deployment string") {
		t.Fatalf("--help: exit %d, %q", code, out.String())
	}
}
