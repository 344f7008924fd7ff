package install

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/manager"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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
	want := []string{"ClusterRole/pvkit-controller", "ClusterRole/pvkit-controller-metrics-auth", "ClusterRole/pvkit-metrics-reader",
		"ClusterRoleBinding/pvkit-controller", "ClusterRoleBinding/pvkit-controller-metrics-auth",
		"CustomResourceDefinition/packagevariants.config.porch.kpt.dev", "CustomResourceDefinition/packagevariantsets.config.porch.kpt.dev",
		"Deployment/pvkit-controller", "Namespace/pvkit-system", "PodDisruptionBudget/pvkit-controller", "Role/pvkit-controller", "RoleBinding/pvkit-controller",
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
	if args["--metrics-bind-address"] != ":8443" || ports["metrics"] != 8443 || args["--health-probe-bind-address"] != ":8081" || ports["probes"] != 8081 {
		t.Errorf("ports %v do not match the flags %v", ports, args)
	}
	// Issue 32 #2: metrics over HTTPS, authenticated and authorized (the
	// flag's default; not turned off), the controller allowed to ask the
	// API server, and a role for scrapers.
	if v, set := args["--metrics-secure"]; set && v != "true" {
		t.Errorf("--metrics-secure=%s: the install serves metrics to anyone", v)
	}
	auth := decode[rbacv1.ClusterRole](t, objs, "ClusterRole/pvkit-controller-metrics-auth")
	if len(auth.Rules) != 2 || !slices.Equal(auth.Rules[0].Resources, []string{"tokenreviews"}) || !slices.Equal(auth.Rules[1].Resources, []string{"subjectaccessreviews"}) ||
		!slices.Equal(auth.Rules[0].Verbs, []string{"create"}) || !slices.Equal(auth.Rules[1].Verbs, []string{"create"}) {
		t.Errorf("metrics auth role %+v: want create on tokenreviews and subjectaccessreviews only", auth.Rules)
	}
	if ab := decode[rbacv1.ClusterRoleBinding](t, objs, "ClusterRoleBinding/pvkit-controller-metrics-auth"); ab.RoleRef.Name != auth.Name || ab.Subjects[0].Name != spec.ServiceAccountName {
		t.Errorf("metrics auth binding %+v", ab)
	}
	reader := decode[rbacv1.ClusterRole](t, objs, "ClusterRole/pvkit-metrics-reader")
	if len(reader.Rules) != 1 || !slices.Equal(reader.Rules[0].NonResourceURLs, []string{"/metrics"}) || !slices.Equal(reader.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("metrics reader role %+v", reader.Rules)
	}
	// Two replicas on two nodes, a drain taking one at a time.
	spread := map[string]corev1.UnsatisfiableConstraintAction{}
	for _, c := range spec.TopologySpreadConstraints {
		if c.MaxSkew != 1 || c.LabelSelector == nil || c.LabelSelector.MatchLabels["app.kubernetes.io/component"] != d.Spec.Template.Labels["app.kubernetes.io/component"] {
			t.Errorf("topology spread %+v does not spread the controller's pods", c)
		}
		spread[c.TopologyKey] = c.WhenUnsatisfiable
	}
	if spread["kubernetes.io/hostname"] != corev1.DoNotSchedule || spread["topology.kubernetes.io/zone"] != corev1.ScheduleAnyway {
		t.Errorf("topology spread %v: want hostname DoNotSchedule, zone ScheduleAnyway", spread)
	}
	pdb := decode[policyv1.PodDisruptionBudget](t, objs, "PodDisruptionBudget/pvkit-controller")
	if pdb.Namespace != d.Namespace || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || int(*d.Spec.Replicas) < 2 ||
		pdb.Spec.Selector.MatchLabels["app.kubernetes.io/component"] != d.Spec.Template.Labels["app.kubernetes.io/component"] {
		t.Errorf("PDB %+v: want minAvailable 1 of the controller's %d replicas", pdb.Spec, *d.Spec.Replicas)
	}
	// No example kind anywhere in the default install.
	for key, o := range objs {
		if strings.Contains(string(o.raw), ".example.com") && !strings.HasPrefix(key, "CustomResourceDefinition/") {
			t.Errorf("%s names an example kind:\n%s", key, o.raw)
		}
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.LivenessProbe.HTTPGet.Port.StrVal != "probes" ||
		c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.ReadinessProbe.HTTPGet.Port.StrVal != "probes" {
		t.Errorf("probes: liveness %+v, readiness %+v", c.LivenessProbe, c.ReadinessProbe)
	}
	svc := decode[corev1.Service](t, objs, "Service/pvkit-controller-metrics")
	if svc.Spec.Ports[0].TargetPort.StrVal != "metrics" || svc.Spec.Ports[0].Name != "https" || svc.Spec.Selector["app.kubernetes.io/component"] != d.Spec.Template.Labels["app.kubernetes.io/component"] {
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

// Issue 32 #2: config/namespaced reconciles and reads one namespace: no
// ClusterRoleBinding of the controller's role, a RoleBinding of it in that
// namespace, --watch-namespace naming it (a value the controller takes).
func TestNamespacedOverlay(t *testing.T) {
	objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/namespaced"))
	if _, ok := objs["ClusterRoleBinding/pvkit-controller"]; ok {
		t.Errorf("config/namespaced still binds the controller's ClusterRole cluster-wide")
	}
	d := decode[appsv1.Deployment](t, objs, "Deployment/pvkit-controller")
	var watch []string
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--watch-namespace="); ok {
			watch = append(watch, v)
		}
	}
	if !slices.Equal(watch, []string{"fleet"}) {
		t.Fatalf("--watch-namespace %q, want fleet once", watch)
	}
	if _, err := manager.ParseNamespaces(watch[0]); err != nil {
		t.Fatal(err)
	}
	// The fleet binding and leader election's share the name
	// pvkit-controller: read every RoleBinding, not objs' last.
	out, err := exec.Command("kubectl", "kustomize", filepath.Join(fntest.RepoRoot(), "config/namespaced")).Output()
	if err != nil {
		t.Fatal(err)
	}
	var bound []string
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var b rbacv1.RoleBinding
		if err := sigsyaml.Unmarshal([]byte(doc), &b); err != nil {
			t.Fatal(err)
		}
		if b.Kind != "RoleBinding" || b.RoleRef.Kind != "ClusterRole" || b.RoleRef.Name != "pvkit-controller" {
			continue
		}
		bound = append(bound, b.Namespace)
		if len(b.Subjects) != 1 || b.Subjects[0].Name != "pvkit-controller" || b.Subjects[0].Namespace != d.Namespace {
			t.Errorf("RoleBinding in %s binds %+v", b.Namespace, b.Subjects)
		}
	}
	if !slices.Equal(bound, watch) {
		t.Errorf("the controller's ClusterRole is bound in %q, want in the watched %q only", bound, watch)
	}
}

