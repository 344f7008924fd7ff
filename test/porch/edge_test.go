package porch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// edgeSet is healthSet whose health check reads Flux's Kustomization on
// the target's own cluster (named after its repository, as Nephio names
// deployment repositories), in flux-system, following the branch.
var edgeSet = strings.Replace(healthSet, `      nameExpr: downstream.repo
      condition: has(object.status) && object.status.lastAppliedRevision.startsWith(revision.ref + "@")
`, `      clusterExpr: downstream.repo
      namespace: flux-system
      nameExpr: downstream.package
      condition: >-
        has(object.status) && has(object.status.lastAppliedRevision) &&
        revision.commits.exists(c, object.status.lastAppliedRevision == revision.branch + "@sha1:" + c)
`, 1)

// edgeKubectl runs kubectl against the edge cluster.
func edgeKubectl(t *testing.T, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", filepath.Join(stackDir, "edge.kubeconfig")}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl (edge) %v: %v\n%s", args, err, out)
	}
}

// edgeFlux is Flux's Kustomization on the edge cluster at applied.
func edgeFlux(applied string) string {
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system}
spec: {path: ./app}
status:
  lastAppliedRevision: "%s"
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: %s"}
`, applied, applied)
}

// Issue 58's acceptance on a real Porch (rule health-from-the-clusters):
// the canary's health is read from a second kube-apiserver, the edge
// cluster's, through a kubeconfig Secret named as Cluster API names it,
// which the controller's role lets it get by name and nothing more. The
// canary, published at v2 by Porch, waits while the edge has no
// Kustomization, then one at the old commit (Flux's words in its health);
// the edge's API server stopped, its health names the connection's
// failure; started again with Flux at the commit Porch published v2 with
// (main@sha1:<commit>, from git), the canary is done and wave rest moves.
func TestHealthFromASecondAPIServer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "edge")
	approvingController(t)
	const n = 2
	url, files, _ := e.releaseFleet("g", n, map[string]string{"fleet": "yes", "region": "us-east1"}, true)
	e.apply(edgeSet)
	e.eventually(3*converge, "v1 published in the repositories", func() (bool, string) {
		return published(e, "g-000", "v1") && published(e, "g-001", "v1"), ""
	})
	stack(t, "edge-up")
	t.Cleanup(func() { stack(t, "edge-down") })
	b, err := os.ReadFile(filepath.Join(repoRoot, "test/porch/testdata/edge-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	edgeKubectl(t, string(b), "apply", "-f", "-")
	kc, err := os.ReadFile(filepath.Join(stackDir, "edge.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "g-000-kubeconfig"}, Data: map[string][]byte{"value": kc}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "pvkit-edge-kubeconfigs"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"g-000-kubeconfig"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "pvkit-edge-kubeconfigs"},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pvkit-edge-kubeconfigs"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "pvkit-controller", Namespace: "pvkit-system"}}},
	} {
		if err := e.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	canary := func() (*pvapi.TargetHealth, string) {
		var v pvapi.PackageVariant
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "app-g-000-app"}, &v); err != nil {
			return nil, err.Error()
		}
		for _, tg := range v.Status.DownstreamTargets {
			if tg.Health != nil && tg.Revision > 1 {
				return tg.Health, fmt.Sprintf("%s (commit %q): %s %s: %s", tg.Name, tg.Commit, tg.Health.Status, tg.Health.Reason, tg.Health.Message)
			}
		}
		return nil, fmt.Sprintf("targets %+v", v.Status.DownstreamTargets)
	}
	restMoved := func() bool { return published(e, "g-001", "v2") }
	const object = "cluster g-000: Kustomization flux-system/app"
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream(url, "app", "v2", files)
	e.eventuallyListed("blueprints", 3*converge, "the canary published at v2, no Kustomization on its cluster", func() (bool, string) {
		h, msg := canary()
		return h != nil && h.Reason == pvapi.ReasonObjectNotFound && h.Object == object &&
			strings.Contains(h.Message, `in namespace "flux-system" of cluster g-000`), msg
	})
	gitDir := strings.TrimPrefix(e.bareRepoURL("g-000"), "file://")
	old := e.gitOut(gitDir, "rev-parse", "app/v1^{commit}")
	edgeKubectl(t, edgeFlux("main@sha1:"+old), "apply", "-f", "-")
	e.eventually(2*converge, "the edge's Kustomization at the old commit, in Flux's words", func() (bool, string) {
		h, msg := canary()
		return h != nil && h.Reason == pvapi.ReasonNotHealthy && h.Reported == "ReconciliationSucceeded: Applied revision: main@sha1:"+old, msg
	})
	if restMoved() {
		t.Fatal("wave rest moved while the canary's cluster runs the old commit")
	}
	stack(t, "edge-down")
	e.eventually(2*converge, "the stopped edge API server named", func() (bool, string) {
		h, msg := canary()
		return h != nil && h.Reason == pvapi.ReasonClusterUnreachable &&
			strings.Contains(h.Message, "cluster g-000 (kubeconfig Secret "+e.ns+"/g-000-kubeconfig) did not answer reading "+object) &&
			strings.Contains(h.Message, "connection refused"), msg
	})
	stack(t, "edge-up")
	published := e.gitOut(gitDir, "rev-parse", "app/v2^{commit}")
	edgeKubectl(t, edgeFlux("main@sha1:"+published), "apply", "-f", "-")
	start := time.Now()
	e.eventually(3*converge, "the canary done once its cluster applied the commit that published v2, wave rest moving", func() (bool, string) {
		h, msg := canary()
		s, smsg := setRollout(e)
		return h != nil && h.Status == "True" && s != nil && s.Status.Rollout != nil && s.Status.Rollout.Waves[0].State == "Complete" &&
			restMoved(), msg + "; " + smsg
	})
	t.Logf("the canary done and wave rest published %s after the edge reported main@sha1:%s", time.Since(start).Round(time.Second), published[:12])
}

// bareRepoURL is the file URL of a repository bareRepo made.
func (e *env) bareRepoURL(name string) string {
	return "file://" + filepath.Join(stackDir, "git", e.ns, name+".git")
}

// gitOut runs git in dir and returns its output, trimmed.
func (e *env) gitOut(dir string, args ...string) string {
	e.t.Helper()
	out, err := exec.Command("git", append([]string{"--git-dir", dir}, args...)...).Output()
	if err != nil {
		e.t.Fatalf("git %v in %s: %v", args, dir, err)
	}
	return strings.TrimSpace(string(out))
}
