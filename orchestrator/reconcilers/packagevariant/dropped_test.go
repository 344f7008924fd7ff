package packagevariant

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/provenance"
)

// resourceMerge is a store whose upgrade drops every file the new
// upstream dropped, changed locally or not, as Porch's resource-merge
// (kyaml's default resource handler) does: kptdev/porch#1165.
type resourceMerge struct{ *fakestore.Store }

func (s resourceMerge) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	rev, err := s.Store.CreateDraft(ctx, spec)
	if err != nil || spec.Task.Type != store.Upgrade {
		return rev, err
	}
	old, next := s.Files(ns, spec.Task.OldUpstream), s.Files(ns, spec.Task.NewUpstream)
	files := s.Files(ns, rev.Name)
	for name := range old {
		if _, ok := next[name]; !ok {
			delete(files, name)
		}
	}
	s.SetFiles(ns, rev.Name, files)
	return rev, nil
}

const (
	droppedService = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n"
	droppedNotes   = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  owner: nobody\n"
)

// droppingUpstream publishes blueprints/app v1 with three files the next
// revision drops (service.yaml, notes.yaml, README.md), makes app-prod of
// it and returns its draft.
func (e *env) droppingUpstream() store.Revision {
	e.t.Helper()
	v1 := blueprint(e.t)
	v1["service.yaml"], v1["notes.yaml"], v1["README.md"] = droppedService, droppedNotes, "# app\n"
	e.store.Publish(ns, "blueprints", "app", v1)
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	return e.downstream("app-prod")[0]
}

// Issue 55 #2: an upgrade of a published revision drops the files the new
// upstream dropped that nobody changed, and keeps, names and marks in the
// record the ones a person changed: on the memory store (whose merge kept
// every changed object), on a store that drops them as Porch does
// (kptdev/porch#1165), and when pvkit's first write of the upgrade draft
// failed (the next reconcile settles it). A person's edit pvkit wrote over
// afterwards (its record rewritten) is still the person's.
func TestUpgradeSettlesDroppedFiles(t *testing.T) {
	for _, c := range []struct {
		name            string
		porchMerge      bool
		failFirstWrite  bool
		pvkitWriteAfter bool
	}{
		{name: "memory"},
		{name: "resource-merge", porchMerge: true},
		{name: "first write failed", porchMerge: true, failFirstWrite: true},
		{name: "pvkit wrote after the person", pvkitWriteAfter: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := approvingEnv(t, false)
			if c.porchMerge {
				e.r.Store = resourceMerge{e.store}
			}
			draft := e.droppingUpstream()
			// A person changes notes.yaml in the draft.
			files := e.files(draft)
			files["notes.yaml"] = strings.Replace(files["notes.yaml"], "owner: nobody", "owner: web-team", 1)
			e.store.SetFiles(ns, draft.Name, files)
			if c.pvkitWriteAfter { // the injected ConfigMap changes: pvkit writes the draft again
				cm := endpoints("us-east1-endpoints", "db2")
				if err := e.client.Update(context.Background(), cm); err != nil {
					t.Fatal(err)
				}
				e.mustReconcile("app-prod")
				if got := e.files(draft); !strings.Contains(got["endpoints.yaml"], "db2") || !strings.Contains(got["notes.yaml"], "web-team") {
					t.Fatalf("pvkit's write: %v", got)
				}
				if rec, err := provenance.Read(e.files(draft)); err != nil || rec.Marked()["notes.yaml"] != provenance.OriginEdited {
					t.Fatalf("the record of pvkit's write does not mark the person's file: %v", err)
				}
			}
			if _, err := e.store.Approve(ns, draft.Name); err != nil {
				t.Fatal(err)
			}
			e.mustReconcile("app-prod")

			e.store.Publish(ns, "blueprints", "app", blueprint(t)) // v2 drops the three
			if c.failFirstWrite {
				e.store.Inject(fakestore.Fault{Op: fakestore.OpUpdateResources, Err: errors.New("remote not found")})
				if err := e.reconcile("app-prod"); err == nil || !strings.Contains(err.Error(), "remote not found") {
					t.Fatalf("the first write: %v", err)
				}
			}
			e.events()
			e.mustReconcile("app-prod")
			var up store.Revision
			for _, r := range e.downstream("app-prod") {
				if !r.Lifecycle.IsPublished() {
					up = r
				}
			}
			got := e.files(up)
			for _, gone := range []string{"service.yaml", "README.md"} {
				if _, ok := got[gone]; ok {
					t.Errorf("the upgrade kept %s, which the upstream dropped and nobody changed", gone)
				}
			}
			if !strings.Contains(got["notes.yaml"], "owner: web-team") {
				t.Fatalf("the upgrade lost the person's notes.yaml:\n%v", maps.Keys(got))
			}
			rec, err := provenance.Read(got)
			if err != nil || !rec.For(up.Name) || rec.Marked()["notes.yaml"] != provenance.OriginEdited || len(rec.Differences(got)) != 0 {
				t.Fatalf("the upgrade draft's record: %v for=%v marked=%v diffs=%v\n%s", err, rec.For(up.Name), rec.Marked(), rec.Differences(got), got[provenance.FileName])
			}
			want := "kept notes.yaml: the upstream blueprints.app.v2 dropped them, a person changed them (in " + draft.Name + "); delete them from " + up.Name + " if they should go"
			var kept string
			for _, dt := range e.get("app-prod").Status.DownstreamTargets {
				if dt.Kept != nil {
					kept = dt.Kept.Message
				}
			}
			if kept != want {
				t.Fatalf("the target's kept: %q\nwant %q", kept, want)
			}
			if ev := strings.Join(e.events(), "\n"); !strings.Contains(ev, "Warning UpgradeKeptFiles "+want) {
				t.Fatalf("events:\n%s", ev)
			}
			// Settled once: the next reconciles write nothing.
			writes := e.store.Writes()
			e.mustReconcile("app-prod")
			e.mustReconcile("app-prod")
			if n := e.store.Writes() - writes; n != 0 {
				t.Fatalf("%d writes after the upgrade was settled", n)
			}
		})
	}
}

