package porch

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inFlight is a client whose creates and deletes take a while and count
// how many run at once, per repository and in all.
type inFlight struct {
	client.Client
	mu             sync.Mutex
	now, most      map[string]int
	total, mostAll int
}

func (c *inFlight) enter(repo string) func() {
	c.mu.Lock()
	c.now[repo]++
	c.total++
	c.most[repo] = max(c.most[repo], c.now[repo])
	c.mostAll = max(c.mostAll, c.total)
	c.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	return func() {
		c.mu.Lock()
		c.now[repo]--
		c.total--
		c.mu.Unlock()
	}
}

func (c *inFlight) Create(ctx context.Context, obj client.Object, _ ...client.CreateOption) error {
	defer c.enter(obj.(*porchapi.PackageRevision).Spec.RepositoryName)()
	return nil
}

func (c *inFlight) Delete(ctx context.Context, obj client.Object, _ ...client.DeleteOption) error {
	defer c.enter(repositoryOf(obj.GetName()))()
	return nil
}

// Rule one-write-per-repository: pvkit's writes to one repository never
// overlap (Porch v1.5.3 can lose a draft created while another write's
// refresh runs); writes to different repositories do.
func TestWritesToOneRepositoryAreSerial(t *testing.T) {
	c := &inFlight{now: map[string]int{}, most: map[string]int{}}
	s := &Store{Client: c}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		for _, repo := range []string{"east", "west"} {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = s.CreateDraft(context.Background(), store.DraftSpec{Namespace: "ns", Repository: repo, Package: fmt.Sprint("p", i),
					Workspace: "w", Task: store.Task{Type: store.Clone, Upstream: "blueprints.app.v1"}})
			}()
			go func() {
				defer wg.Done()
				_ = s.Delete(context.Background(), "ns", fmt.Sprintf("%s.q%d.w", repo, i))
			}()
		}
	}
	wg.Wait()
	if c.most["east"] != 1 || c.most["west"] != 1 || c.mostAll < 2 {
		t.Fatalf("writes at once: east %d, west %d, in all %d; want 1, 1 and 2", c.most["east"], c.most["west"], c.mostAll)
	}
}

// flaky is a client whose deletes fail as Porch v1.5.3 fails a repository
// ("ref file is empty", an internal error) while broken is true.
type flaky struct {
	client.Client
	broken bool
	err    error
}

func (c *flaky) Delete(context.Context, client.Object, ...client.DeleteOption) error {
	if c.broken {
		return c.err
	}
	return nil
}

// Issue 44 #5: a repository whose writes keep failing is recorded (since
// when, how many), named in the error from the second failure on with how
// long it has failed, and forgotten at the first write that succeeds; a
// refusal of the request (a conflict, a missing object) is no failure of
// the repository.
func TestFailingRepositoryIsNamed(t *testing.T) {
	refFile := apierrors.NewInternalError(fmt.Errorf("error getting ref: ref file is empty"))
	c := &flaky{broken: true, err: refFile}
	p := &Store{Client: c}
	now := time.Unix(1790000000, 0)
	p.writes.now = func() time.Time { return now }
	ctx := context.Background()
	if err := p.Delete(ctx, "ns", "deploy.app.packagevariant-1"); err == nil || strings.Contains(err.Error(), "has failed every write") {
		t.Fatalf("first failure: %v; want Porch's error alone", err)
	}
	now = now.Add(90 * time.Second)
	err := p.Delete(ctx, "ns", "deploy.app.packagevariant-2")
	want := "Porch's repository ns/deploy has failed every write for 1m30s (2 in a row; pvkit retries, backing off to 2m0s): Internal error occurred: error getting ref: ref file is empty"
	if err == nil || err.Error() != want {
		t.Fatalf("second failure: %v\nwant %s", err, want)
	}
	if f := p.FailingRepositories(); len(f) != 1 || f[0].Repository != "deploy" || f[0].Failures != 2 || !f[0].Since.Equal(time.Unix(1790000000, 0)) {
		t.Fatalf("failing: %+v", f)
	}
	if err := p.Delete(ctx, "ns", "other.app.packagevariant-1"); err == nil {
		t.Fatal("want a failure")
	}
	if f := p.FailingRepositories(); len(f) != 2 || f[0].Repository != "deploy" || f[1].Repository != "other" {
		t.Fatalf("failing, by name: %+v", f)
	}
	c.broken = false
	if err := p.Delete(ctx, "ns", "deploy.app.packagevariant-2"); err != nil {
		t.Fatal(err)
	}
	if f := p.FailingRepositories(); len(f) != 1 || f[0].Repository != "other" {
		t.Fatalf("after a write to deploy succeeded: %+v", f)
	}
	c.broken, c.err = true, apierrors.NewConflict(schema.GroupResource{Resource: "packagerevisions"}, "x", fmt.Errorf("the object has been modified"))
	for range 3 {
		if err := p.Delete(ctx, "ns", "third.app.x"); err == nil || strings.Contains(err.Error(), "has failed every write") {
			t.Fatalf("a conflict: %v", err)
		}
	}
	if f := p.FailingRepositories(); len(f) != 1 {
		t.Fatalf("conflicts counted as a failing repository: %+v", f)
	}
}
