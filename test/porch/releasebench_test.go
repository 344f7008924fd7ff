package porch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestFleetReleaseBench (make e2e-porch-release-bench,
// PVKIT_PORCH_RELEASE_BENCH=20,50): a set over N repositories at v1 moves
// to v2 in two ways, each on its own namespace of the same stack:
//
//   - in-place: every child's draft unapproved; v2 published; the clock
//     stops when every draft is locked to v2 and every child Ready at its
//     generation (rule: draft-upgrade);
//   - rollout: approval by policy (always) and a staged rollout (canary 1,
//     30% ten at a time, the rest a quarter of the fleet at a time); the
//     clock stops when status.rollout is Complete and N revisions are
//     published at v2 (rule: staged-rollouts).
//
// PVKIT_PORCH_RELEASE_ONLY=rollout (or in-place) runs one of the two.
// It prints seconds, pvkit's API requests per variant and PackageRevisions
// created while the clock ran, and the ownerless and duplicate drafts
// left. Not a pass/fail test: a table (docs/performance.md).
func TestFleetReleaseBench(t *testing.T) {
	sizes := os.Getenv("PVKIT_PORCH_RELEASE_BENCH")
	if sizes == "" {
		t.Skip("the fleet-release benchmark runs with make e2e-porch-release-bench (PVKIT_PORCH_RELEASE_BENCH=20,50)")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| N | release | seconds | API requests per variant | revisions created | ownerless or duplicate drafts |\n|---|---|---|---|---|---|\n")
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("PVKIT_PORCH_RELEASE_BENCH: %q is not a size", f)
		}
		hows := []string{"in-place", "rollout"}
		if only := os.Getenv("PVKIT_PORCH_RELEASE_ONLY"); only != "" {
			hows = strings.Split(only, ",")
		}
		for _, how := range hows {
			secs, w, bad := releaseRun(t, n, how)
			fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %d | %d |\n", n, how, secs, float64(w.Requests)/float64(n), w.Creates, bad)
			calls := make([]string, 0, len(w.ByCall))
			for c := range w.ByCall {
				calls = append(calls, c)
			}
			sort.Slice(calls, func(i, j int) bool {
				if w.ByCall[calls[i]] != w.ByCall[calls[j]] {
					return w.ByCall[calls[i]] > w.ByCall[calls[j]]
				}
				return calls[i] < calls[j]
			})
			var by []string
			for _, c := range calls {
				by = append(by, fmt.Sprintf("%s %.2f", c, float64(w.ByCall[c])/float64(n)))
			}
			t.Logf("N=%d %s: requests per variant by call: %s", n, how, strings.Join(by, ", "))
		}
	}
	t.Log(b.String())
}

