package local

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	sigsyaml "sigs.k8s.io/yaml"
)

const planVariant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-east
  namespace: fleet
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: east, package: app}
  packageContext:
    data: {region: us-east1}
  injectors:
  - kind: ConfigMap
    name: endpoints
`

const planSet = `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: app
  namespace: fleet
spec:
  upstream: {repo: blueprints, package: app}
  targets:
  - repositorySelector:
      matchLabels: {tier: edge}
    template:
      downstream: {package: edge-app}
`

// planCluster is a cluster for plans: the controller's reconcilers have
// converged app-east on it (Porch served by the fake store, everything
// else by a fake API server); every write to it from then on is counted.
type planCluster struct {
	view   client.Client
	porch  *fakestore.Store
	writes *int
}

func newPlanCluster(t *testing.T) planCluster {
	t.Helper()
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	v := &pvapi.PackageVariant{}
	if err := sigsyaml.UnmarshalStrict([]byte(planVariant), v); err != nil {
		t.Fatal(err)
	}
	v.UID = "uid-app-east"
	repo := func(name string, labels map[string]string) *porchconfig.Repository {
		return &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "fleet", Labels: labels},
			Spec: porchconfig.RepositorySpec{Type: porchconfig.RepositoryTypeGit, Deployment: name != "blueprints"}}
	}
	writes := 0
	counting := interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			writes++
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			writes++
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			writes++
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			writes++
			return c.Delete(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	}
	mapper := apimeta.NewDefaultRESTMapper(scheme.PrioritizedVersionsAllGroups()) // a real cluster's discovery
	for gvk := range scheme.AllKnownTypes() {
		mapper.Add(gvk, apimeta.RESTScopeNamespace)
	}
	base := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithStatusSubresource(&pvapi.PackageVariant{}).WithInterceptorFuncs(counting).
		WithObjects(v, repo("blueprints", nil), repo("east", map[string]string{"tier": "core"}), repo("edge-1", map[string]string{"tier": "edge"}),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "endpoints", Namespace: "fleet"}, Data: map[string]string{"db": "db.east:5432"}}).Build()
	s := fakestore.New()
	for _, r := range []string{"east", "edge-1"} {
		s.AddRepository("fleet", r)
	}
	s.SetDeployment("fleet", "blueprints", false)
	s.Publish("fleet", "blueprints", "app", storetest.Blueprint)
	view := s.Client(base)
	pv, _ := reconcilers.New(reconcilers.Options{Client: view, Store: s})
	for i := 0; i < 3; i++ {
		if _, err := pv.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "app-east"}}); err != nil {
			t.Fatal(err)
		}
	}
	writes = 0
	return planCluster{view: view, porch: s, writes: &writes}
}

func (pc planCluster) plan(t *testing.T, files ...string) (*Report, error) {
	t.Helper()
	dir := t.TempDir()
	for i, f := range files {
		if err := os.WriteFile(filepath.Join(dir, strings.Repeat("x", i+1)+".yaml"), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	porchWrites := pc.porch.Writes()
	rep, err := PlanCluster(context.Background(), ClusterPlanOptions{Client: pc.view, Namespace: "fleet", Files: []string{dir}, MaxChildren: 10})
	if *pc.writes != 0 || pc.porch.Writes() != porchWrites {
		t.Fatalf("the plan wrote to the cluster: %d API writes, %d Porch writes", *pc.writes, pc.porch.Writes()-porchWrites)
	}
	return rep, err
}

// Issue 32 #4: pvctl plan --kubeconfig -f runs the controller's reconcilers
// on what the cluster holds with the files applied, and writes nothing.
// The files the controller converged: nothing would change. A changed
// variant: its draft's update. A new set: its child and its clone. The
// cluster's other variants stay (kubectl apply, not the whole state).
func TestPlanCluster(t *testing.T) {
	pc := newPlanCluster(t)
	rep, err := pc.plan(t, planVariant)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 0 || len(rep.Held) != 0 || !rep.AllReady() {
		t.Fatalf("the converged variant, planned again: changes %q, held %q, objects %+v", rep.Changes, rep.Held, rep.Objects)
	}

	rep, err = pc.plan(t, strings.Replace(planVariant, "region: us-east1", "region: us-east2", 1))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Changes, []string{"would update the resources of east.app.packagevariant-1"}) {
		t.Errorf("a changed context: changes %q", rep.Changes)
	}

	rep, err = pc.plan(t, planSet) // app-east is not in the files: it stays
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"would create PackageVariant app-edge-1-edge-app", "would create draft edge-1.edge-app.packagevariant-1 (clone of blueprints.app.v1)"}
	for _, w := range want {
		if !slices.ContainsFunc(rep.Changes, func(c string) bool { return strings.HasPrefix(c, w) }) {
			t.Errorf("a new set: missing %q in %q", w, rep.Changes)
		}
	}
	names := []string{}
	for _, o := range rep.Objects {
		names = append(names, o.Kind+"/"+o.Name)
	}
	if !slices.Contains(names, "PackageVariant/app-east") || !slices.Contains(names, "PackageVariantSet/app") {
		t.Errorf("objects %q: want the cluster's app-east kept beside the new set", names)
	}
	if !rep.DryRun {
		t.Error("a cluster plan is a dry run")
	}

	// Errors name the file and the cluster.
	if _, err := pc.plan(t, "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: bad}\nspec: {upstream: {repo: 1}}\n"); err == nil || !IsInputError(err) {
		t.Errorf("a bad file: %v", err)
	}
	broken := refusingRepositories{pc.view}
	_, err = PlanCluster(context.Background(), ClusterPlanOptions{Client: broken, Namespace: "fleet", Files: []string{writeTemp(t, planVariant)}})
	if err == nil || err.Error() != "reading namespace fleet of the cluster: listing Repositories: permission denied" {
		t.Errorf("a cluster that refuses a list: %v", err)
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// refusingRepositories is a cluster whose RBAC refuses listing Repositories.
type refusingRepositories struct{ client.Client }

func (r refusingRepositories) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	if _, ok := l.(*porchconfig.RepositoryList); ok {
		return os.ErrPermission
	}
	return r.Client.List(ctx, l, opts...)
}
