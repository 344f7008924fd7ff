package fakestore

import (
	"context"
	"errors"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
)

// The fake is the engine seen through call counting and faults: the same
// semantics.
func TestSuite(t *testing.T) {
	storetest.Run(t, func(*testing.T) storetest.Harness { return New() })
}

// A create that times out after succeeding: the draft exists and the caller
// sees an error (the case of rule idempotent-drafts).
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

// A fault without After fails the call before it runs and changes nothing.
func TestFaultBefore(t *testing.T) {
	s := New()
	s.AddRepository("default", "deploy")
	up := s.Publish("default", "blueprints", "app", storetest.Blueprint)
	down := errors.New("porch is down")
	s.Inject(Fault{Op: OpCreate, Err: down, Times: 2})
	spec := store.DraftSpec{Namespace: "default", Repository: "deploy", Package: "p", Workspace: "w", Task: store.Task{Type: store.Clone, Upstream: up.Name}}
	for i := 0; i < 2; i++ {
		if _, err := s.CreateDraft(context.Background(), spec); !errors.Is(err, down) {
			t.Fatalf("call %d: err = %v", i, err)
		}
	}
	if revs := s.All("default"); len(revs) != 1 {
		t.Fatalf("a failed create must create nothing: %+v", revs)
	}
	if _, err := s.CreateDraft(context.Background(), spec); err != nil {
		t.Fatalf("the third call has no fault left: %v", err)
	}
	if c := s.Calls(); c[OpCreate] != 3 {
		t.Fatalf("calls = %v", c)
	}
}
