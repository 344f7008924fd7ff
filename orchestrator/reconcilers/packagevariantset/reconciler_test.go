package packagevariantset

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit/kittest"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

type env struct {
	t        *testing.T
	client   client.Client
	r        *Reconciler
	rec      *record.FakeRecorder
	failRepo error
	mu       sync.Mutex
	writes   int
	failTeam error
	onCreate func() // called on each create, outside the lock
	// conflicts is how many status patches to come fail with a conflict.
	conflicts kittest.Conflicts
}

func repo(name string, labels map[string]string) *porchconfig.Repository {
	return &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
}

func team(name, repo string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(teamGVK)
	u.SetName(name)
	u.SetNamespace(ns)
	u.SetLabels(map[string]string{"repo": repo})
	return u
}

func newEnv(t *testing.T, objs ...client.Object) *env {
	scheme := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{pvapi.AddToScheme, pvsapi.AddToScheme, porchconfig.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(teamGVK, apimeta.RESTScopeNamespace)
	for _, g := range []schema.GroupVersionKind{pvapi.GroupVersion.WithKind("PackageVariant"), pvsapi.GroupVersion.WithKind("PackageVariantSet"),
		porchconfig.GroupVersion.WithKind("Repository")} {
		mapper.Add(g, apimeta.RESTScopeNamespace)
	}
	e := &env{t: t}
	count := func() { e.mu.Lock(); e.writes++; e.mu.Unlock() }
	// The embedded cluster pvctl runs (issue 42 #6): every write is held to
	// the CRDs' schemas and CEL rules, as an API server holds it.
	cluster := embedded.New(embedded.Options{Scheme: scheme, Objects: objs})
	e.client = interceptor.NewClient(cluster, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			count()
			if e.onCreate != nil {
				e.onCreate()
			}
			return c.Create(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			count()
			return c.Patch(ctx, o, p, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			count()
			return c.Delete(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := e.conflicts.Take(pvsapi.GroupVersion.WithResource("packagevariantsets").GroupResource(), o); err != nil {
				return err
			}
			count()
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			if u, ok := l.(*unstructured.UnstructuredList); ok && u.GroupVersionKind().Kind == "TeamList" && e.failTeam != nil {
				return e.failTeam
			}
			if _, ok := l.(*porchconfig.RepositoryList); ok && e.failRepo != nil {
				return e.failRepo
			}
			return c.List(ctx, l, opts...)
		},
	})
	st := fakestore.New()
	st.Publish(ns, "blueprints", "app", storetest.Blueprint)
	e.rec = record.NewFakeRecorder(1000)
	e.r = &Reconciler{Client: e.client, Store: st, Clock: kit.Fixed(testNow), Recorder: e.rec, Kinds: teamKinds}
	return e
}

func (e *env) set(text string) {
	s := &pvsapi.PackageVariantSet{}
	if err := sigsyaml.Unmarshal([]byte(text), s); err != nil {
		e.t.Fatal(err)
	}
	s.Namespace = ns
	if err := e.client.Create(context.Background(), s); err != nil {
		e.t.Fatal(err)
	}
}

// setObject is a set from its YAML, as stored: newEnv's objects are
// stored past the CRD's schema (as one stored before the schema refused
// it), for what pvkit's own validation says of a set the API server would
// not take.
func setObject(t *testing.T, text string) *pvsapi.PackageVariantSet {
	s := &pvsapi.PackageVariantSet{}
	if err := sigsyaml.Unmarshal([]byte(text), s); err != nil {
		t.Fatal(err)
	}
	s.Namespace, s.UID, s.Generation = ns, "set-uid", 1
	return s
}

// reconcile reconciles the set once; it must succeed or stall (a partial
// outcome that is not retried succeeds too).
func (e *env) reconcile() {
	e.t.Helper()
	if err := e.try(); err != nil && !errors.Is(err, reconcile.TerminalError(nil)) {
		e.t.Fatal(err)
	}
}

func (e *env) try() error {
	_, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app"}})
	return err
}

// events drains the Events recorded since the last call, as "Type Reason".
func (e *env) events() []string {
	var out []string
	for {
		select {
		case ev := <-e.rec.Events:
			f := strings.SplitN(ev, " ", 3)
			out = append(out, f[0]+" "+f[1])
		default:
			return out
		}
	}
}

// children lists the set's PackageVariants that are not being deleted (a
// deleted child keeps its finalizer until its own controller is done).
func (e *env) children() map[string]pvapi.PackageVariant {
	var l pvapi.PackageVariantList
	if err := e.client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		e.t.Fatal(err)
	}
	out := map[string]pvapi.PackageVariant{}
	for _, c := range l.Items {
		if c.DeletionTimestamp.IsZero() {
			out[c.Name] = c
		}
	}
	return out
}

func (e *env) getSet() *pvsapi.PackageVariantSet {
	s := &pvsapi.PackageVariantSet{}
	if err := e.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) editSet(change func(*pvsapi.PackageVariantSet)) {
	s := e.getSet()
	change(s)
	s.Generation++
	if err := e.client.Update(context.Background(), s); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) total() int { e.mu.Lock(); defer e.mu.Unlock(); return e.writes }

const fanout = `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: app
spec:
  upstream: {repo: blueprints, package: app, revision: 1}
  targets:
  - repositories:
    - name: cluster-01
  - repositorySelector:
      matchLabels: {env: prod}
    template:
      labelExprs:
      - key: region
        valueExpr: repository.labels.region
  - objectSelector:
      apiVersion: example.com/v1
      kind: Team
    template:
      downstream:
        repoExpr: target.labels.repo
        packageExpr: "'app-' + target.name"
`

func world() []client.Object {
	return []client.Object{
		repo("cluster-01", nil), repo("cluster-02", map[string]string{"env": "prod", "region": "us"}),
		repo("cluster-03", map[string]string{"env": "prod", "region": "eu"}), team("payments", "cluster-01"),
	}
}

func TestFanOutAndSteadyState(t *testing.T) {
	e := newEnv(t, world()...)
	e.set(fanout)
	e.reconcile()
	kids := e.children()
	for _, name := range []string{"app-cluster-01-app", "app-cluster-02-app", "app-cluster-03-app", "app-cluster-01-app-payments"} {
		c, ok := kids[name]
		if !ok {
			t.Fatalf("missing child %s: %v", name, kids)
		}
		if uid := e.getSet().UID; c.Labels["config.porch.kpt.dev/packagevariantset"] != string(uid) || len(c.OwnerReferences) != 1 || c.OwnerReferences[0].UID != uid || len(c.Finalizers) != 1 {
			t.Fatalf("child %s metadata: %+v", name, c.ObjectMeta)
		}
	}
	if kids["app-cluster-03-app"].Spec.Labels["region"] != "eu" || len(kids) != 4 {
		t.Fatalf("children: %v", kids)
	}
	if c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Ready"); c == nil || c.Reason != pvsapi.ReasonReconciled {
		t.Fatalf("Ready = %+v", c)
	}
	before := e.total()
	e.reconcile()
	e.reconcile()
	if w := e.total() - before; w != 0 {
		t.Fatalf("a steady set made %d writes", w)
	}
}

