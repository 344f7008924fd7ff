package porch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

func porchStore(t *testing.T, objs ...client.Object) (*Store, client.Client) {
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
				pr.Name = store.RevisionName(pr.Spec.RepositoryName, pr.Spec.PackageName, pr.Spec.WorkspaceName)
			}
			return c.Create(ctx, o, opts...)
		},
	}).Build()
	return &Store{Client: c}, c
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

	revs, err := p.ListRevisions(ctx, store.PackageKey{Namespace: "ns", Repository: "deploy", Package: "app"})
	if err != nil || len(revs) != 1 || revs[0].Name != down.Name || !revs[0].OwnedBy("uid-a") {
		t.Fatalf("ListRevisions = %+v, %v", revs, err)
	}
	if l := revs[0].Lock; l == nil || l.Repository != "" || l.Package != "app" || !l.Matches(FromAPI(up)) {
		t.Fatalf("lock = %+v", l)
	}
	owned, err := p.ListOwned(ctx, "ns", "uid-a")
	if err != nil || len(owned) != 2 {
		t.Fatalf("ListOwned = %+v, %v", owned, err)
	}

	draft, err := p.CreateDraft(ctx, store.DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "packagevariant-2",
		Owners: []store.OwnerRef{{APIVersion: "v", Kind: "PackageVariant", Name: "pv", UID: "uid-a", Controller: true}},
		Task:   store.Task{Type: store.Upgrade, OldUpstream: up.Name, NewUpstream: "blueprints.app.v2", Local: down.Name}})
	if err != nil || draft.Name != "deploy.app.packagevariant-2" || draft.Lifecycle != store.Draft {
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
	_, err = p.CreateDraft(ctx, store.DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "packagevariant-2", Task: store.Task{Type: store.Edit, Source: down.Name}})
	if !errors.Is(err, store.ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	if _, err := p.GetResources(ctx, "ns", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetResources(nope) = %v", err)
	}
	draft.Lifecycle, draft.Labels = store.Proposed, map[string]string{"a": "b"}
	if err := p.Update(ctx, draft); err != nil {
		t.Fatal(err)
	}
	if err := p.Update(ctx, draft); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("update with a stale version: %v", err)
	}
	if err := p.Delete(ctx, "ns", draft.Name); err != nil {
		t.Fatal(err)
	}
	if err := p.Delete(ctx, "ns", draft.Name); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// Porch's render status comes back whole on success; a failed render is
