package porch

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/internal/release"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	appsv1 "k8s.io/api/apps/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 32 #5: the release manifest, namespace-scoped, on the real stack.
// make release's install-namespaced.yaml, its namespace "fleet" replaced as
// its header says, is applied server-side to the API server with nothing
// else; there is no kubelet here, so the Deployment it created is run as
// its pod would run it: bin/pvkit-controller with the Deployment's own
// arguments and its ServiceAccount's token (the bind addresses moved to
// free ports, and --leader-election-namespace, which a pod takes from its
// ServiceAccount's mount). With the ClusterRoleBinding of the default
// install gone, that controller reconciles a set in its namespace and
// nothing outside it; a set suspended while its upstream moves makes no
// draft; resumed (pvctl resume, which waits for the reconcile) it makes the
// upgrade drafts; pvctl wait sees them Ready; its metrics refuse an
// anonymous scrape.
func TestInstallFromReleaseManifest(t *testing.T) {
	e := newEnv(t, "release")
	outside := newEnv(t, "outside")
	version, err := os.ReadFile(filepath.Join(repoRoot, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	arts, err := release.Manifests(release.Options{Root: repoRoot, Version: strings.TrimSpace(string(version)), ImageRepo: "pvkit"})
	if err != nil {
		t.Fatal(err)
	}
	var manifest string
	for _, a := range arts {
		if a.Name == "install-namespaced.yaml" {
			manifest = string(a.Data)
		}
	}
	if strings.Count(manifest, "namespace: fleet\n") != 1 || strings.Count(manifest, "--watch-namespace=fleet\n") != 1 {
		t.Fatalf("install-namespaced.yaml names fleet %d and %d times, want once in the RoleBinding and once in the args", strings.Count(manifest, "namespace: fleet\n"), strings.Count(manifest, "--watch-namespace=fleet\n"))
	}
	manifest = strings.Replace(manifest, "namespace: fleet\n", "namespace: "+e.ns+"\n", 1)
	manifest = strings.Replace(manifest, "--watch-namespace=fleet\n", "--watch-namespace="+e.ns+"\n", 1)
	path := filepath.Join(stackDir, "install-namespaced.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}

	// The shared controller steps aside; everything it had is put back.
	stopController()
	var released *exec.Cmd
	t.Cleanup(func() {
		stopProcess(&released)
		for _, args := range [][]string{
			{"-n", "pvkit-system", "delete", "deployment", "pvkit-controller", "--ignore-not-found"},
			{"apply", "-k", filepath.Join(repoRoot, "config/rbac")}, // the ClusterRoleBinding this test removed
		} {
			if _, err := kubectl("", args...); err != nil {
				t.Error(err)
			}
		}
		if err := startController(); err != nil {
			t.Error(err)
		}
	})
	if out, err := kubectl("", "apply", "--server-side", "-f", path); err != nil {
		t.Fatalf("kubectl apply --server-side -f install-namespaced.yaml: %v\n%s", err, out)
	}
	// A cluster installed from this manifest alone has no ClusterRoleBinding
	// of the controller's role (the default install's, applied by newEnv).
	if _, err := kubectl("", "delete", "clusterrolebinding", "pvkit-controller"); err != nil {
		t.Fatal(err)
	}

	var d appsv1.Deployment
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "pvkit-system", Name: "pvkit-controller"}, &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	kc := filepath.Join(stackDir, "release-controller.kubeconfig")
	if err := serviceAccountKubeconfig(spec.ServiceAccountName, kc); err != nil {
		t.Fatal(err)
	}
	addrs, err := freeAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	metrics, health := addrs[0], addrs[1]
	// The pod's command line: the Deployment's args, the bind addresses
	// moved to free ports.
	argsOf := func(d *appsv1.Deployment) []string {
		args := []string{"--kubeconfig", kc, "--leader-election-namespace", d.Namespace}
		for _, a := range d.Spec.Template.Spec.Containers[0].Args {
			switch {
			case strings.HasPrefix(a, "--metrics-bind-address="):
				a = "--metrics-bind-address=" + metrics
			case strings.HasPrefix(a, "--health-probe-bind-address="):
				a = "--health-probe-bind-address=" + health
			case strings.HasPrefix(a, "--zap-encoder="):
				a = "--zap-encoder=console"
			}
			args = append(args, a)
		}
		return args
	}
	args := argsOf(&d)
	logf, err := os.OpenFile(filepath.Join(stackDir, "release-controller.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	if released, err = runController("the released controller", args, logf, health); err != nil {
		t.Fatal(err)
	}
	t.Logf("the released controller runs as %s with %q", spec.ServiceAccountName, args[4:])

	// Inside the watched namespace: a set over two repositories.
	bp := blueprint(t)
	e.upstream(bp)
	for _, r := range []string{"east", "west"} {
		e.repository(r, e.bareRepo(r), true, map[string]string{"fleet": "yes"})
	}
	e.apply(setOver("", `fleet: "yes"`, ""))
	// A sentinel on the same upstream, never suspended: when it has moved,
	// the controller has had the upstream's event (the evidence the
	// suspended ones cannot give).
	e.repository("sentinel", e.bareRepo("sentinel"), true, nil)
	e.apply("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: sentinel}\nspec:\n  upstream: {repo: blueprints, package: app}\n  downstream: {repo: sentinel, package: app}\n")
	// Outside it: a variant nobody may reconcile.
	outside.upstream(bp)
	outside.repository("deploy", outside.bareRepo("deploy"), true, nil)
	outside.apply("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: outside}\nspec:\n  upstream: {repo: blueprints, package: app}\n  downstream: {repo: deploy, package: app}\n")

	pvctl := func(args ...string) (string, error) {
		out, err := exec.Command(filepath.Join(repoRoot, "bin/pvctl"), append(args, "--kubeconfig", adminKC, "-n", e.ns)...).CombinedOutput()
		return string(out), err
	}
	mustPvctl := func(args ...string) string {
		t.Helper()
		out, err := pvctl(args...)
		if err != nil {
			t.Fatalf("pvctl %v: %v\n%s", args, err, out)
		}
		return out
	}
	e.eventually(converge, "a draft per repository", func() (bool, string) {
		for _, r := range []string{"east", "west"} {
			if _, ok, msg := e.onlyOwned(r, "app"); !ok {
				return false, r + ": " + msg
			}
		}
		return true, ""
	})
	if out := mustPvctl("wait", "pvs/app", "--for=condition=Ready", "--timeout", "90s"); !strings.Contains(out, "packagevariantset/app condition met (Ready=True)") {
		t.Errorf("pvctl wait: %s", out)
	}
	for _, r := range []string{"east", "west"} {
		mustPvctl("wait", "pv/app-"+r+"-app", "--for=condition=Ready", "--timeout", "90s")
		d, _, _ := e.onlyOwned(r, "app")
		e.approve(d.Name)
	}

	// Suspended while the upstream moves: no draft.
	if out := mustPvctl("suspend", "pvs/app"); !strings.Contains(out, "packagevariantset/app suspended") {
		t.Errorf("pvctl suspend: %s", out)
	}
	e.eventually(converge, "the set and its children say Suspended", func() (bool, string) {
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		children := 0
		for _, v := range l.Items {
			if v.Name == "sentinel" {
				continue
			}
			children++
			if !apimeta.IsStatusConditionTrue(v.Status.Conditions, kit.ConditionSuspended) {
				return false, v.Name + " not yet"
			}
		}
		return children == 2, fmt.Sprintf("%d children", children)
	})
	bp["deployment.yaml"] = strings.Replace(bp["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream("file://"+filepath.Join(stackDir, "git", e.ns, "blueprints.git"), "app", "v2", bp)
	e.eventuallyListed("blueprints", converge, "Porch lists blueprints/app v2", func() (bool, string) {
		for _, r := range e.revisions("blueprints", "app") {
			if r.Spec.WorkspaceName == "v2" {
				return true, ""
			}
		}
		return false, "not yet"
	})
	drafts := func() int {
		n := 0
		for _, r := range []string{"east", "west"} {
			for _, pr := range e.revisions(r, "app") {
				if pr.Spec.Lifecycle == porchapi.PackageRevisionLifecycleDraft {
					n++
				}
			}
		}
		return n
	}
	// Evidence, not time (issue 48 #3): the sentinel's draft moved to v2,
	// and the controller handled a reconcile request of every object it
	// reconciles here since.
	e.eventuallyListed("sentinel", converge, "the sentinel's draft upgraded to v2", func() (bool, string) {
		d, ok, msg := e.onlyOwned("sentinel", "app")
		if !ok {
			return false, msg
		}
		if l := d.Status.UpstreamLock; l == nil || l.Git == nil || !strings.HasSuffix(l.Git.Ref, "app/v2") {
			return false, fmt.Sprintf("%s locked to %+v", d.Name, l)
		}
		return true, ""
	})
	e.handled("the upstream moved under a suspended set", converge)
	if n := drafts(); n != 0 {
		t.Fatalf("a suspended set's children made %d drafts while the upstream moved", n)
	}

	// Resumed: the upgrade drafts, and Ready.
	out := mustPvctl("resume", "pvs/app", "--timeout", "90s")
	if !strings.Contains(out, "packagevariantset/app resumed\npackagevariantset/app reconciled: Ready=True") {
		t.Errorf("pvctl resume: %s", out)
	}
	e.eventually(converge, "an upgrade draft per repository", func() (bool, string) { return drafts() == 2, fmt.Sprintf("%d drafts", drafts()) })
	for _, r := range []string{"east", "west"} {
		if out := mustPvctl("wait", "pv/app-"+r+"-app", "--for=condition=Ready", "--timeout", "90s"); !strings.Contains(out, "condition met") {
			t.Errorf("pvctl wait pv/app-%s-app: %s", r, out)
		}
	}

	// Nothing outside the watched namespace was read or written.
	var v pvapi.PackageVariant
	if err := outside.c.Get(context.Background(), client.ObjectKey{Namespace: outside.ns, Name: "outside"}, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Status.Conditions) != 0 || len(v.Finalizers) != 0 || len(outside.revisions("deploy", "app")) != 0 {
		t.Errorf("the namespace-scoped controller touched a variant outside its namespace: conditions %v, finalizers %v", v.Status.Conditions, v.Finalizers)
	}
	// Upgrade, as the README says: the next release's manifest applied over
	// this one (server-side, no conflict), the Deployment rolled (here: the
	// process stopped and started with the new Deployment's arguments); the
	// new leader takes the Lease the old one gave back, and reconciles.
	next := t.TempDir()
	if err := os.CopyFS(filepath.Join(next, "config"), os.DirFS(filepath.Join(repoRoot, "config"))); err != nil {
		t.Fatal(err)
	}
	const nextVersion = "v0.1.1-upgrade-test"
	for name, text := range map[string]string{"VERSION": nextVersion + "\n", "CHANGELOG.md": "# Changelog\n\n## " + nextVersion + "\n- the upgrade scenario\n"} {
		if err := os.WriteFile(filepath.Join(next, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	nextArts, err := release.Manifests(release.Options{Root: next, Version: nextVersion, ImageRepo: "pvkit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range nextArts {
		if a.Name == "install-namespaced.yaml" {
			manifest = strings.Replace(string(a.Data), "namespace: fleet\n", "namespace: "+e.ns+"\n", 1)
			manifest = strings.Replace(manifest, "--watch-namespace=fleet\n", "--watch-namespace="+e.ns+"\n", 1)
		}
	}
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	stopProcess(&released)
	if out, err := kubectl("", "apply", "--server-side", "-f", path); err != nil {
		t.Fatalf("the next release's manifest over this one: %v\n%s", err, out)
	}
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "pvkit-system", Name: "pvkit-controller"}, &d); err != nil {
		t.Fatal(err)
	}
	if img := d.Spec.Template.Spec.Containers[0].Image; img != "pvkit/controller:"+nextVersion {
		t.Errorf("after the upgrade the Deployment runs %s", img)
	}
	start := time.Now()
	if released, err = runController("the upgraded controller", argsOf(&d), logf, health); err != nil {
		t.Fatal(err)
	}
	if out := mustPvctl("reconcile", "pvs/app", "--timeout", "90s"); !strings.Contains(out, "packagevariantset/app reconciled: Ready=True") {
		t.Errorf("pvctl reconcile after the upgrade: %s", out)
	}
	t.Logf("the upgraded controller reconciled %s after it started (the Lease given back by the old one)", time.Since(start).Round(100*time.Millisecond))

	// Uninstall, as the README says, previewed by the API server (the stack
	// has no namespace controller: a deleted namespace never goes, and the
	// other scenarios share pvkit-system): every object of
	// install-without-crds.yaml is deleted, and no CRD.
	for _, a := range nextArts {
		if a.Name != "install-without-crds.yaml" {
			continue
		}
		p := filepath.Join(stackDir, a.Name)
		if err := os.WriteFile(p, a.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := kubectl("", "delete", "--dry-run=server", "--ignore-not-found", "-f", p) // this install has no ClusterRoleBinding
		if err != nil {
			t.Fatalf("kubectl delete --dry-run=server -f install-without-crds.yaml: %v\n%s", err, out)
		}
		for _, want := range []string{`deployment.apps "pvkit-controller" deleted (server dry run)`, `namespace "pvkit-system" deleted (server dry run)`,
			`clusterrole.rbac.authorization.k8s.io "pvkit-controller" deleted (server dry run)`} {
			if !strings.Contains(out, want) {
				t.Errorf("the uninstall preview lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "customresourcedefinition") {
			t.Errorf("the uninstall would delete a CRD:\n%s", out)
		}
	}

	// Its metrics: an anonymous scrape refused. The metrics server serves
	// after the readiness probe passes (its self-signed certificate is made
	// first: CI at 503164d scraped 1 s early and met "connection refused"),
	// so a refused connection is tried again, for at most 30 s.
	var resp *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+metrics+"/metrics", nil)
		if resp, err = metricsClient.Do(req); err == nil || !strings.Contains(err.Error(), "connection refused") || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("an anonymous scrape of the released controller: %d, want 401", resp.StatusCode)
	}
}