func TestTargetAddedAndRemoved(t *testing.T) {
	e := newEnv(t, world()...)
	e.set(fanout)
	e.reconcile()
	e.editSet(func(s *pvsapi.PackageVariantSet) {
		s.Spec.Targets[0].Repositories = append(s.Spec.Targets[0].Repositories, s.Spec.Targets[0].Repositories[0])
		s.Spec.Targets[0].Repositories[1].Name = "cluster-09"
	})
	before := e.total()
	e.reconcile()
	if _, ok := e.children()["app-cluster-09-app"]; !ok {
		t.Fatal("the added target has no child")
	}
	if w := e.total() - before; w != 2 { // the create and the status
		t.Fatalf("adding one target made %d writes, want 2 (create, status)", w)
	}
	e.editSet(func(s *pvsapi.PackageVariantSet) { s.Spec.Targets = s.Spec.Targets[1:] })
	e.reconcile()
	kids := e.children()
	if _, ok := kids["app-cluster-01-app"]; ok {
		t.Fatalf("the removed target's child is still there: %v", kids)
	}
	if len(kids) != 3 {
		t.Fatalf("children: %v", kids)
	}
}

// rule no-removal-on-partial: a selector whose LIST fails deletes no child; the others still reconcile.
func TestSelectorListFailingDeletesNothing(t *testing.T) {
	e := newEnv(t, world()...)
	e.set(fanout)
	e.reconcile()
	e.failTeam = errors.New("teams.example.com is forbidden")
	e.editSet(func(s *pvsapi.PackageVariantSet) { s.Spec.Targets[0].Repositories[0].Name = "cluster-04" })
	if err := e.try(); err == nil || errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("a kind that cannot be listed may heal: want a retried error, got %v", err)
	}
	kids := e.children()
	if _, ok := kids["app-cluster-01-app-payments"]; !ok {
		t.Fatalf("the Team child was deleted although Teams could not be listed: %v", kids)
	}
	if _, ok := kids["app-cluster-01-app"]; !ok {
		t.Fatalf("a child whose target is gone was deleted while a target failed: %v", kids)
	}
	if _, ok := kids["app-cluster-04-app"]; !ok {
		t.Fatalf("the other targets must still be reconciled: %v", kids)
	}
	set := e.getSet()
	c := apimeta.FindStatusCondition(set.Status.Conditions, "Ready")
	if c == nil || c.Reason != pvsapi.ReasonPartiallyReconciled || len(set.Status.TargetFailures) != 1 ||
		!strings.Contains(set.Status.TargetFailures[0].Message, "forbidden") {
		t.Fatalf("status = %+v", set.Status)
	}
	e.failTeam = nil
	e.reconcile()
	if _, ok := e.children()["app-cluster-01-app"]; ok {
		t.Fatal("once every target is computed, the orphan child must go")
	}
}

