package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"
)

type object struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	raw []byte
}

// build runs `kubectl kustomize config/default` and splits the result.
func build(t *testing.T) map[string]object {
	t.Helper()
	return buildDir(t, filepath.Join(fntest.RepoRoot(), "config/default"))
}

// buildDir runs `kubectl kustomize DIR` and splits the result by
// "Kind/name".
func buildDir(t *testing.T, dir string) map[string]object {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("SKIP: kubectl is not on PATH; the install manifests are not built")
	}
	out, err := exec.Command("kubectl", "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	objs := map[string]object{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var o object
		if err := sigsyaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		o.raw = []byte(doc)
		objs[o.Kind+"/"+o.Metadata.Name] = o
	}
	return objs
}

func decode[T any](t *testing.T, objs map[string]object, key string) *T {
	t.Helper()
	o, ok := objs[key]
	if !ok {
		t.Fatalf("config/default has no %s", key)
	}
	var v T
	if err := sigsyaml.UnmarshalStrict(o.raw, &v); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return &v
}

// What `kubectl apply -k config/default` installs, and how the controller runs.
func TestInstallManifests(t *testing.T) {
	objs := build(t)
	var keys []string
	for k := range objs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"ClusterRole/pvkit-controller", "ClusterRoleBinding/pvkit-controller",
		"CustomResourceDefinition/packagevariants.config.porch.kpt.dev", "CustomResourceDefinition/packagevariantsets.config.porch.kpt.dev",
		"Deployment/pvkit-controller", "Namespace/pvkit-system", "Role/pvkit-controller", "RoleBinding/pvkit-controller",
		"Service/pvkit-controller-metrics", "ServiceAccount/pvkit-controller"}
	if !slices.Equal(keys, want) {
		t.Fatalf("config/default = %q, want %q", keys, want)
	}

	d := decode[appsv1.Deployment](t, objs, "Deployment/pvkit-controller")
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != "pvkit-controller" || len(spec.Containers) != 1 {
		t.Fatalf("deployment: service account %q, %d containers", spec.ServiceAccountName, len(spec.Containers))
	}
	c := spec.Containers[0]
	// The image is the one `make images` builds at VERSION's version.
	version, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "pvkit/controller:" + strings.TrimSpace(string(version)); c.Image != want {
		t.Errorf("image %q, want %s (VERSION)", c.Image, want)
	}
	// Restricted: non-root, read-only root, nothing to escalate, no capability.
	psc, sc := spec.SecurityContext, c.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("security context is not the restricted profile: pod %+v, container %+v", psc, sc)
	}
	args := map[string]string{}
	for _, a := range c.Args {
		k, v, _ := strings.Cut(a, "=")
		args[k] = v
	}
	if _, ok := args["--leader-elect"]; !ok || *d.Spec.Replicas < 2 {
		t.Errorf("want leader election with several replicas: args %q, replicas %d", c.Args, *d.Spec.Replicas)
	}
	// Probes and the metrics Service point at the ports the flags bind.
	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if args["--metrics-bind-address"] != ":8080" || ports["metrics"] != 8080 || args["--health-probe-bind-address"] != ":8081" || ports["probes"] != 8081 {
		t.Errorf("ports %v do not match the flags %v", ports, args)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port.StrVal != "probes" ||
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port.StrVal != "probes" {
		t.Errorf("probes: liveness %+v, readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	svc := decode[corev1.Service](t, objs, "Service/pvkit-controller-metrics")
	if svc.Spec.Ports[0].TargetPort.StrVal != "metrics" || svc.Spec.Selector["app.kubernetes.io/component"] != d.Spec.Template.Labels["app.kubernetes.io/component"] {
		t.Errorf("metrics service %+v does not reach the controller", svc.Spec)
	}

	// The role: no wildcard anywhere, and every kind the controller may read
	// (--readable-kinds) can be listed and watched with it.
	role := decode[rbacv1.ClusterRole](t, objs, "ClusterRole/pvkit-controller")
	allowed := map[schema.GroupResource][]string{}
	for _, r := range role.Rules {
		for _, s := range append(append(append([]string{}, r.APIGroups...), r.Resources...), r.Verbs...) {
			if strings.Contains(s, "*") {
				t.Errorf("role rule %+v has a wildcard", r)
			}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				allowed[schema.GroupResource{Group: g, Resource: res}] = append(allowed[schema.GroupResource{Group: g, Resource: res}], r.Verbs...)
			}
		}
	}
	kinds, err := kit.ParseReadableKinds(strings.Split(args["--readable-kinds"], ","))
	if err != nil {
		t.Fatalf("--readable-kinds: %v", err)
	}
	for _, gk := range kinds.List() {
		gr := schema.GroupResource{Group: gk.Group, Resource: strings.ToLower(gk.Kind) + "s"}
		if v := allowed[gr]; !slices.Contains(v, "list") || !slices.Contains(v, "watch") {
			t.Errorf("--readable-kinds names %s, but the role does not let the controller list and watch %s (verbs %q)", gk, gr, v)
		}
	}
	if v := allowed[schema.GroupResource{Resource: "secrets"}]; len(v) > 0 {
		t.Errorf("the role grants %q on Secrets", v)
	}
	b := decode[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/pvkit-controller")
	if b.RoleRef.Name != role.Name || len(b.Subjects) != 1 || b.Subjects[0].Name != spec.ServiceAccountName || b.Subjects[0].Namespace != d.Namespace {
		t.Errorf("binding %+v does not bind the role to the controller's ServiceAccount", b)
	}
	// Issue 18 #10: leader election's Leases only in the controller's own
	// namespace (a ClusterRole let it rewrite kube-system's).
	if v := allowed[schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}]; len(v) > 0 {
		t.Errorf("the ClusterRole grants %q on Leases in every namespace", v)
	}
	lr := decode[rbacv1.Role](t, objs, "Role/pvkit-controller")
	if _, set := args["--leader-election-namespace"]; set {
		t.Errorf("--leader-election-namespace is set: the Lease must follow the controller's namespace (a namespace overlay)")
	}
	if lr.Namespace != d.Namespace || len(lr.Rules) != 1 ||
		!slices.Equal(lr.Rules[0].Resources, []string{"leases"}) || !slices.Equal(lr.Rules[0].Verbs, []string{"create", "get", "update"}) {
		t.Errorf("leader election role %+v (namespace %q): want leases get/create/update in the controller's namespace", lr.Rules, lr.Namespace)
	}
	lb := decode[rbacv1.RoleBinding](t, objs, "RoleBinding/pvkit-controller")
	if lb.Namespace != d.Namespace || lb.RoleRef.Kind != "Role" || lb.RoleRef.Name != lr.Name || len(lb.Subjects) != 1 ||
		lb.Subjects[0].Name != spec.ServiceAccountName || lb.Subjects[0].Namespace != d.Namespace {
		t.Errorf("leader election binding %+v does not bind the Role to the controller's ServiceAccount", lb)
	}
}

// Issue 22 #3: everything namespace-bound follows a namespace overlay (the
// Lease too: no --leader-election-namespace left behind).
func TestNamespaceOverlay(t *testing.T) {
	dir := filepath.Join(fntest.RepoRoot(), ".cache", "test-overlay")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("namespace: platform\nresources:\n- ../../config/default\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	objs := buildDir(t, dir)
	for key, o := range objs {
		if strings.Contains(string(o.raw), "pvkit-system") {
			t.Errorf("%s still names pvkit-system:\n%s", key, o.raw)
		}
	}
	if b := decode[rbacv1.RoleBinding](t, objs, "RoleBinding/pvkit-controller"); b.Namespace != "platform" || b.Subjects[0].Namespace != "platform" {
		t.Errorf("RoleBinding %+v", b)
	}
}

// Issue 22 #3: make deploy needs the image named (there is no public
// pvkit/controller to pull), and make undeploy keeps the CRDs (Porch ships
// them too; deleting them deletes every variant).
func TestDeployTargets(t *testing.T) {
	root := fntest.RepoRoot()
	out, err := exec.Command("make", "-C", root, "--no-print-directory", "deploy").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "make deploy needs IMAGE=REGISTRY/pvkit/controller:TAG") {
		t.Fatalf("make deploy without IMAGE: %v\n%s", err, out)
	}
	out, err = exec.Command("make", "-C", root, "--no-print-directory", "-n", "undeploy").CombinedOutput()
	if err != nil || strings.Contains(string(out), "config/crd") || !strings.Contains(string(out), "config/manager") {
		t.Fatalf("make -n undeploy: %v\n%s", err, out)
	}
	out, err = exec.Command("make", "-C", root, "--no-print-directory", "-n", "uninstall").CombinedOutput()
	if err != nil || strings.Contains(string(out), "config/crd") || !strings.Contains(string(out), "bin/pvctl release -A") {
		t.Fatalf("make -n uninstall: %v\n%s", err, out)
	}
	out, err = exec.Command("make", "-C", root, "--no-print-directory", "-n", "undeploy-crds").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "kubectl delete -k config/crd") {
		t.Fatalf("make -n undeploy-crds: %v\n%s", err, out)
	}
}