// Issue 55 #2, a draft upgraded in place: the files the upstream dropped
// go when nobody changed them (the set-namespace the variant's pipeline
// adds is not a person's change), and one a person changed stalls the
// upgrade naming it, as any conflict does; nothing is written.
func TestInPlaceUpgradeSettlesDroppedFiles(t *testing.T) {
	for _, edit := range []string{"", "notes.yaml", "README.md"} {
		t.Run("edited "+edit, func(t *testing.T) {
			e := approvingEnv(t, false)
			e.store.SetRenderer(setNamespaceRenderer)
			draft := e.droppingUpstream()
			if !strings.Contains(e.files(draft)["service.yaml"], "namespace: prod") {
				t.Fatalf("not rendered: %s", e.files(draft)["service.yaml"])
			}
			if edit != "" {
				files := e.files(draft)
				files[edit] += "# a person's\n" + map[string]string{"notes.yaml": "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: more\n", "README.md": "more\n"}[edit]
				e.store.SetFiles(ns, draft.Name, files)
				e.mustReconcile("app-prod")
			}
			e.store.Publish(ns, "blueprints", "app", blueprint(t))
			writes := e.store.Writes()
			err := e.reconcile("app-prod")
			got := e.files(draft)
			if edit == "" {
				if err != nil {
					t.Fatal(err)
				}
				for _, gone := range []string{"service.yaml", "notes.yaml", "README.md"} {
					if _, ok := got[gone]; ok {
						t.Errorf("the upgrade in place kept %s", gone)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "cannot be upgraded in place") || !strings.Contains(err.Error(), edit+": ") {
				t.Fatalf("want an UpgradeConflict naming %s: %v", edit, err)
			}
			if n := e.store.Writes() - writes; n != 0 {
				t.Fatalf("a conflict wrote %d times", n)
			}
		})
	}
}

// setNamespaceRenderer renders as the variant's set-namespace would: every
// resource that is not local config gets namespace prod.
func setNamespaceRenderer(files map[string]string) (map[string]string, store.RenderStatus) {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return files, store.RenderStatus{Err: err.Error()}
	}
	for _, it := range items {
		if it.GetAnnotations()["config.kubernetes.io/local-config"] == "true" {
			continue
		}
		if err := it.SetNamespace("prod"); err != nil {
			return files, store.RenderStatus{Err: err.Error()}
		}
	}
	out, err := krm.ItemsToFiles(items, files)
	if err != nil {
		return files, store.RenderStatus{Err: err.Error()}
	}
	return out, store.RenderStatus{}
}
