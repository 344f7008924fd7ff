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

	"github.com/pvkit/pvkit/internal/release"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// nodeDir is test/node/node.sh's WORK directory: two kubelets, the
// controller-manager, the scheduler and kube-proxy beside the stack
// (make e2e-node).
var nodeDir = os.Getenv("PVKIT_NODE_DIR")

// Issue 44 #1: the release manifest on real nodes. make release's
// controller image (an OCI archive, by digest) is imported into both nodes'
// containerd, dist's install.yaml applied server-side with nothing else:
// two controller pods Ready, one per node; the leader reconciles a set to
// Ready; the PDB refuses evicting the second pod while the first is gone;
// deleting the leader's pod hands the Lease over; the image changed by tag
// rolls both pods; the uninstall runbook removes the pods and keeps the
// CRDs. Each step's time is logged.
func TestInstallOnNodes(t *testing.T) {
	if nodeDir == "" {
		t.Skip("no node (PVKIT_NODE_DIR is unset); `make e2e-node` brings two up beside the stack and runs this test")
	}
	e := newEnv(t, "node")
	ctx := context.Background()
	dist := t.TempDir()
	version := strings.TrimSpace(readFile(t, filepath.Join(repoRoot, "VERSION")))
	if err := release.Dist(release.DistOptions{Options: release.Options{Root: repoRoot, Version: version, ImageRepo: "pvkit"},
		Out: dist, ImageBinaries: map[string]string{"controller": filepath.Join(repoRoot, "bin/pvkit-controller")},
		Source: "https://github.com/pvkit/pvkit", Commit: "e2e", Epoch: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	nodeImport(t, filepath.Join(dist, "images", "controller.oci.tar"))

	// The shared controller steps aside; everything is put back after.
	stopController()
	t.Cleanup(func() {
		// The uninstall removed the namespace and the ServiceAccount whose
		// token the shared controller used: all of it installed again.
		if _, err := kubectl("", "delete", "--ignore-not-found", "--timeout=120s", "-f", filepath.Join(dist, "install-without-crds.yaml")); err != nil {
			t.Error(err)
		}
		if err := install(); err != nil {
			t.Error(err)
		}
	})
	start := time.Now()
	if out, err := kubectl("", "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(dist, "install.yaml")); err != nil {
		t.Fatalf("kubectl apply --server-side -f install.yaml: %v\n%s", err, out)
	}
	pods := e.controllerPods(2)
	t.Logf("kubectl apply -f install.yaml: two controller pods Ready in %.1f s, on %s", time.Since(start).Seconds(), podNodes(pods))

	// The leader reconciles a set to Ready.
	e.upstream(blueprint(t))
	for _, r := range []string{"east", "west"} {
		e.repository(r, e.bareRepo(r), true, map[string]string{"fleet": "yes"})
	}
	s := time.Now()
	e.apply(setOver("", `fleet: "yes"`, ""))
	e.eventually(2*converge, "the set and its two children Ready, reconciled by the pod holding the Lease", func() (bool, string) {
		for _, r := range []string{"east", "west"} {
			if ok, msg := e.ready("app-" + r + "-app"); !ok {
				return false, r + ": " + msg
			}
		}
		return e.setReady("app")
	})
	t.Logf("the set Ready %.1f s after it was applied", time.Since(s).Seconds())

	// The PDB lets one pod go and holds the other, once the
	// controller-manager counted both.
	e.eventually(converge, "the PDB allows one disruption", func() (bool, string) {
		var pdb policyv1.PodDisruptionBudget
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "pvkit-system", Name: "pvkit-controller"}, &pdb); err != nil {
			return false, err.Error()
		}
		return pdb.Status.DisruptionsAllowed == 1 && pdb.Status.ObservedGeneration == pdb.Generation, fmt.Sprintf("%+v", pdb.Status)
	})
	e.evict(pods[0].Name, true)
	e.evict(pods[1].Name, false)
	pods = e.controllerPods(2)

	// The leader's pod deleted: the other takes the Lease. The eviction
	// above may have taken the leader's pod: its Lease moves to a pod
	// that runs (CI, loaded: read at once, it still named the evicted pod).
	var victim string
	e.eventually(converge, "the Lease held by a running pod", func() (bool, string) {
		leader := e.leaseHolder()
		victim = ""
		for _, p := range pods {
			if strings.HasPrefix(leader, p.Name) {
				victim = p.Name
			}
		}
		return victim != "", fmt.Sprintf("the Lease's holder %q is none of the pods %s", leader, podNodes(pods))
	})
	s = time.Now()
	if err := e.c.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "pvkit-system", Name: victim}}); err != nil {
		t.Fatal(err)
	}
	e.eventually(converge, "the Lease held by the other pod", func() (bool, string) {
		h := e.leaseHolder()
		return h != "" && !strings.HasPrefix(h, victim), "holder " + h
	})
	t.Logf("deleted the leader's pod %s: the Lease moved in %.1f s", victim, time.Since(s).Seconds())
	e.controllerPods(2)

	// An upgrade by image tag: the same image under the next tag.
	next := "docker.io/pvkit/controller:" + version + "-next"
	retag(t, next)
	s = time.Now()
	if out, err := kubectl("", "-n", "pvkit-system", "set", "image", "deployment/pvkit-controller", "controller="+next); err != nil {
		t.Fatalf("kubectl set image: %v\n%s", err, out)
	}
	e.eventually(2*converge, "both pods on the next tag, Ready", func() (bool, string) {
		pods, msg := e.readyPods()
		n := 0
		for _, p := range pods {
			if p.Spec.Containers[0].Image == next {
				n++
			}
		}
		return n == 2 && len(pods) == 2, fmt.Sprintf("%d of %d Ready pods on %s; %s", n, len(pods), next, msg)
	})
	t.Logf("upgraded by tag: both pods Ready on %s in %.1f s", next, time.Since(s).Seconds())

	// The uninstall runbook (README): the pods go, the CRDs stay.
	s = time.Now()
	if out, err := kubectl("", "delete", "--ignore-not-found", "-f", filepath.Join(dist, "install-without-crds.yaml")); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	e.eventually(converge, "no controller pod left", func() (bool, string) {
		var l corev1.PodList
		if err := e.c.List(ctx, &l, client.InNamespace("pvkit-system")); err != nil && !apierrors.IsNotFound(err) {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items))
	})
	if out, err := kubectl("", "get", "crd", "packagevariants.config.porch.kpt.dev", "packagevariantsets.config.porch.kpt.dev"); err != nil {
		t.Fatalf("the CRDs did not stay: %v\n%s", err, out)
	}
	t.Logf("uninstalled in %.1f s: no pod left, the CRDs stay", time.Since(s).Seconds())
}

