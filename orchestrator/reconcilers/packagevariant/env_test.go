package packagevariant

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit/kittest"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	sigsyaml "sigs.k8s.io/yaml"
)

const ns = "default"

var teamGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Team"}

var testNow = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// env is a reconciler on the in-memory store and a fake cluster.
type env struct {
	t       testing.TB
	store   *fakestore.Store
	cluster *embedded.Cluster
	client  client.Client
	r       *Reconciler
	rec     *record.FakeRecorder
	mu      sync.Mutex
	writes  int // writes to the cluster
	// conflicts is how many status patches to come fail with a conflict
	// (a reconcile that read a stale cache).
	conflicts kittest.Conflicts
}

// blueprint is examples/app: package context, a pipeline, and two
// injection points (a ConfigMap, a Team).
func blueprint(t testing.TB) map[string]string {
	return fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
}

func newEnv(t testing.TB, objs ...client.Object) *env {
	scheme := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := pvapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := pvsapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(teamGVK, apimeta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), apimeta.RESTScopeNamespace)
	mapper.Add(pvapi.GroupVersion.WithKind("PackageVariant"), apimeta.RESTScopeNamespace)
	e := &env{t: t, store: fakestore.New()}
	counted := func() { e.mu.Lock(); e.writes++; e.mu.Unlock() }
	// The embedded cluster pvctl runs (issue 42 #6): every write is held to
	// the CRDs' schemas and CEL rules, UIDs and generations are an API
	// server's.
	cluster := embedded.New(embedded.Options{Scheme: scheme, Objects: objs, Indexes: []embedded.Index{
		{Object: &pvapi.PackageVariant{}, Field: indexUpstream, Extract: upstreamKeys},
		{Object: &pvapi.PackageVariant{}, Field: indexInjector, Extract: injectorNames},
		{Object: &pvapi.PackageVariant{}, Field: indexHealth, Extract: healthObjects}}})
	e.cluster = cluster
	e.client = interceptor.NewClient(cluster, interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			counted()
			return c.Patch(ctx, o, p, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			counted()
			return c.Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := e.conflicts.Take(pvapi.GroupVersion.WithResource("packagevariants").GroupResource(), o); err != nil {
				return err
			}
			counted()
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	e.store.AddRepository(ns, "deploy")
	e.rec = record.NewFakeRecorder(1000)
	e.r = &Reconciler{Client: e.client, Store: e.store, Clock: kit.Fixed(testNow), Recorder: e.rec, Kinds: teamKinds}
	return e
}

// events drains the Events recorded since the last call ("Type Reason message").
func (e *env) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			out = append(out, ev)
		default:
			return out
		}
	}
}

// stalls reconciles a variant that must stall: a terminal error, not retried.
func (e *env) stalls(name string) {
	e.t.Helper()
	if err := e.reconcile(name); !errors.Is(err, reconcile.TerminalError(nil)) {
		e.t.Fatalf("reconcile %s: want a terminal (stalling) error, got %v", name, err)
	}
}

// variant creates a PackageVariant from YAML (uid set).
func (e *env) variant(text string) *pvapi.PackageVariant {
	v := &pvapi.PackageVariant{}
	if err := sigsyaml.Unmarshal([]byte(text), v); err != nil {
		e.t.Fatal(err)
	}
	v.Namespace = ns
	if err := e.client.Create(context.Background(), v); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// stored stores a PackageVariant from YAML as it is, past the CRD's
// schema (as one stored before the schema refused it): what pvkit's own
// validation says of a variant the API server would not take.
func (e *env) stored(text string) {
	v := &pvapi.PackageVariant{}
	if err := sigsyaml.Unmarshal([]byte(text), v); err != nil {
		e.t.Fatal(err)
	}
	v.Namespace, v.UID, v.Generation = ns, embedded.UID("PackageVariant", ns, v.Name), 1
	if err := e.cluster.Seed(context.Background(), v); err != nil {
		e.t.Fatal(err)
	}
}

// reconcile reconciles a variant once.
func (e *env) reconcile(name string) error {
	_, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	return err
}

func (e *env) mustReconcile(name string) {
	e.t.Helper()
	if err := e.reconcile(name); err != nil {
		e.t.Fatalf("reconcile %s: %v", name, err)
	}
}

func (e *env) get(name string) *pvapi.PackageVariant {
	e.t.Helper()
	v := &pvapi.PackageVariant{}
	if err := e.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, v); err != nil {
		e.t.Fatal(err)
	}
	return v
}

// edit changes a variant's spec (and bumps its generation, as the apiserver does).
func (e *env) edit(name string, change func(*pvapi.PackageVariant)) {
	e.t.Helper()
	v := e.get(name)
	change(v)
	v.Generation++
	if err := e.client.Update(context.Background(), v); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) condition(name, typ string) metav1.Condition {
	e.t.Helper()
	c := apimeta.FindStatusCondition(e.get(name).Status.Conditions, typ)
	if c == nil {
		e.t.Fatalf("%s has no %s condition: %+v", name, typ, e.get(name).Status.Conditions)
	}
	return *c
}

// downstream lists the revisions of deploy/<pkg>.
func (e *env) downstream(pkg string) []store.Revision {
	e.t.Helper()
	revs, err := e.store.ListRevisions(context.Background(), store.PackageKey{Namespace: ns, Repository: "deploy", Package: pkg})
	if err != nil {
		e.t.Fatal(err)
	}
	return revs
}

func (e *env) files(rev store.Revision) map[string]string { return e.store.Files(ns, rev.Name) }

func (e *env) totalWrites() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.writes + e.store.Writes()
}

// endpoints is the in-cluster regional endpoints ConfigMap.
func endpoints(name, db string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"db": db}}
}

func team(name, lead string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"lead": lead}}}
	u.SetGroupVersionKind(teamGVK)
	u.SetName(name)
	u.SetNamespace(ns)
	return u
}

func contains(t *testing.T, files map[string]string, file, text string) {
	t.Helper()
	if !strings.Contains(files[file], text) {
		t.Errorf("%s lacks %q:\n%s", file, text, files[file])
	}
}

const appVariant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-prod
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: app-prod}
  labels: {env: prod}
  packageContext:
    data: {env: prod}
  pipeline:
    mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      name: set-ns
      configMap: {namespace: prod}
  injectors:
  - name: us-east1-endpoints
  - kind: Team
    name: web
`

func clientKey(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// teamKinds are the default readable kinds and the examples' Team kind, as
// an operator allows it (Team is not a default: issue 29 #5).
var teamKinds = func() kit.ReadableKinds {
	k, err := kit.ParseReadableKinds(append(append([]string(nil), kit.DefaultReadableKinds...), "Team.example.com"))
	if err != nil {
		panic(err)
	}
	return k
}()

// uid is the UID the embedded cluster gives the variant named name.
func uid(name string) string { return string(embedded.UID("PackageVariant", ns, name)) }
