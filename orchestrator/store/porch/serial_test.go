package porch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
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