// Issue 44 #4: config/namespaced/approve-by-policy grants approval in the
// watched namespace only: a RoleBinding in fleet (the namespaced
// overlay's --watch-namespace) of the same ClusterRole as
// config/rbac/approve-by-policy.yaml, and no ClusterRoleBinding.
func TestNamespacedApprovalBinding(t *testing.T) {
	objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/namespaced/approve-by-policy"))
	for k := range objs {
		if strings.HasPrefix(k, "ClusterRoleBinding/") {
			t.Errorf("config/namespaced/approve-by-policy binds cluster-wide: %s", k)
		}
	}
	b := decode[rbacv1.RoleBinding](t, objs, "RoleBinding/pvkit-controller-approve-by-policy")
	if b.Namespace != "fleet" || b.RoleRef.Name != "pvkit-controller-approve-by-policy" || len(b.Subjects) != 1 ||
		b.Subjects[0].Name != "pvkit-controller" || b.Subjects[0].Namespace != "pvkit-system" {
		t.Errorf("the approval RoleBinding: %+v", b)
	}
	role := decode[rbacv1.ClusterRole](t, objs, "ClusterRole/pvkit-controller-approve-by-policy")
	raw, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "config/rbac/approve-by-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cluster rbacv1.ClusterRole
	if err := sigsyaml.Unmarshal([]byte(strings.Split(string(raw), "\n---\n")[0]), &cluster); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(role.Rules, cluster.Rules) || len(role.Rules) == 0 {
		t.Errorf("the namespaced approval role %+v is not config/rbac/approve-by-policy.yaml's %+v", role.Rules, cluster.Rules)
	}
}

