package porch

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 43 #3 on a real Porch (rule rollout-undo): a set over N
// repositories (PVKIT_PORCH_UNDO, default 5; 200 for docs/performance.md)
// with approval by policy (always) rolls v2 out to every child; then
// pvkit.dev/rollout-undo names v2, and every child's latest published
// revision is back at v1 (a new revision made from v1), the rollout
// Paused RolledBack. Timed from the annotation to the last child back.
func TestRolloutUndoOnPorch(t *testing.T) {
	t.Parallel()
	n := 5
	if v, err := strconv.Atoi(os.Getenv("PVKIT_PORCH_UNDO")); err == nil && v > 0 {
		n = v
	}
	e := newEnv(t, fmt.Sprintf("undo-%d", n))
	approvingController(t)
	url, files, _ := e.releaseFleet("u", n, map[string]string{"undo": "yes"}, false)
	e.apply(setOver("", `undo: "yes"`, `      annotations: {approval.nephio.org/policy: always}
      injectors:
      - kind: ConfigMap
        name: us-east1-endpoints
  rollout:
    waves:
    - name: all
`))
	// latest: how many repositories' newest published revision is locked
	// to rev (one list of the namespace per poll).
	latest := func(rev string) (int, string) {
		var l porchapi.PackageRevisionList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return 0, err.Error()
		}
		newest := map[string]porchapi.PackageRevision{}
		for _, r := range l.Items {
			if r.Spec.PackageName != "app" || r.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished || r.Spec.WorkspaceName == "main" ||
				!strings.HasPrefix(r.Spec.RepositoryName, "u-") {
				continue
			}
			if cur, ok := newest[r.Spec.RepositoryName]; !ok || r.Spec.Revision > cur.Spec.Revision {
				newest[r.Spec.RepositoryName] = r
			}
		}
		c := 0
		for _, r := range newest {
			if l := r.Status.UpstreamLock; l != nil && l.Git != nil && l.Git.Ref == "app/"+rev {
				c++
			}
		}
		return c, fmt.Sprintf("%d of %d repositories' newest published revision at %s", c, n, rev)
	}
	rollout := func() *pvsapi.PackageVariantSet {
		var s pvsapi.PackageVariantSet
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app"}, &s); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	e.eventually(10*converge, "the fleet at v1", func() (bool, string) { c, msg := latest("v1"); return c == n, msg })
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream(url, "app", "v2", files)
	e.eventuallyListed("blueprints", 10*converge, "the fleet at v2, the rollout Complete", func() (bool, string) {
		c, msg := latest("v2")
		r := rollout().Status.Rollout
		return c == n && r != nil && r.Target.Name == "blueprints.app.v2" && r.Phase == "Complete", msg
	})
	start := time.Now()
	if _, err := kubectl("", "annotate", "-n", e.ns, "packagevariantset", "app", "pvkit.dev/rollout-undo=blueprints.app.v2"); err != nil {
		t.Fatal(err)
	}
	e.eventually(10*converge, "every child back at v1, the rollout Paused RolledBack", func() (bool, string) {
		c, msg := latest("v1")
		r := rollout().Status.Rollout
		if r == nil {
			return false, msg + "; no status.rollout"
		}
		return c == n && r.Phase == "Paused" && r.Undone, msg + fmt.Sprintf("; rollout %s: %s", r.Phase, r.Message)
	})
	t.Logf("undo of a rollout at N=%d: every child's newest published revision back at v1 %.1f s after the annotation", n, time.Since(start).Seconds())
}
