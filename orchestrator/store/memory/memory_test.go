package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
)

func TestSuite(t *testing.T) {
	storetest.Run(t, func(*testing.T) storetest.Harness { return New() })
}

// recorder persists nothing; it records calls and fails with err when set.
type recorder struct {
	calls []string
	err   error
}

func (r *recorder) note(s string) error { r.calls = append(r.calls, s); return r.err }
func (r *recorder) Create(rev store.Revision, _ map[string]string) error {
	return r.note("create " + rev.Name)
}
func (r *recorder) WriteFiles(rev store.Revision, _ map[string]string) error {
	return r.note("files " + rev.Name)
}
func (r *recorder) Update(old, rev store.Revision) error {
	return r.note("update " + rev.Name + " " + string(old.Lifecycle) + "->" + string(rev.Lifecycle))
}
func (r *recorder) Delete(rev store.Revision) error { return r.note("delete " + rev.Name) }
func (r *recorder) Publish(old, rev store.Revision, _ map[string]string) error {
	return r.note("publish " + rev.Name + " " + string(old.Lifecycle) + "->" + rev.Workspace)
}

// Every change reaches the persister, in order, with the lifecycle it
// moves from.
func TestPersisterSeesEveryChange(t *testing.T) {
	ctx := context.Background()
	p := &recorder{}
	s := NewPersistent(p)
	s.AddRepository("default", "deploy")
	up, err := s.PublishFiles("default", "blueprints", "app", storetest.Blueprint)
	if err != nil {
		t.Fatal(err)
	}
	rev, err := s.CreateDraft(ctx, store.DraftSpec{Namespace: "default", Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateResources(ctx, "default", rev.Name, store.Resources{Files: storetest.Blueprint}); err != nil {
		t.Fatal(err)
	}
	rev.Lifecycle, rev.ResourceVersion = store.Proposed, ""
	if err := s.Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Approve("default", rev.Name); err != nil {
		t.Fatal(err)
	}
	rev.Lifecycle = store.DeletionProposed
	if err := s.Update(ctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "default", rev.Name); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"publish blueprints.app.v1 ->v1",
		"create deploy.p.w",
		"files deploy.p.w",
		"update deploy.p.w Draft->Proposed",
		"publish deploy.p.w Proposed->w",
		"update deploy.p.w Published->DeletionProposed",
		"delete deploy.p.w",
	}
	if !cmp.Equal(p.calls, want) {
		t.Fatalf("persister calls:\n%s", cmp.Diff(want, p.calls))
	}
}

// A persister that fails leaves memory as it was, and the error reaches
// the caller.
func TestPersisterFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	p := &recorder{}
	s := NewPersistent(p)
	s.AddRepository("default", "deploy")
	up, _ := s.PublishFiles("default", "blueprints", "app", storetest.Blueprint)
	rev, _ := s.CreateDraft(ctx, store.DraftSpec{Namespace: "default", Repository: "deploy", Package: "p", Workspace: "w",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	before, _ := s.GetResources(ctx, "default", rev.Name)
	p.err = errors.New("disk full")
	check := func(what string, err error) {
		t.Helper()
		if err == nil || err.Error() != "disk full" {
			t.Fatalf("%s: err = %v, want the persister's", what, err)
		}
	}
	_, err := s.PublishFiles("default", "blueprints", "app", storetest.Blueprint)
	check("publish", err)
	_, err = s.CreateDraft(ctx, store.DraftSpec{Namespace: "default", Repository: "deploy", Package: "p", Workspace: "w2",
		Task: store.Task{Type: store.Clone, Upstream: up.Name}})
	check("create", err)
	_, err = s.UpdateResources(ctx, "default", rev.Name, store.Resources{Files: map[string]string{"a.yaml": "a: 1\n"}})
	check("update resources", err)
	moved := rev
	moved.Lifecycle, moved.Labels = store.Proposed, map[string]string{"x": "y"}
	check("update", s.Update(ctx, moved))
	_, err = s.Approve("default", rev.Name)
	check("approve", err)
	check("delete", s.Delete(ctx, "default", rev.Name))

	after, _ := s.GetResources(ctx, "default", rev.Name)
	revs, _ := s.ListRevisions(ctx, store.PackageKey{Namespace: "default", Repository: "deploy", Package: "p"})
	ups, _ := s.ListRevisions(ctx, store.PackageKey{Namespace: "default", Repository: "blueprints", Package: "app"})
	if !cmp.Equal(before, after) || len(revs) != 1 || revs[0].Lifecycle != store.Draft || revs[0].Labels != nil || len(ups) != 1 {
		t.Fatalf("a failed persist changed memory: %+v %+v %+v", after, revs, ups)
	}
}

// Restore loads persisted revisions without persisting them again.
func TestRestore(t *testing.T) {
	p := &recorder{}
	s := NewPersistent(p)
	s.Restore(store.Revision{Namespace: "default", Name: "blueprints.app.v1", Repository: "blueprints", Package: "app",
		Workspace: "v1", Revision: 1, Lifecycle: store.Published}, storetest.Blueprint)
	s.Restore(store.Revision{Namespace: "default", Name: "deploy.p.w", Repository: "deploy", Package: "p", Workspace: "w",
		Lifecycle: store.Draft, Owners: []store.OwnerRef{{UID: "u"}}}, storetest.Blueprint)
	owned, _ := s.ListOwned(context.Background(), "default", "u")
	next, err := s.PublishFiles("default", "blueprints", "app", storetest.Blueprint)
	if err != nil || next.Revision != 2 || len(owned) != 1 || len(p.calls) != 1 {
		t.Fatalf("restored state: next %+v %v, owned %+v, persisted %v", next, err, owned, p.calls)
	}
}