// Porch's InternalError, reported as ErrRenderFailed with its text.
func TestPorchStoreRenderStatus(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := porchapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	prr := &porchapi.PackageRevisionResources{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "deploy.app.ws"},
		Spec: porchapi.PackageRevisionResourcesSpec{Resources: map[string]string{"Kptfile": "a"}}}
	const porchRenderError = "\nError occurred rendering package in kpt function pipeline.\nPackage has NOT been pushed to remote.\nPlease fix package locally (modify until 'kpt fn render' succeeds) and retry.\nDetails: fn.render: pipeline.mutators[0] failed with exit code 1"
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(prr).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			r := o.(*porchapi.PackageRevisionResources)
			if r.Spec.Resources["Kptfile"] == "bad" {
				return apierrors.NewInternalError(errors.New(porchRenderError))
			}
			if err := c.Update(ctx, o, opts...); err != nil {
				return err
			}
			r.Status.RenderStatus = porchapi.RenderStatus{Result: porchapi.ResultList{ObjectMeta: metav1.ObjectMeta{Name: "fnresults"}, ExitCode: 0, Items: []*porchapi.Result{
				{Image: "gcr.io/kpt-fn/set-namespace:v0.4.1", Results: []porchapi.ResultItem{{Message: "namespace updated", Severity: "info",
					Field: &porchapi.Field{Path: "metadata.namespace"}}}}}}}
			return nil
		},
	}).Build()
	p := &Store{Client: c}
	ctx := context.Background()
	rs, err := p.UpdateResources(ctx, "ns", prr.Name, store.Resources{Files: map[string]string{"Kptfile": "good"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Result.Items) != 1 || rs.Result.Items[0].Image != "gcr.io/kpt-fn/set-namespace:v0.4.1" ||
		rs.Result.Items[0].Results[0].Message != "namespace updated" || rs.Result.Items[0].Results[0].Field.Path != "metadata.namespace" {
		t.Fatalf("render status = %+v", rs)
	}
	// Porch's list has metadata; a variant's status has no schema for it,
	// and the API server warned "unknown field
	// status.downstreamTargets[0].renderStatus.result.metadata.name" on
	// every status write that carried it.
	if b, err := json.Marshal(rs); err != nil || strings.Contains(string(b), `"metadata"`) {
		t.Fatalf("the render status carries Porch's metadata: %s %v", b, err)
	}
	rs, err = p.UpdateResources(ctx, "ns", prr.Name, store.Resources{Files: map[string]string{"Kptfile": "bad"}})
	if !errors.Is(err, store.ErrRenderFailed) || !strings.Contains(rs.Err, "pipeline.mutators[0] failed with exit code 1") {
		t.Fatalf("a failed render: status %+v, error %v", rs, err)
	}
	// Any other internal error is not a render failure.
	c2 := fake.NewClientBuilder().WithScheme(scheme).WithObjects(prr.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
			return apierrors.NewInternalError(errors.New("etcd is down"))
		},
	}).Build()
	if _, err := (&Store{Client: c2}).UpdateResources(ctx, "ns", prr.Name, store.Resources{Files: map[string]string{}}); err == nil || errors.Is(err, store.ErrRenderFailed) {
		t.Fatalf("an internal error that is not a render: %v", err)
	}
}

// A create whose render fails (a clone, an upgrade) is Porch's
// InternalError with the renderer's own words, not renderError's: it is a
// render failure too, and it does not count against the repository
// (Porch's repository is not failing).
func TestPorchStoreCreateRenderFailure(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := porchapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const createRenderError = `fn.render: pkg /:
	pkg.render:
	pipeline.run: must run with ` + "`--allow-exec`" + ` option to allow running function binaries`
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return apierrors.NewInternalError(errors.New(createRenderError))
		},
	}).Build()
	p := &Store{Client: c}
	spec := store.DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "packagevariant-2",
		Task: store.Task{Type: store.Clone, Upstream: "blueprints.app.v1"}}
	for i := 0; i < 3; i++ {
		_, err := p.CreateDraft(context.Background(), spec)
		if !errors.Is(err, store.ErrRenderFailed) || !strings.Contains(err.Error(), "fn.render: pkg /:") || strings.Contains(err.Error(), "has failed every write") {
			t.Fatalf("create %d, its render failed: %v", i+1, err)
		}
	}
	if f := p.FailingRepositories(); len(f) != 0 {
		t.Fatalf("a render failure counted against the repository: %+v", f)
	}
}

