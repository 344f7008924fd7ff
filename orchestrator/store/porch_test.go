package store

import (
	"context"
	"errors"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// fakeIndexer registers indexes on a fake client builder.
type fakeIndexer struct{ b *fake.ClientBuilder }

func (f fakeIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	f.b.WithIndex(obj, field, extract)
	return nil
}

func porchStore(t *testing.T, objs ...client.Object) (*Porch, client.Client) {
	scheme := runtime.NewScheme()
	if err := porchapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...)
	if err := SetupIndexes(context.Background(), fakeIndexer{b}); err != nil {
		t.Fatal(err)
	}
	c := b.WithInterceptorFuncs(interceptor.Funcs{
		// The Porch server names a new revision after its repository, package and workspace.
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			if pr, ok := o.(*porchapi.PackageRevision); ok && pr.Name == "" {
				pr.Name = RevisionName(pr.Spec.RepositoryName, pr.Spec.PackageName, pr.Spec.WorkspaceName)
			}
			return c.Create(ctx, o, opts...)
		},
	}).Build()
	return &Porch{Client: c}, c
}

func pr(name, repo, pkg, ws string, rev int, life porchapi.PackageRevisionLifecycle, owner string) *porchapi.PackageRevision {
	p := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: porchapi.PackageRevisionSpec{RepositoryName: repo, PackageName: pkg, WorkspaceName: ws, Revision: rev, Lifecycle: life}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "PackageVariant", Name: "pv", UID: types.UID("uid-" + owner)}}
	}
	return p
}

func TestPorchStore(t *testing.T) {
	up := pr("blueprints.app.v1", "blueprints", "app", "v1", 1, porchapi.PackageRevisionLifecyclePublished, "")
	down := pr("deploy.app.packagevariant-1", "deploy", "app", "packagevariant-1", 1, porchapi.PackageRevisionLifecyclePublished, "a")
	down.Status.UpstreamLock = &porchapi.UpstreamLock{Git: &porchapi.GitLock{Repo: "https://example.com/blueprints.git", Directory: "app", Ref: "app/v1"}}
	p, c := porchStore(t, up, down, pr("deploy.other.x", "deploy", "other", "x", 0, porchapi.PackageRevisionLifecycleDraft, "a"))
	ctx := context.Background()

	revs, err := p.ListRevisions(ctx, PackageKey{Namespace: "ns", Repository: "deploy", Package: "app"})
	if err != nil || len(revs) != 1 || revs[0].Name != down.Name || !revs[0].OwnedBy("uid-a") {
		t.Fatalf("ListRevisions = %+v, %v", revs, err)
	}
	if l := revs[0].Lock; l == nil || l.Repository != "" || l.Package != "app" || !l.Matches(fromPorch(up)) {
		t.Fatalf("lock = %+v", l)
	}
	owned, err := p.ListOwned(ctx, "ns", "uid-a")
	if err != nil || len(owned) != 2 {
		t.Fatalf("ListOwned = %+v, %v", owned, err)
	}

	draft, err := p.CreateDraft(ctx, DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "packagevariant-2",
		Owners: []OwnerRef{{APIVersion: "v", Kind: "PackageVariant", Name: "pv", UID: "uid-a", Controller: true}},
		Task:   Task{Type: Upgrade, OldUpstream: up.Name, NewUpstream: "blueprints.app.v2", Local: down.Name}})
	if err != nil || draft.Name != "deploy.app.packagevariant-2" || draft.Lifecycle != Draft {
		t.Fatalf("CreateDraft = %+v, %v", draft, err)
	}
	var created porchapi.PackageRevision
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: draft.Name}, &created); err != nil {
		t.Fatal(err)
	}
	u := created.Spec.Tasks[0].Upgrade
	if created.Spec.Tasks[0].Type != porchapi.TaskTypeUpgrade || u.OldUpstream.Name != up.Name || u.LocalPackageRevisionRef.Name != down.Name ||
		u.Strategy != porchapi.ResourceMerge || *created.OwnerReferences[0].Controller != true {
		t.Fatalf("created %+v", created.Spec.Tasks[0])
	}
	_, err = p.CreateDraft(ctx, DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "packagevariant-2", Task: Task{Type: Edit, Source: down.Name}})
	if !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := p.GetResources(ctx, "ns", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetResources(nope) = %v", err)
	}
	draft.Lifecycle, draft.Labels = Proposed, map[string]string{"a": "b"}
	if err := p.Update(ctx, draft); err != nil {
		t.Fatal(err)
	}
	if err := p.Update(ctx, draft); !errors.Is(err, ErrConflict) {
		t.Fatalf("update with a stale version: %v", err)
	}
	if err := p.Delete(ctx, "ns", draft.Name); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(ctx, "ns", draft.Name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