// controllerPods waits for n Ready controller pods.
func (e *env) controllerPods(n int) []corev1.Pod {
	e.t.Helper()
	var pods []corev1.Pod
	e.eventually(2*converge, fmt.Sprintf("%d controller pods Ready", n), func() (bool, string) {
		var msg string
		pods, msg = e.readyPods()
		return len(pods) == n, msg
	})
	return pods
}

// readyPods are the controller's Ready pods, and what the others wait for.
func (e *env) readyPods() ([]corev1.Pod, string) {
	var l corev1.PodList
	if err := e.c.List(context.Background(), &l, client.InNamespace("pvkit-system"), client.MatchingLabels{"app.kubernetes.io/component": "controller"}); err != nil {
		return nil, err.Error()
	}
	var ready []corev1.Pod
	var waiting []string
	for _, p := range l.Items {
		ok := p.DeletionTimestamp == nil
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
				ok = false
			}
		}
		if ok && p.Status.Phase == corev1.PodRunning {
			ready = append(ready, p)
		} else {
			waiting = append(waiting, fmt.Sprintf("%s %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
		}
	}
	return ready, fmt.Sprintf("Ready %s; waiting %v", podNodes(ready), waiting)
}

func podNodes(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name+"@"+p.Spec.NodeName)
	}
	return strings.Join(out, ", ")
}

// leaseHolder is the controller's Lease holder ("" when released).
func (e *env) leaseHolder() string {
	var l coordinationv1.Lease
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: "pvkit-system", Name: "pvkit-controller.pvkit.dev"}, &l); err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// evict asks the eviction API for pod, which the PDB allows or refuses.
func (e *env) evict(pod string, allowed bool) {
	e.t.Helper()
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: "pvkit-system", Name: pod}}
	err := e.c.SubResource("eviction").Create(context.Background(), &corev1.Pod{ObjectMeta: ev.ObjectMeta}, ev)
	switch {
	case allowed && err != nil:
		e.t.Fatalf("evicting %s, the PDB's one allowed disruption: %v", pod, err)
	case !allowed && !apierrors.IsTooManyRequests(err):
		e.t.Fatalf("evicting %s while the other pod is gone: %v, want the PDB's refusal (429)", pod, err)
	}
	e.t.Logf("evicting %s: %v", pod, err)
}

// setReady says whether the set is Ready.
func (e *env) setReady(name string) (bool, string) {
	out, err := kubectl("", "get", "-n", e.ns, "packagevariantset", name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	return err == nil && out == "True", out
}

// nodeImport imports an image archive into both nodes.
func nodeImport(t *testing.T, archive string) {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot, "test/node/node.sh"), "import", nodeDir, archive).CombinedOutput()
	if err != nil {
		t.Fatalf("node.sh import %s: %v\n%s", archive, err, out)
	}
}

// retag names the imported controller image ref too, in both nodes.
func retag(t *testing.T, ref string) {
	t.Helper()
	for _, n := range []string{"1", "2"} {
		sock := filepath.Join(nodeDir, "node-"+n, "containerd.sock")
		list, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "images", "ls", "-q").Output()
		if err != nil {
			t.Fatal(err)
		}
		var src string
		for _, l := range strings.Fields(string(list)) {
			if strings.Contains(l, "pvkit/controller:") && !strings.HasSuffix(l, "-next") && !strings.Contains(l, "@") {
				src = l
			}
		}
		if src == "" {
			t.Fatalf("node-%s has no pvkit/controller image: %s", n, list)
		}
		if out, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "images", "tag", "--force", src, ref).CombinedOutput(); err != nil {
			t.Fatalf("ctr images tag %s %s: %v\n%s", src, ref, err, out)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