// config/prometheus: a ServiceMonitor that scrapes the metrics Service's
// HTTPS port with a token, and the alert on a paused rollout (issue 43
// #2), on a metric the controller serves.
// Issue 44 #3: the alert rules, as Prometheus evaluates them, on series as
// the controller exports them: promtool checks the rules and runs
// testdata/alerts_test.yaml (each alert before and after its threshold,
// its labels and annotations). promtool is Debian's prometheus package,
// which .ci/run installs.
func TestAlertRulesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool is not installed (Debian's prometheus package; .ci/run installs it)")
	}
	objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/prometheus"))
	var rule struct {
		Spec map[string]any `json:"spec"`
	}
	if err := sigsyaml.Unmarshal(objs["PrometheusRule/pvkit-controller"].raw, &rule); err != nil {
		t.Fatal(err)
	}
	rules, err := sigsyaml.Marshal(rule.Spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	unit, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "test/install/testdata/alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"rules.yaml": rules, "alerts_test.yaml": unit} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func TestPrometheusOverlay(t *testing.T) {
	objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/prometheus"))
	sm, ok := objs["ServiceMonitor/pvkit-controller"]
	rule, okRule := objs["PrometheusRule/pvkit-controller"]
	if !ok || !okRule || len(objs) != 2 {
		t.Fatalf("config/prometheus = %v, want the ServiceMonitor and the PrometheusRule", objs)
	}
	var r struct {
		Spec struct {
			Groups []struct {
				Rules []struct{ Alert, Expr string } `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal(rule.raw, &r); err != nil {
		t.Fatal(err)
	}
	var alerts []string
	for _, g := range r.Spec.Groups {
		for _, rule := range g.Rules {
			alerts = append(alerts, rule.Alert)
		}
	}
	if got := strings.Join(alerts, ","); got != "PvkitRolloutPaused,PvkitVariantsNotReady,PvkitRenderFailing,PvkitPublishedDrift,PvkitPorchErrors,PvkitPorchRepositoryFailing" {
		t.Errorf("the alert rules: %s", got)
	}
	src, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "orchestrator/metrics/metrics.go"))
	for _, metric := range []string{"pvkit_rollouts", "pvkit_packagevariants", "pvkit_porch_requests_total", "pvkit_published_drift", "pvkit_porch_repository_failing_seconds"} {
		if err != nil || !strings.Contains(string(src), `"`+metric+`"`) {
			t.Errorf("the alerts' metric %s is not the controller's (%v)", metric, err)
		}
	}
	var m struct {
		Spec struct {
			Selector  struct{ MatchLabels map[string]string } `json:"selector"`
			Endpoints []struct {
				Port, Scheme, Path, BearerTokenFile string
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal(sm.raw, &m); err != nil {
		t.Fatal(err)
	}
	svc := decode[corev1.Service](t, build(t), "Service/pvkit-controller-metrics")
	for k, v := range m.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s; the metrics Service has %v", k, v, svc.Labels)
		}
	}
	if len(m.Spec.Endpoints) != 1 || m.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || m.Spec.Endpoints[0].Scheme != "https" || m.Spec.Endpoints[0].BearerTokenFile == "" {
		t.Errorf("endpoints %+v: want the Service's port %q over https with a token", m.Spec.Endpoints, svc.Spec.Ports[0].Name)
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
	// make fuzz-short may sit under the fuzz pass's time budget (an if).
	test := strings.Index(string(ci), "\nmake test\n")
	short := regexp.MustCompile(`\n[ \t]*make fuzz-short\n`).FindStringIndex(string(ci))
	if test < 0 || short == nil || short[0] < test {
		t.Errorf(".ci/run must run make test, then make fuzz-short")
	}
}

// Issue 44 #3: config/cert-manager serves metrics with a cert-manager
// Certificate for the metrics Service's names, mounted where
// --metrics-cert-dir reads it; config/prometheus-tls's ServiceMonitor
// verifies it with that secret's ca.crt and one of its names, never
// skipping verification.
func TestCertManagerOverlay(t *testing.T) {
	objs := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/cert-manager"))
	var cert struct {
		Metadata struct{ Namespace string } `json:"metadata"`
		Spec     struct {
			SecretName string   `json:"secretName"`
			DNSNames   []string `json:"dnsNames"`
			IssuerRef  struct{ Kind, Name string }
		} `json:"spec"`
	}
	c, ok := objs["Certificate/pvkit-metrics-cert"]
	if !ok {
		t.Fatalf("config/cert-manager has no Certificate: %v", keys(objs))
	}
	if err := sigsyaml.Unmarshal(c.raw, &cert); err != nil {
		t.Fatal(err)
	}
	svc := decode[corev1.Service](t, objs, "Service/pvkit-controller-metrics")
	want := svc.Name + "." + svc.Namespace + ".svc"
	if !slices.Contains(cert.Spec.DNSNames, want) || cert.Metadata.Namespace != svc.Namespace {
		t.Errorf("the Certificate names %v in %s; the metrics Service is %s", cert.Spec.DNSNames, cert.Metadata.Namespace, want)
	}
	if _, ok := objs[cert.Spec.IssuerRef.Kind+"/"+cert.Spec.IssuerRef.Name]; !ok {
		t.Errorf("the Certificate's issuer %s/%s is not in the overlay", cert.Spec.IssuerRef.Kind, cert.Spec.IssuerRef.Name)
	}
	dep := decode[appsv1.Deployment](t, objs, "Deployment/pvkit-controller")
	pod := dep.Spec.Template.Spec
	mount := ""
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == cert.Spec.SecretName {
			for _, m := range pod.Containers[0].VolumeMounts {
				if m.Name == v.Name && m.ReadOnly {
					mount = m.MountPath
				}
			}
		}
	}
	if mount == "" || !slices.Contains(pod.Containers[0].Args, "--metrics-cert-dir="+mount) {
		t.Errorf("the Deployment does not serve the secret %s: mount %q, args %v", cert.Spec.SecretName, mount, pod.Containers[0].Args)
	}
	sm := buildDir(t, filepath.Join(fntest.RepoRoot(), "config/prometheus-tls"))["ServiceMonitor/pvkit-controller"]
	var m struct {
		Spec struct {
			Endpoints []struct {
				TLSConfig struct {
					InsecureSkipVerify bool   `json:"insecureSkipVerify"`
					ServerName         string `json:"serverName"`
					CA                 struct {
						Secret struct{ Name, Key string } `json:"secret"`
					} `json:"ca"`
				} `json:"tlsConfig"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal(sm.raw, &m); err != nil || len(m.Spec.Endpoints) != 1 {
		t.Fatalf("config/prometheus-tls ServiceMonitor: %v %s", err, sm.raw)
	}
	tls := m.Spec.Endpoints[0].TLSConfig
	if tls.InsecureSkipVerify || tls.CA.Secret.Name != cert.Spec.SecretName || tls.CA.Secret.Key != "ca.crt" || !slices.Contains(cert.Spec.DNSNames, tls.ServerName) {
		t.Errorf("the ServiceMonitor's tlsConfig %+v does not verify the Certificate %s (%v)", tls, cert.Spec.SecretName, cert.Spec.DNSNames)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