// Issue 20 #8: make test runs no instrumented fuzzing (go test runs every
// fuzz target's seed corpus as a plain test); the short instrumented pass
// is CI's, after make test, and make fuzz is the long one.
func TestFuzzingOnlyInMakeFuzzAndCI(t *testing.T) {
	root := fntest.RepoRoot()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	recipe := func(target string) string {
		_, rest, ok := strings.Cut(string(mk), "\n"+target+":")
		if !ok {
			t.Fatalf("Makefile has no %s target", target)
		}
		var lines []string
		for _, l := range strings.Split(rest, "\n")[1:] {
			if !strings.HasPrefix(l, "\t") {
				break
			}
			lines = append(lines, l)
		}
		return strings.Join(lines, "\n")
	}
	if r := recipe("test"); strings.Contains(r, "fuzz") {
		t.Errorf("make test fuzzes:\n%s", r)
	}
	if r := recipe("fuzz"); !strings.Contains(r, "-fuzz") {
		t.Errorf("make fuzz does not fuzz:\n%s", r)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	test, short := strings.Index(string(ci), "\nmake test\n"), strings.Index(string(ci), "\nmake fuzz-short\n")
	if test < 0 || short < test {
		t.Errorf(".ci/run must run make test, then make fuzz-short")
	}
}