// Writing back what GetResources read is one request (no second read), and
// a revision that changed in between is still a conflict: Porch checks the
// resourceVersion it is sent.
func TestPorchStoreUpdateWithoutRereading(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := porchapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	prr := &porchapi.PackageRevisionResources{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "deploy.app.ws"},
		Spec: porchapi.PackageRevisionResourcesSpec{PackageName: "app", RepositoryName: "deploy", Resources: map[string]string{"Kptfile": "a"}}}
	calls := map[string]int{}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(prr).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			calls["get"]++
			return c.Get(ctx, key, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			calls["update"]++
			if r := o.(*porchapi.PackageRevisionResources); r.Spec.PackageName != "app" || r.Spec.RepositoryName != "deploy" {
				t.Errorf("the update lost the object's spec: %+v", r.Spec)
			}
			return c.Update(ctx, o, opts...)
		},
	}).Build()
	p := &Store{Client: c}
	ctx := context.Background()
	res, err := p.GetResources(ctx, "ns", prr.Name)
	if err != nil {
		t.Fatal(err)
	}
	stale := res
	res.Files = map[string]string{"Kptfile": "b"}
	if _, err := p.UpdateResources(ctx, "ns", prr.Name, res); err != nil {
		t.Fatal(err)
	}
	if calls["get"] != 1 || calls["update"] != 1 {
		t.Fatalf("a read and its write-back made %v requests, want 1 get and 1 update", calls)
	}
	stale.Files = map[string]string{"Kptfile": "c"}
	if _, err := p.UpdateResources(ctx, "ns", prr.Name, stale); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("writing back a stale read: %v, want a conflict", err)
	}
	// Without what was read (another caller), the store reads first, as before.
	if _, err := p.UpdateResources(ctx, "ns", prr.Name, store.Resources{Files: map[string]string{"Kptfile": "d"}}); err != nil || calls["get"] != 2 {
		t.Fatalf("an update without an origin: %v, %v requests", err, calls)
	}
	// The caller's copy is not modified.
	if o := res.Origin.(*porchapi.PackageRevisionResources); o.Spec.Resources["Kptfile"] != "a" {
		t.Fatalf("the origin was modified: %v", o.Spec.Resources)
	}
}

// Locks: a numbered published revision is its tag, a draft its branch, and
// a published revision -1 (Porch's branch placeholder, or a tag Porch could
// not number) matches the branch or the tag it stands for.
func TestLockMatches(t *testing.T) {
	v2 := store.Revision{Repository: "blueprints", Package: "app", Workspace: "v2", Revision: 2, Lifecycle: store.Published}
	main := store.Revision{Repository: "blueprints", Package: "app", Workspace: "main", Revision: -1, Lifecycle: store.Published, Placeholder: true}
	semver := store.Revision{Repository: "blueprints", Package: "app", Workspace: "v2.0.0", Revision: -1, Lifecycle: store.Published}
	draft := store.Revision{Repository: "blueprints", Package: "app", Workspace: "ws", Lifecycle: store.Draft}
	for _, tt := range []struct {
		lock store.Lock
		rev  store.Revision
		want bool
	}{
		{store.Lock{Package: "app", Ref: "app/v2"}, v2, true},
		{store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v2"}, v2, true},
		{store.Lock{Repository: "other", Package: "app", Ref: "app/v2"}, v2, false},
		{store.Lock{Package: "app", Ref: "app/v1"}, v2, false},
		{store.Lock{Package: "app", Ref: "main"}, main, true},
		{store.Lock{Package: "app", Ref: "main"}, v2, false},
		{store.Lock{Package: "app", Ref: "app/v2"}, main, false},
		{store.Lock{Package: "app", Ref: "app/v2.0.0"}, semver, true},
		{store.Lock{Package: "other", Ref: "main"}, main, false},
		{store.Lock{Package: "app", Ref: "drafts/app/ws"}, draft, true},
		{store.Lock{Package: "app", Ref: "ws"}, draft, false},
	} {
		if got := tt.lock.Matches(tt.rev); got != tt.want {
			t.Errorf("lock %+v matches %s/%s (revision %d): %v, want %v", tt.lock, tt.rev.Package, tt.rev.Workspace, tt.rev.Revision, got, tt.want)
		}
	}
	if l := store.LockFor(main); l.Ref != "main" {
		t.Errorf("LockFor(the main placeholder) = %+v, want ref main", l)
	}
	// A tag Porch could not number is locked to the tag, as Porch locks it
	// (the short name of the git ref: it was v2.0.0, which git lacks).
	if l := store.LockFor(semver); l.Ref != "app/v2.0.0" {
		t.Errorf("LockFor(a tag Porch could not number) = %+v, want ref app/v2.0.0", l)
	}
}

// Lists come back sorted by name whatever order the cache lists in (an
// informer's cache lists in its map's order).
func TestPorchStoreListsSorted(t *testing.T) {
	objs := []client.Object{
		pr("blueprints.app.v3", "blueprints", "app", "v3", 3, porchapi.PackageRevisionLifecyclePublished, "a"),
		pr("blueprints.app.v1", "blueprints", "app", "v1", 1, porchapi.PackageRevisionLifecyclePublished, "a"),
		pr("blueprints.app.v2", "blueprints", "app", "v2", 2, porchapi.PackageRevisionLifecyclePublished, "a"),
	}
	p, c := porchStore(t, objs...)
	// The cache's order: reversed from what the fake client gives.
	p.Client = interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if l, ok := list.(*porchapi.PackageRevisionList); ok {
				for i, j := 0, len(l.Items)-1; i < j; i, j = i+1, j-1 {
					l.Items[i], l.Items[j] = l.Items[j], l.Items[i]
				}
			}
			return nil
		},
	})
	ctx := context.Background()
	revs, err := p.ListRevisions(ctx, store.PackageKey{Namespace: "ns", Repository: "blueprints", Package: "app"})
	owned, err2 := p.ListOwned(ctx, "ns", "uid-a")
	for _, got := range [][]store.Revision{revs, owned} {
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
		}
		if err != nil || err2 != nil || strings.Join(names, " ") != "blueprints.app.v1 blueprints.app.v2 blueprints.app.v3" {
			t.Errorf("listed %v (%v, %v), want v1 v2 v3 in order", names, err, err2)
		}
	}
}

