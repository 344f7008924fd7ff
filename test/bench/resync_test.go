package bench

import (
	"context"

	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"k8s.io/klog/v2"

	porchpvapi "github.com/nephio-project/porch/controllers/packagevariants/api/v1alpha1"
	porchpv "github.com/nephio-project/porch/controllers/packagevariants/pkg/controllers/packagevariant"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsyaml "sigs.k8s.io/yaml"
)

// Porch's reconcilers log through klog; keep benchmark output parseable.
func init() { klog.SetLogger(logr.Discard()) }

const resyncVariants = 1000

// ResyncName names the resync benchmark input.
const ResyncName = "1000variants"

func variantYAML(i int) string {
	return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-%04d
  namespace: fleet
  uid: uid-%04d
spec:
  upstream: {repo: blueprints, package: app, workspaceName: v1}
  downstream: {repo: deploy, package: app-%04d}
  packageContext:
    data: {env: prod, cluster: c%04d}
  pipeline:
    mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      name: set-ns
      configMap: {namespace: app}
`, i, i, i, i)
}

func newStore() *fakestore.Store {
	s := fakestore.New()
	s.AddRepository("fleet", "deploy")
	s.Publish("fleet", "blueprints", "app", storetest.Blueprint)
	return s
}

func requests(n int) []ctrl.Request {
	out := make([]ctrl.Request, n)
	for i := range out {
		out[i] = ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: fmt.Sprintf("app-%04d", i)}}
	}
	return out
}

// resyncPvkit is pvkit's reconciler on the in-memory store, converged.
func resyncPvkit(tb testing.TB, n int) (*packagevariant.Reconciler, *fakestore.Store, *countingClient) {
	scheme := k8sruntime.NewScheme()
	if err := pvapi.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&pvapi.PackageVariant{})
	for i := 0; i < n; i++ {
		v := &pvapi.PackageVariant{}
		if err := sigsyaml.Unmarshal([]byte(variantYAML(i)), v); err != nil {
			tb.Fatal(err)
		}
		b.WithObjects(v)
	}
	s := newStore()
	c := &countingClient{Client: b.Build(), calls: map[string]int{}}
	r := &packagevariant.Reconciler{Client: c, Store: s}
	converge(tb, r, n)
	return r, s, c
}

// resyncPorch is Porch v1.5.3's reconciler on the client view of an
// identically prepared in-memory store, converged.
func resyncPorch(tb testing.TB, n int) (*porchpv.PackageVariantReconciler, *fakestore.Client) {
	scheme := k8sruntime.NewScheme()
	if err := porchpvapi.AddToScheme(scheme); err != nil {
		tb.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&porchpvapi.PackageVariant{})
	for i := 0; i < n; i++ {
		v := &porchpvapi.PackageVariant{}
		if err := sigsyaml.Unmarshal([]byte(variantYAML(i)), v); err != nil {
			tb.Fatal(err)
		}
		b.WithObjects(v)
	}
	view := newStore().Client(b.Build())
	r := &porchpv.PackageVariantReconciler{Client: view}
	converge(tb, r, n)
	return r, view
}

type reconciler interface {
	Reconcile(context.Context, ctrl.Request) (ctrl.Result, error)
}

func converge(tb testing.TB, r reconciler, n int) {
	for pass := 0; pass < 2; pass++ {
		for _, req := range requests(n) {
			if _, err := r.Reconcile(context.Background(), req); err != nil {
				tb.Fatalf("%s: %v", req.Name, err)
			}
		}
	}
}

// countingClient counts the cluster API calls of pvkit's reconciler.
type countingClient struct {
	client.Client
	calls map[string]int
}

func (c *countingClient) Get(ctx context.Context, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	c.calls["get"]++
	return c.Client.Get(ctx, k, o, opts...)
}

func (c *countingClient) List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error {
	c.calls["list"]++
	return c.Client.List(ctx, l, opts...)
}

func (c *countingClient) Patch(ctx context.Context, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	c.calls["patch"]++
	return c.Client.Patch(ctx, o, p, opts...)
}

func (c *countingClient) Status() client.SubResourceWriter {
	c.calls["status"]++
	return c.Client.Status()
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// BenchmarkPVResync is one steady-state resync of 1,000 converged
// PackageVariants by pvkit's reconciler on the in-memory store.
func BenchmarkPVResync(b *testing.B) { benchPVResync(b, false) }

// BenchmarkPVResyncCold is the first resync after a restart: a new
// reconciler (empty memo) reads and mutates every package again, and still
// writes nothing.
func BenchmarkPVResyncCold(b *testing.B) { benchPVResync(b, true) }

func benchPVResync(b *testing.B, cold bool) {
	r, s, c := resyncPvkit(b, resyncVariants)
	reqs := requests(resyncVariants)
	b.Run(ResyncName, func(b *testing.B) {
		s.ResetCalls()
		c.calls = map[string]int{}
		for i := 0; i < b.N; i++ {
			rec := r
			if cold {
				rec = &packagevariant.Reconciler{Client: r.Client, Store: r.Store}
			}
			for _, req := range reqs {
				if _, err := rec.Reconcile(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		}
		per := float64(b.N * resyncVariants)
		b.ReportMetric(float64(total(s.Calls())+total(c.calls))/per, "calls/variant")
		b.ReportMetric(float64(s.Writes()+c.calls["patch"])/per, "writes/variant")
	})
}

// BenchmarkPorchPVResync is the same resync by Porch v1.5.3's own
// PackageVariant reconciler, on the client view of the same kind of store.
func BenchmarkPorchPVResync(b *testing.B) {
	r, view := resyncPorch(b, resyncVariants)
	reqs := requests(resyncVariants)
	b.Run(ResyncName, func(b *testing.B) {
		before := view.Calls()
		start := map[string]int{}
		for k, v := range before {
			start[k] = v
		}
		for i := 0; i < b.N; i++ {
			for _, req := range reqs {
				if _, err := r.Reconcile(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		}
		calls, writes := 0, 0
		for k, v := range view.Calls() {
			d := v - start[k]
			calls += d
			if k == "update" || k == "create" || k == "delete" || k == "status" {
				writes += d
			}
		}
		per := float64(b.N * resyncVariants)
		b.ReportMetric(float64(calls)/per, "calls/variant")
		b.ReportMetric(float64(writes)/per, "writes/variant")
	})
}

// Both reconcilers converge to the same downstream: one draft per variant
// with the package context and the prepended function.
func TestResyncSidesAgree(t *testing.T) {
	const n = 20
	_, ours, _ := resyncPvkit(t, n)
	_, view := resyncPorch(t, n)
	theirs := view.Store()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("deploy.app-%04d.packagevariant-1", i)
		a, b := ours.Files("fleet", name), theirs.Files("fleet", name)
		if a == nil || b == nil {
			t.Fatalf("%s: pvkit has %v, Porch %v", name, a != nil, b != nil)
		}
		for _, want := range []string{"cluster: c", "PackageVariant.app-"} {
			for side, files := range map[string]map[string]string{"pvkit": a, "porch": b} {
				if !containsAny(files, want) {
					t.Fatalf("%s (%s) lacks %q: %v", name, side, want, files)
				}
			}
		}
	}
}

func containsAny(files map[string]string, s string) bool {
	for _, c := range files {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}
