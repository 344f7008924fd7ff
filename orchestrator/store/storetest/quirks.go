package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	"github.com/pvkit/pvkit/pkg/variant"
)

// Porch v1.5.3's failure modes (rule porch-failure-modes), each injected
// over the store under test as Porch shows it, and settled by
// settled.Store over it: the same answers whatever the store.

// quirky injects Porch's failure modes into a store.
type quirky struct {
	store.Store
	// landsButFails: the next files write lands, answered with an error
	// (Porch's "remote not found" after its push); failsUnlanded: the
	// next is answered with an error and does not land.
	landsButFails, failsUnlanded bool
	// unlisted: the owner's listing does not show these drafts yet.
	unlisted map[string]bool
	// loseOwner: the next create records the draft without its owner
	// and is answered with an error.
	loseOwner bool
	// empty: these drafts hold no files.
	empty map[string]bool
}

var errPorch = errors.New("Internal error occurred: remote not found")

func (q *quirky) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	switch {
	case q.failsUnlanded:
		q.failsUnlanded = false
		return store.RenderStatus{}, store.Resources{}, errPorch
	case q.landsButFails:
		q.landsButFails = false
		rs, _, err := q.Store.UpdateResourcesRendered(ctx, namespace, name, res)
		if err != nil {
			return rs, store.Resources{}, err
		}
		return rs, store.Resources{}, errPorch
	}
	return q.Store.UpdateResourcesRendered(ctx, namespace, name, res)
}

func (q *quirky) ListOwned(ctx context.Context, namespace, uid string) ([]store.Revision, error) {
	revs, err := q.Store.ListOwned(ctx, namespace, uid)
	var out []store.Revision
	for _, r := range revs {
		if !q.unlisted[r.Name] {
			out = append(out, r)
		}
	}
	return out, err
}

func (q *quirky) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	rev, err := q.Store.CreateDraft(ctx, spec)
	if err != nil || !q.loseOwner {
		return rev, err
	}
	q.loseOwner = false
	rev, err = q.Store.Read(ctx, spec.Namespace, rev.Name)
	if err != nil {
		return rev, err
	}
	rev.Owners = nil
	if err := q.Store.Update(ctx, rev); err != nil {
		return rev, err
	}
	return store.Revision{}, errors.New("Internal error occurred: the server was unable to return a response in the time allotted")
}

func (q *quirky) GetResources(ctx context.Context, namespace, name string) (store.Resources, error) {
	if q.empty[name] {
		return store.Resources{}, store.ErrNoResources
	}
	return q.Store.GetResources(ctx, namespace, name)
}

// testQuirks: a write that lands despite an error is known landed, at the
// draft's digest; one that does not is known by what was sent; a created
// draft the listing does not show yet is listed, read directly; a create
// Porch records without owner is taken back; an empty draft is one its
// owner made.
func testQuirks(t *testing.T, h Harness) {
	ctx := context.Background()
	h.AddRepository(ns, "deploy")
	up := h.Publish(ns, "blueprints", "app", Blueprint)
	q := &quirky{Store: h, unlisted: map[string]bool{}, empty: map[string]bool{}}
	s := settled.New(q, nil)
	owner := store.OwnerRef{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "PackageVariant", Name: "pv", UID: "uid-1", Controller: true}
	spec := store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod", Workspace: "packagevariant-1",
		Owners: []store.OwnerRef{owner}, Labels: map[string]string{"env": "prod"}, Task: store.Task{Type: store.Clone, Upstream: up.Name}}

	q.loseOwner = true
	rev, reclaimed, err := s.Create(ctx, spec, nil)
	if err != nil || !reclaimed || rev.Name != "deploy.app-prod.packagevariant-1" {
		t.Fatalf("a create recorded without owner: %+v, reclaimed %v, %v", rev, reclaimed, err)
	}
	if got, err := h.Read(ctx, ns, rev.Name); err != nil || !got.OwnedBy("uid-1") || got.Labels["env"] != "prod" {
		t.Fatalf("taken back: %+v %v, want the create's owner and labels", got, err)
	}

	q.unlisted[rev.Name] = true
	owned, err := s.ListOwned(ctx, ns, "uid-1")
	if err != nil || len(owned) != 1 || owned[0].Name != rev.Name {
		t.Fatalf("a created draft the listing does not show: %+v %v", owned, err)
	}
	delete(q.unlisted, rev.Name)

	res, err := s.GetResources(ctx, ns, rev.Name)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for k, v := range res.Files {
		files[k] = v
	}
	files["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	q.failsUnlanded = true
	_, _, err = s.UpdateResourcesRendered(ctx, ns, rev.Name, store.Resources{Files: files, ResourceVersion: res.ResourceVersion, Origin: res.Origin})
	var we *settled.WriteError
	if !errors.As(err, &we) || we.Landed || we.Digest != variant.Fingerprint(files) {
		t.Fatalf("a write that did not land, answered with an error: %+v", err)
	}
	q.landsButFails = true
	_, _, err = s.UpdateResourcesRendered(ctx, ns, rev.Name, store.Resources{Files: files, ResourceVersion: res.ResourceVersion, Origin: res.Origin})
	now, rerr := h.GetResources(ctx, ns, rev.Name)
	if !errors.As(err, &we) || !we.Landed || rerr != nil || we.Digest != variant.Fingerprint(now.Files) || now.Files["extra.yaml"] == "" {
		t.Fatalf("a write that landed, answered with an error: %+v (read back: %v)", err, rerr)
	}

	q.empty[rev.Name] = true
	if _, err := s.GetResources(ctx, ns, rev.Name); !errors.Is(err, store.ErrNoResources) || !s.Made("uid-1", rev.Name) {
		t.Fatalf("an empty draft: %v, its owner's %v", err, s.Made("uid-1", rev.Name))
	}
}