// Issue 20 #2: one conversion each way, and they agree: a revision through
// Porch's API and back is the same revision, but for the lock's
// repository, which Porch records as a git URL and pvkit does not read
// back (locks are compared by package and ref).
func TestPorchConversionRoundTrip(t *testing.T) {
	in := store.Revision{Namespace: "ns", Name: "deploy.app.packagevariant-1", Repository: "deploy", Package: "app", Workspace: "packagevariant-1",
		Revision: 3, Lifecycle: store.Published, Owners: []store.OwnerRef{{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "PackageVariant", Name: "pv", UID: "u", Controller: true}},
		Labels: map[string]string{"env": "prod"}, Annotations: map[string]string{"a": "b"}, Lock: &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v1"},
		ResourceVersion: "7", Created: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)}
	pr := ToAPI(in)
	out := FromAPI(&pr)
	want := in
	want.Lock = &store.Lock{Package: "app", Ref: "app/v1"}
	if d := cmp.Diff(want, out); d != "" {
		t.Fatalf("round trip (-want +got):\n%s", d)
	}
}

// An update that asks for no version, refused because the cache's version
// is stale (Porch's words: an Internal error saying the object has been
// modified), is made once more with the version read past the cache.
func TestPorchStoreUpdateReadsPastAStaleCache(t *testing.T) {
	p, c := porchStore(t, pr("deploy.app.ws", "deploy", "app", "ws", 0, porchapi.PackageRevisionLifecycleDraft, "a"))
	ctx := context.Background()
	var cur porchapi.PackageRevision
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "deploy.app.ws"}, &cur); err != nil {
		t.Fatal(err)
	}
	stale := cur.ResourceVersion
	cur.Labels = map[string]string{"moved": "on"}
	if err := c.Update(ctx, &cur); err != nil { // Porch moves it on; the cache does not see it
		t.Fatal(err)
	}
	updates := 0
	p.Reader = c
	p.Client = interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, key, o, opts...); err != nil {
				return err
			}
			o.SetResourceVersion(stale) // the cache's copy
			return nil
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			updates++
			if err := c.Update(ctx, o, opts...); apierrors.IsConflict(err) { // Porch's words, as seen in e2e-porch
				return apierrors.NewInternalError(fmt.Errorf("Operation cannot be fulfilled on packagerevisions.porch.kpt.dev %q: the object has been modified; please apply your changes to the latest version and try again", o.GetName()))
			} else if err != nil {
				return err
			}
			return nil
		},
	})
	rev := store.Revision{Namespace: "ns", Name: "deploy.app.ws", Lifecycle: store.Draft, Annotations: map[string]string{"a": "b"}}
	if err := p.Update(ctx, rev); err != nil || updates != 2 {
		t.Fatalf("update: %v after %d tries, want success on the second", err, updates)
	}
	// With a version asked for, a conflict is the caller's to handle.
	rev.ResourceVersion = stale
	if err := p.Update(ctx, rev); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("update at a stale version asked for: %v, want ErrConflict", err)
	}
}

