package packagevariant

import (
	"context"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

func TestFindUpstream(t *testing.T) {
	e := newEnv(t)
	bp := blueprint(t)
	e.store.Publish(ns, "blueprints", "app", bp) // v1
	e.store.Publish(ns, "blueprints", "app", bp) // v2
	draft, err := e.store.CreateDraft(context.Background(), store.DraftSpec{Namespace: ns, Repository: "blueprints", Package: "app",
		Workspace: "next", Task: store.Task{Type: store.Edit, Source: "blueprints.app.v2"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		up   pv.Upstream
		want string // "" = not found
	}{
		{"latest published", pv.Upstream{Repo: "blueprints", Package: "app"}, "blueprints.app.v2"},
		{"pinned revision", pv.Upstream{Repo: "blueprints", Package: "app", Revision: 1}, "blueprints.app.v1"},
		{"workspace of a draft", pv.Upstream{Repo: "blueprints", Package: "app", WorkspaceName: "next"}, draft.Name},
		{"missing revision", pv.Upstream{Repo: "blueprints", Package: "app", Revision: 9}, ""},
		{"missing package", pv.Upstream{Repo: "blueprints", Package: "nope"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up := tt.up
			v := &pvapi.PackageVariant{}
			v.Namespace, v.Spec.Upstream = ns, &up
			got, err := e.r.findUpstream(context.Background(), v)
			if err != nil {
				t.Fatal(err)
			}
			if name := ""; got != nil {
				name = got.Name
				if name != tt.want {
					t.Fatalf("got %s, want %s", name, tt.want)
				}
			} else if tt.want != "" {
				t.Fatalf("got nothing, want %s", tt.want)
			}
		})
	}
}

func TestNextWorkspace(t *testing.T) {
	revs := []store.Revision{{Workspace: "v1"}, {Workspace: "packagevariant-3"}, {Workspace: "packagevariant-x"}, {Workspace: "packagevariant-12"}}
	if got := nextWorkspace(revs); got != "packagevariant-13" {
		t.Fatalf("got %s", got)
	}
	if got := nextWorkspace(nil); got != "packagevariant-1" {
		t.Fatalf("got %s", got)
	}
}

func TestLock(t *testing.T) {
	pub := store.Revision{Repository: "r", Package: "p", Workspace: "v3", Revision: 3, Lifecycle: store.Published}
	draft := store.Revision{Repository: "r", Package: "p", Workspace: "ws", Lifecycle: store.Draft}
	tests := []struct {
		lock  store.Lock
		rev   store.Revision
		match bool
		num   int
	}{
		{store.Lock{Repository: "r", Package: "p", Ref: "p/v3"}, pub, true, 3},
		{store.Lock{Repository: "r", Package: "p", Ref: "p/v2"}, pub, false, 2},
		{store.Lock{Repository: "other", Package: "p", Ref: "p/v3"}, pub, false, 3},
		{store.Lock{Repository: "r", Package: "p", Ref: "drafts/p/ws"}, draft, true, -1},
		{store.Lock{Repository: "r", Package: "p", Ref: "p/v3.0.0"}, pub, false, -1},
	}
	for _, tt := range tests {
		l := tt.lock
		if got := l.Matches(tt.rev); got != tt.match {
			t.Errorf("%+v matches %s = %v", l, tt.rev.Workspace, got)
		}
		if got := l.Revision(); got != tt.num {
			t.Errorf("%+v revision = %d, want %d", l, got, tt.num)
		}
	}
}

func TestMergeTargets(t *testing.T) {
	prev := []pvapi.DownstreamTarget{{Name: "b"}, {Name: "a"}}
	prev[1].RenderStatus.Err = "old render error"
	got := mergeTargets(prev, []target{{name: "a"}, {name: "c", render: &store.RenderStatus{Err: "bad"}}})
	if len(got) != 2 || got[0].Name != "a" || got[0].RenderStatus.Err != "old render error" || got[1].Name != "c" || got[1].RenderStatus.Err != "bad" {
		t.Fatalf("got %+v", got)
	}
}
