package packagevariant

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pvkit/pvkit/orchestrator/store"
)

// rendezvous holds each CreateDraft until a second one for the same package
// arrives (or 200 ms pass), so that two creators that are not kept apart
// meet there, with the same workspace in hand.
type rendezvous struct {
	store.Store
	mu      sync.Mutex
	waiting map[string]chan struct{}
}

func (s *rendezvous) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	key := spec.Repository + "/" + spec.Package
	s.mu.Lock()
	if ch, ok := s.waiting[key]; ok {
		delete(s.waiting, key)
		close(ch)
		s.mu.Unlock()
	} else {
		ch := make(chan struct{})
		s.waiting[key] = ch
		s.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond):
			s.mu.Lock()
			if s.waiting[key] == ch {
				delete(s.waiting, key)
			}
			s.mu.Unlock()
		}
	}
	return s.Store.CreateDraft(ctx, spec)
}

// Several workers: variants reconcile at once, and two variants writing the
// same downstream package take turns (the package lock), so neither picks
// the workspace the other is creating. Every first reconcile succeeds and
// every variant ends with exactly one draft of its own.
func TestConcurrentWorkers(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.us-east1:5432"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.r.Store = &rendezvous{Store: e.store, waiting: map[string]chan struct{}{}}
	const n = 24
	for i := 0; i < n; i++ {
		// Pairs share a downstream package: app-0 and app-1 write deploy/pkg-0, ...
		text := strings.Replace(appVariant, "name: app-prod", fmt.Sprintf("name: app-%d", i), 1)
		text = strings.Replace(text, "package: app-prod", fmt.Sprintf("package: pkg-%d", i/2), 1)
		e.variant(text)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = e.reconcile(fmt.Sprintf("app-%d", i)) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("app-%d: %v", i, err)
		}
	}
	for p := 0; p < n/2; p++ {
		revs := e.downstream(fmt.Sprintf("pkg-%d", p))
		owners := map[string]int{}
		for _, r := range revs {
			for _, o := range r.Owners {
				owners[o.Name]++
			}
		}
		if len(revs) != 2 || owners[fmt.Sprintf("app-%d", 2*p)] != 1 || owners[fmt.Sprintf("app-%d", 2*p+1)] != 1 {
			t.Errorf("pkg-%d: %d revisions, owners %v; want one draft per variant", p, len(revs), owners)
		}
	}
	if e.r.pkgs.Len() != 0 {
		t.Errorf("%d package locks left held", e.r.pkgs.Len())
	}
}
