package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
)

func TestSuite(t *testing.T) {
	storetest.Run(t, func(*testing.T) storetest.Harness { return New() })
}

// A create that times out after succeeding: the draft exists and the caller
// sees an error (the case F5 is about).
func TestFaultAfterCreate(t *testing.T) {
	s := New()
	s.AddRepository("default", "deploy")
	up := s.Publish("default", "blueprints", "app", storetest.Blueprint)
	timeout := errors.New("context deadline exceeded")
	s.Inject(Fault{Op: OpCreate, Err: timeout, After: true})
	_, err := s.CreateDraft(context.Background(), store.DraftSpec{Namespace: "default", Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if !errors.Is(err, timeout) {
		t.Fatalf("err = %v", err)
	}
	revs, _ := s.ListRevisions(context.Background(), store.PackageKey{Namespace: "default", Repository: "deploy", Package: "p"})
	if len(revs) != 1 {
		t.Fatalf("the draft must exist despite the error: %+v", revs)
	}
	if c := s.Calls(); c[OpCreate] != 1 || c[OpList] != 1 || s.Writes() != 1 {
		t.Fatalf("calls = %v", c)
	}
}
