package settled

import (
	"context"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
)

// CountWrites counts every call that may change a revision or its files
// made under its context, whatever it answers, and nothing else: not the
// reads, not a write under another context (rule listing-reused).
func TestCountWrites(t *testing.T) {
	mem := memory.New()
	mem.AddRepository("ns", "deploy")
	up := mem.Publish("ns", "blueprints", "app", map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"})
	s := New(mem, nil)
	ctx, writes := CountWrites(context.Background())
	want := int64(0)
	check := func(what string, counted bool) {
		t.Helper()
		if counted {
			want++
		}
		if got := writes(); got != want {
			t.Fatalf("after %s: %d writes counted, want %d", what, got, want)
		}
	}
	sp := spec()
	sp.Task = store.Task{Type: store.Clone, Upstream: up.Name}
	draft, _, err := s.Create(ctx, sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("a create", true)
	if _, err := s.ListOwned(ctx, "ns", "u"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListRevisions(ctx, draft.Key()); err != nil {
		t.Fatal(err)
	}
	res, err := s.GetResources(ctx, "ns", draft.Name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ctx, "ns", draft.Name); err != nil {
		t.Fatal(err)
	}
	check("four reads", false)
	if _, _, err := s.UpdateResourcesRendered(ctx, "ns", draft.Name, res); err != nil {
		t.Fatal(err)
	}
	check("a write of the files", true)
	if _, err := s.ApproveRevision(ctx, "ns", draft.Name); err == nil {
		t.Fatal("a Draft approved")
	}
	check("an approval refused", true)
	if draft, err = s.Read(ctx, "ns", draft.Name); err != nil {
		t.Fatal(err)
	}
	draft.Labels = map[string]string{"env": "staging"}
	if err := s.Update(context.Background(), draft); err != nil {
		t.Fatal(err)
	}
	check("an update under another context", false)
	if err := s.Update(ctx, draft); err == nil {
		t.Fatal("an update from a stale version succeeded")
	}
	check("an update refused", true)
	if err := s.Delete(ctx, "ns", draft.Name); err != nil {
		t.Fatal(err)
	}
	check("a delete", true)
	if _, err := s.CreateDraft(ctx, sp); err != nil {
		t.Fatal(err)
	}
	check("CreateDraft", true)
}

// A listing that takes back the owner's ownerless draft writes, and
// counts: the listing it returns is not what the store held before.
func TestListingThatTakesBackADraftCounts(t *testing.T) {
	now := t0
	inner := &scripted{}
	s := made(t, inner, &now)
	inner.read = &store.Revision{Name: d, Namespace: "ns", Repository: "deploy", Package: "app", Lifecycle: store.Draft}
	ctx, writes := CountWrites(context.Background())
	if _, err := s.ListOwned(ctx, "ns", "u"); err != nil {
		t.Fatal(err)
	}
	if len(inner.updated) != 1 {
		t.Fatalf("the ownerless draft was not taken back: %d updates", len(inner.updated))
	}
	if n := writes(); n != 1 {
		t.Fatalf("a listing that took a draft back counted %d writes, want 1", n)
	}
}