func TestInvalidSetAndMissingUpstream(t *testing.T) {
	e := newEnv(t, world()...)
	e.set(strings.Replace(fanout, "revision: 1}", "revision: 7}", 1))
	e.reconcile()
	c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Stalled")
	if c == nil || c.Reason != pvsapi.ReasonUpstreamNotFound || len(e.children()) != 0 {
		t.Fatalf("Stalled = %+v, children %v", c, e.children())
	}
	// A set without targets: the CRD's schema refuses it (the embedded
	// cluster is the API server here); one stored before the schema did
	// stalls with pvkit's own message.
	s := e.getSet()
	s.Spec.Targets = nil
	if err := e.client.Update(context.Background(), s); err == nil || !strings.Contains(err.Error(), "spec.targets: Required value") {
		t.Fatalf("a set without targets taken: %v", err)
	}
	bad := setObject(t, strings.Replace(fanout, "revision: 1}", "revision: 7}", 1))
	bad.Spec.Targets = nil
	e = newEnv(t, append(world(), bad)...)
	e.reconcile()
	c = apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Stalled")
	if c == nil || c.Reason != pvsapi.ReasonValidationError || c.Message != "`spec.targets` must list at least one target" {
		t.Fatalf("Stalled = %+v", c)
	}
}

// The inputs that make the pvs-expand function exit 1 (a missing map key, a
// selected object with no Repository, two entries rendering one downstream)
// leave the controller partially successful: every other child is written,
// each failure is in status.targetFailures with its target.
func TestTargetFailuresArePartialSuccess(t *testing.T) {
	e := newEnv(t, append(world(), repo("cluster-04", map[string]string{"env": "prod"}), team("ledger", "cluster-09"))...)
	e.set(strings.Replace(fanout, "    - name: cluster-01\n", "    - name: cluster-01\n    - name: cluster-01\n", 1))
	e.reconcile()
	kids := e.children()
	for _, name := range []string{"app-cluster-02-app", "app-cluster-03-app", "app-cluster-01-app-payments"} {
		if _, ok := kids[name]; !ok {
			t.Errorf("child %s was not written although its target was computed: %v", name, kids)
		}
	}
	if len(kids) != 3 {
		t.Errorf("children = %v, want only the three computed", kids)
	}
	set := e.getSet()
	want := map[string]string{
		"`spec.targets[0].repositories[0]` (repository \"cluster-01\", package \"app\")":    "renders the same downstream (repository \"cluster-01\", package \"app\") as `spec.targets[0].repositories[1]` (repository \"cluster-01\", package \"app\"); each downstream may come from one target entry only",
		"`spec.targets[0].repositories[1]` (repository \"cluster-01\", package \"app\")":    "renders the same downstream (repository \"cluster-01\", package \"app\") as `spec.targets[0].repositories[0]` (repository \"cluster-01\", package \"app\"); each downstream may come from one target entry only",
		"`spec.targets[1].repositorySelector` (Repository \"cluster-04\", package \"app\")": "`spec.targets[1].template.labelExprs[0].valueExpr`: no such key: region (`repository.labels` of \"cluster-04\" has no key \"region\")",
		"`spec.targets[2].objectSelector` (Team \"ledger\", package \"app\")":               "downstream repository \"cluster-09\" not found among the Repository objects in namespace \"default\"",
	}
	got := map[string]string{}
	for _, f := range set.Status.TargetFailures {
		got[f.Target] = f.Message
	}
	if len(got) != len(want) {
		t.Fatalf("targetFailures = %+v", set.Status.TargetFailures)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("targetFailures[%s] = %q, want %q", k, got[k], v)
		}
	}
	c := apimeta.FindStatusCondition(set.Status.Conditions, "Ready")
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != pvsapi.ReasonPartiallyReconciled ||
		c.Message != "4 target entries could not be computed (see status.targetFailures); the others are reconciled and no PackageVariant was removed" {
		t.Fatalf("Ready = %+v", c)
	}
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
