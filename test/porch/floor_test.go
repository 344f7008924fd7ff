package porch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fanOutFloor is Porch's own floor for the fan-out benchmark: with no
// controller running, the same N clones of blueprints/app v1 into the same
// N repositories, each followed by the writes pvkit makes to a clone: the
// readiness gate (an update of the PackageRevision; the floor reads it
// first, as its create's answer is not kept), then a read and a write of
// its resources (a package-context key, so that Porch renders and commits
// as it does for pvkit's mutation), issued directly, workers at a time
// (pvkit's --workers). It returns the seconds from the first request to the
// last answer, and the requests made (5 per variant when nothing fails). Nothing waits for a
// cache: what is left is Porch's own time.
func (e *env) fanOutFloor(t *testing.T, n, workers int) (float64, int) {
	repos := e.benchRepos(t, n)
	upstream := ""
	for _, r := range e.revisions("blueprints", "app") {
		if r.Spec.WorkspaceName == "v1" {
			upstream = r.Name
		}
	}
	if upstream == "" {
		t.Fatal("no blueprints/app v1")
	}
	ctx := context.Background()
	jobs := make(chan string)
	var mu sync.Mutex
	var errs []string
	requests := 0
	var wg sync.WaitGroup
	cpu := cpuNow()
	defer func() { t.Logf("N=%d floor: CPU seconds: %s", n, cpu.since()) }()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for repo := range jobs {
				calls, err := floorVariant(ctx, e.c, e.ns, repo, upstream)
				mu.Lock()
				requests += calls
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", repo, err))
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range repos {
		jobs <- r
	}
	close(jobs)
	wg.Wait()
	secs := time.Since(start).Seconds()
	if len(errs) > 0 {
		t.Errorf("the floor's requests failed for %d of %d variants:\n%s", len(errs), n, strings.Join(errs, "\n"))
	}
	return secs, requests
}

// floorVariant clones the upstream into repo and writes a package-context
// key into the clone, retrying what fails, as any client must and pvkit
// does: under load Porch fails a create ("cannot determine upstream lock
// ... remote not found"), an update with a conflict (its refresh moved the
// draft on) or an internal error ("ref file is empty", "remote not
// found"), or is unavailable for a moment.
func floorVariant(ctx context.Context, c client.Client, ns, repo, upstream string) (int, error) {
	pr := &porchapi.PackageRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns},
		Spec: porchapi.PackageRevisionSpec{PackageName: "app", RepositoryName: repo, WorkspaceName: "packagevariant-1",
			Lifecycle: porchapi.PackageRevisionLifecycleDraft,
			Tasks: []porchapi.Task{{Type: porchapi.TaskTypeClone, Clone: &porchapi.PackageCloneTaskSpec{
				Upstream: porchapi.UpstreamPackage{UpstreamRef: &porchapi.PackageRevisionRef{Name: upstream}}}}}},
	}
	calls := 0
	for attempt := 0; ; attempt++ {
		// Porch fails some creates under load ("cannot determine upstream
		// lock ... remote not found"); a client tries again, as pvkit does.
		calls++
		err := c.Create(ctx, pr.DeepCopy())
		if err == nil || apierrors.IsAlreadyExists(err) {
			pr.Name = repo + ".app.packagevariant-1"
			break
		}
		if attempt == floorAttempts-1 {
			return calls, fmt.Errorf("create, %d times: %w", floorAttempts, err)
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	// The readiness gate pvkit sets right after the create (issue 21 #3):
	// an update of the PackageRevision, which Porch renders and commits.
	for attempt := 0; ; attempt++ {
		calls++
		var cur porchapi.PackageRevision
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pr.Name}, &cur)
		if err == nil {
			calls++
			cur.Spec.ReadinessGates = append(cur.Spec.ReadinessGates, porchapi.ReadinessGate{ConditionType: "pvkit.dev/mutation"})
			cur.Status.Conditions = append(cur.Status.Conditions, porchapi.Condition{Type: "pvkit.dev/mutation", Status: porchapi.ConditionFalse, Reason: "Pending"})
			err = c.Update(ctx, &cur)
		}
		if err == nil {
			break
		}
		if attempt == floorAttempts-1 {
			return calls, fmt.Errorf("gate update, %d times: %w", floorAttempts, err)
		}
	}
	var last error
	for attempt := 0; attempt < floorAttempts; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
		var prr porchapi.PackageRevisionResources
		calls++
		if last = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: pr.Name}, &prr); last != nil {
			last = fmt.Errorf("get resources: %w", last)
			continue
		}
		pc := prr.Spec.Resources["package-context.yaml"]
		if !strings.Contains(pc, "\ndata:\n") {
			return calls, fmt.Errorf("package-context.yaml has no data: %q", pc)
		}
		prr.Spec.Resources["package-context.yaml"] = strings.Replace(pc, "\ndata:\n", "\ndata:\n  cluster: "+repo+"\n", 1)
		calls++
		if last = c.Update(ctx, &prr); last == nil {
			return calls, nil
		}
		last = fmt.Errorf("update resources: %w", last)
	}
	return calls, fmt.Errorf("five times: %w", last)
}

// retireFloor deletes the floor's drafts and repositories.
func (e *env) retireFloor(t *testing.T) {
	var l porchapi.PackageRevisionList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	for i := range l.Items {
		if r := &l.Items[i]; r.Spec.RepositoryName != "blueprints" && r.Spec.Lifecycle == porchapi.PackageRevisionLifecycleDraft {
			if err := client.IgnoreNotFound(e.c.Delete(context.Background(), r)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := kubectl("", "delete", "-n", e.ns, "repositories", "--all", "--timeout=120s"); err != nil {
		t.Fatal(err)
	}
}

// floorAttempts is how often the floor tries a request Porch fails
// ("ref file is empty", 503s under the burst), as a client must; five was
// too few at N=200 (one gate update failed five times in a row), where
// pvkit's controller retries for as long as it takes.
const floorAttempts = 10