// releaseRun sets a fleet of n up at v1 and times its move to v2.
func releaseRun(t *testing.T, n int, how string) (float64, writes, int) {
	e := newEnv(t, fmt.Sprintf("release-%s-%d", how, n))
	if how == "rollout" {
		approvingController(t)
	}
	files := blueprint(t)
	url := e.bareRepo("blueprints")
	e.publishUpstream(url, "app", "v1", files)
	e.repository("blueprints", url, false, nil)
	e.apply(cluster)
	repos := make([]string, n)
	for i := range repos {
		repos[i] = fmt.Sprintf("r-%03d", i)
		labels := map[string]string{"bench": "yes"}
		if i == 0 {
			labels["ring"] = "canary"
		}
		e.repository(repos[i], e.bareRepo(repos[i]), true, labels)
	}
	extra := `      injectors:
      - kind: ConfigMap
        name: us-east1-endpoints
`
	if how == "rollout" {
		extra = `      annotations: {approval.nephio.org/policy: always}
` + extra + fmt.Sprintf(`  rollout:
    waves:
    - name: canary
      selector:
        matchLabels: {ring: canary}
      size: 1
    - name: early
      size: 30%%
      maxUpdate: 10
    - name: rest
      maxUpdate: %d
`, max(n/4, 1))
	}
	e.apply(setOver("", `bench: "yes"`, extra))
	at := func(rev string) (published, drafts int, bad int) {
		// One list of the namespace per poll, not one per repository.
		var l porchapi.PackageRevisionList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		byRepo := map[string][]porchapi.PackageRevision{}
		for _, r := range l.Items {
			if r.Spec.PackageName == "app" && r.DeletionTimestamp == nil {
				byRepo[r.Spec.RepositoryName] = append(byRepo[r.Spec.RepositoryName], r)
			}
		}
		for _, repo := range repos {
			owned := 0
			for _, r := range byRepo[repo] {
				if r.Spec.WorkspaceName == "main" {
					continue
				}
				if len(r.OwnerReferences) == 0 && r.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished {
					bad++ // ownerless
				}
				if r.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished {
					owned++
				}
				l := r.Status.UpstreamLock
				if l == nil || l.Git == nil || l.Git.Ref != "app/"+rev {
					continue
				}
				if r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished {
					published++
				} else {
					drafts++
				}
			}
			if owned > 1 {
				bad++ // two drafts of one downstream
			}
		}
		return published, drafts, bad
	}
	timed := false // v2 published: the clock runs
	// done checks cheap things first (the children Ready; for a rollout,
	// the set's rollout Complete), and lists the namespace's
	// PackageRevisions, a Porch list of every revision, only then: polled
	// every 250 ms, that list loaded Porch and kube-apiserver more than the
	// rollout did. An in-place release has no such signal (its children
	// stay Ready), so it lists on each poll; it lasts seconds.
	done := func(rev string) (bool, string) {
		if ok, msg := e.allReady(n); !ok {
			return false, msg
		}
		var s pvsapi.PackageVariantSet
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app"}, &s); err != nil {
			return false, err.Error()
		}
		phase := ""
		if r := s.Status.Rollout; r != nil && r.Target.Name == "blueprints.app."+rev {
			phase = string(r.Phase) + ": " + r.Message
		}
		if how == "rollout" && timed && !strings.HasPrefix(phase, "Complete") {
			return false, "rollout " + phase
		}
		p, d, bad := at(rev)
		if how == "in-place" {
			return d == n, fmt.Sprintf("%d drafts at %s (%d bad)", d, rev, bad)
		}
		if !timed { // v1: the set's first revision, no rollout
			return p == n, fmt.Sprintf("%d published at %s", p, rev)
		}
		return p == n, fmt.Sprintf("%d published at %s; rollout %s", p, rev, phase)
	}
	e.eventually(10*converge, "the fleet at v1", func() (bool, string) { return done("v1") })

	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	timed = true
	offset := auditSize(t)
	cpu := cpuNow()
	defer func() { t.Logf("N=%d %s: CPU seconds: %s", n, how, cpu.since()) }()
	start := time.Now()
	e.publishUpstream(url, "app", "v2", files)
	e.nudge("blueprints")
	var secs float64
	e.eventually(20*converge, "the fleet at v2", func() (bool, string) {
		ok, msg := done("v2")
		if ok {
			secs = time.Since(start).Seconds()
		}
		return ok, msg
	})
	time.Sleep(2 * time.Second) // the audit log is written asynchronously
	w := audit(t, offset, e.ns, isPvkit)
	t.Logf("N=%d %s: memory: %s", n, how, memoryNow())
	// Porch's listing latency at this size: what an informer's first list
	// (a controller's start) and every harness poll cost.
	var took []time.Duration
	items := 0
	for range 5 {
		var l porchapi.PackageRevisionList
		start := time.Now()
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(start))
		items = len(l.Items)
	}
	slices.Sort(took)
	t.Logf("N=%d %s: a list of the namespace's %d PackageRevisions: median %s (of 5: %s to %s)", n, how, items, took[2].Round(time.Millisecond), took[0].Round(time.Millisecond), took[4].Round(time.Millisecond))
	_, _, bad := at("v2")
	if _, err := kubectl("", "delete", "-n", e.ns, "repositories", "--all", "--wait=false"); err != nil {
		t.Log(err)
	}
	return secs, w, bad
}