// Porch v1.5.3 refuses a workspace its repository has with an Internal
// error ("workspaceNames must be unique"), not AlreadyExists: the store
// maps both to ErrAlreadyExists, and nothing else to it.
func TestPorchWorkspaceTakenIsAlreadyExists(t *testing.T) {
	taken := apierrors.NewInternalError(errors.New("package revision workspaceNames must be unique; package revision with name app in repo r-010 with workspaceName packagevariant-2 already exists"))
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{taken, true},
		{apierrors.NewAlreadyExists(schema.GroupResource{Group: "porch.kpt.dev", Resource: "packagerevisions"}, "x"), true},
		{apierrors.NewInternalError(errors.New("failed to close package revision draft")), false},
	} {
		if got := errors.Is(wrap(tt.err), store.ErrAlreadyExists); got != tt.want {
			t.Errorf("wrap(%v) is ErrAlreadyExists: %v, want %v", tt.err, got, tt.want)
		}
	}
}

// Issue 42 #8: the readiness gates of a draft just created are set with
// client-go's RetryOnConflict (a conflict is retried on a fresh read); an
// update the aggregation layer answers 503 counts when a read shows it
// landed (CI run 7: Porch applied one after the controller's next write),
// and is an error, naming the gates, when none does.
func TestPendingGatesRetriesAndWaitsForALostAnswer(t *testing.T) {
	defer func(w, p time.Duration) { landedWait, landedPoll = w, p }(landedWait, landedPoll)
	landedWait, landedPoll = 200*time.Millisecond, 10*time.Millisecond
	unavailable := apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	for _, tc := range []struct {
		name    string
		answer  func(n int) (apply bool, err error) // the n-th update (from 1)
		updates int
		wantErr string
	}{
		{"a conflict, then taken", func(n int) (bool, error) {
			if n == 1 {
				return false, apierrors.NewConflict(schema.GroupResource{Group: "porch.kpt.dev", Resource: "packagerevisions"}, "deploy.app.ws", errors.New("moved on"))
			}
			return true, nil
		}, 2, ""},
		{"503, applied all the same", func(int) (bool, error) { return true, unavailable }, 1, ""},
		{"503, never applied, no resources to write", func(int) (bool, error) { return false, unavailable }, 1,
			"could not set its readiness gates [example.com/gate]: the server is currently unable to handle the request; writing them into its Kptfile instead"},
		{"503, never applied, written into the Kptfile", func(int) (bool, error) { return false, unavailable }, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, c := porchStore(t, pr("blueprints.app.v1", "blueprints", "app", "v1", 1, porchapi.PackageRevisionLifecyclePublished, ""))
			updates := 0
			withResources := strings.HasSuffix(tc.name, "written into the Kptfile")
			var kptfileWritten string
			p.Client = interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
					if err := c.Create(ctx, o, opts...); err != nil || !withResources {
						return err
					}
					// The draft's resources, as Porch serves them for a clone.
					return c.Create(ctx, &porchapi.PackageRevisionResources{ObjectMeta: metav1.ObjectMeta{Namespace: o.GetNamespace(), Name: o.GetName()},
						Spec: porchapi.PackageRevisionResourcesSpec{Resources: map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n"}}})
				},
				Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
					if prr, ok := o.(*porchapi.PackageRevisionResources); ok {
						kptfileWritten = prr.Spec.Resources["Kptfile"]
					}
					if _, ok := o.(*porchapi.PackageRevision); !ok {
						return c.Update(ctx, o, opts...)
					}
					updates++
					apply, err := tc.answer(updates)
					if apply {
						if uerr := c.Update(ctx, o, opts...); uerr != nil {
							return uerr
						}
					}
					return err
				},
			})
			_, err := p.CreateDraft(context.Background(), store.DraftSpec{Namespace: "ns", Repository: "deploy", Package: "app", Workspace: "ws",
				Task: store.Task{Type: store.Clone, Upstream: "blueprints.app.v1"}, ReadinessGates: []string{"example.com/gate"}})
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) || updates != tc.updates {
				t.Fatalf("%v after %d updates; want %q after %d", err, updates, tc.wantErr, tc.updates)
			}
			if tc.wantErr != "" {
				return
			}
			if withResources {
				if !strings.Contains(kptfileWritten, "conditionType: example.com/gate") || !strings.Contains(kptfileWritten, "reason: Pending") {
					t.Fatalf("the gate was not written into the Kptfile:\n%s", kptfileWritten)
				}
				return
			}
			var got porchapi.PackageRevision
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "deploy.app.ws"}, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Spec.ReadinessGates) != 1 || got.Spec.ReadinessGates[0].ConditionType != "example.com/gate" {
				t.Fatalf("the gates: %+v", got.Spec.ReadinessGates)
			}
		})
	}
}

// Issue 60 #2: who approved a revision is Porch's status.publishedBy (the
// approval request's user), both ways.
func TestPublishedByIsPorchs(t *testing.T) {
	pr := &porchapi.PackageRevision{}
	pr.Name, pr.Spec.Lifecycle, pr.Spec.Revision = "d.app.v1", porchapi.PackageRevisionLifecyclePublished, 1
	pr.Status.PublishedBy = "system:serviceaccount:porch-system:approver"
	r := FromAPI(pr)
	if r.PublishedBy != pr.Status.PublishedBy {
		t.Fatalf("FromAPI: PublishedBy %q", r.PublishedBy)
	}
	if back := ToAPI(r); back.Status.PublishedBy != pr.Status.PublishedBy {
		t.Fatalf("ToAPI: publishedBy %q", back.Status.PublishedBy)
	}
}

// Porch failing a read (its listing of a repository timing out on a
// cached clone it cannot read) names the repository; NotFound stays the
// store's ErrNotFound, unwrapped; a listing's error names the package.
func TestPorchStoreReadNamesTheRepository(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := porchapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			if key.Name == "edge-00.app.gone" {
				return apierrors.NewNotFound(porchapi.Resource("packagerevisions"), key.Name)
			}
			return apierrors.NewInternalError(errors.New("context deadline exceeded: exceeded 10s seconds trying to list package revisions"))
		},
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("the cache is not started")
		},
	}).Build()
	p := &Store{Client: c}
	ctx := context.Background()
	_, err := p.Read(ctx, "ns", "edge-00.app.packagevariant-1")
	if err == nil || !strings.HasPrefix(err.Error(), "reading ns/edge-00.app.packagevariant-1 from Porch (repository ns/edge-00): ") || !strings.Contains(err.Error(), "trying to list package revisions") {
		t.Fatalf("a failing read: %v", err)
	}
	if _, err := p.Read(ctx, "ns", "edge-00.app.gone"); !errors.Is(err, store.ErrNotFound) || strings.Contains(err.Error(), "from Porch (repository") {
		t.Fatalf("not found: %v", err)
	}
	if _, err := p.ListRevisions(ctx, store.PackageKey{Namespace: "ns", Repository: "edge-00", Package: "app"}); err == nil ||
		err.Error() != "listing the revisions of ns/edge-00/app (repository ns/edge-00): the cache is not started" {
		t.Fatalf("a failing listing: %v", err)
	}
}
