package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	configapi "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/nephio-project/porch/controllers/packagevariants/api/v1alpha1"
	pvsapi "github.com/nephio-project/porch/controllers/packagevariantsets/api/v1alpha2"
	"github.com/nephio-project/porch/controllers/packagevariantsets/pkg/controllers/packagevariantset"
	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsyaml "sigs.k8s.io/yaml"
)

// fanoutTargets is the bound of children per set (5,000): every benchmark
// of a fan-out runs at it; BenchmarkPVSExpandLibrary also above it, with
// the bound raised as the controller's --max-children-per-set raises it.
const fanoutTargets = pvsexpand.DefaultMaxChildren

// BenchmarkPVSExpandLibrary times pvs-expand's library as the orchestrator
// calls it: read and validate the set (CEL compiled and cached), expand it
// against a world of 5,000 Repositories and plan the 5,000 children (the
// bound); and 10,000 with the bound raised (--max-children-per-set).
func BenchmarkPVSExpandLibrary(b *testing.B) {
	for _, c := range []struct {
		name         string
		targets, max int
	}{{FanoutName, fanoutTargets, 0}, {FanoutRaisedName, 2 * fanoutTargets, 2 * fanoutTargets}} {
		rl, err := krm.ParseResourceList(FanoutResourceList(c.targets))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				set, problems := pvsexpand.ConfigFromObject(rl.FunctionConfig)
				if krm.HasErrorProblems(problems) {
					b.Fatal(problems)
				}
				world := pvsexpand.WorldFromItems(set.Metadata.Namespace, rl.Items)
				world.MaxChildren = c.max
				x, err := pvsexpand.Expand(context.Background(), set, world)
				if err != nil {
					b.Fatal(err)
				}
				steps, err := pvsexpand.PlanItems(set, x, rl.Items)
				if err != nil || len(steps) != c.targets {
					b.Fatalf("%d steps, %v", len(steps), err)
				}
			}
		})
	}
}

// BenchmarkPVSExpand runs the function as the binary does, bytes in and out.
func BenchmarkPVSExpand(b *testing.B) {
	in := FanoutResourceList(fanoutTargets)
	b.Run(FanoutName, func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		var stderr bytes.Buffer
		for i := 0; i < b.N; i++ {
			if code := fnmain.Run("pvs-expand", pvsexpand.Process, bytes.NewReader(in), io.Discard, &stderr); code != 0 {
				b.Fatalf("exit %d: %s", code, stderr.String())
			}
		}
	})
}

// BenchmarkPorchPVSReconciler drives Porch v1.5.3's own PackageVariantSet
// reconciler over the same input through controller-runtime's fake client
// (in the benchmark only): one Reconcile that creates the 10,000
// PackageVariants. Building the fake client is not timed.
func BenchmarkPorchPVSReconciler(b *testing.B) {
	b.Run(FanoutName, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c := porchFakeClient(b, fanoutTargets)
			r := &packagevariantset.PackageVariantSetReconciler{Client: c}
			b.StartTimer()
			if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "app"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Both sides do the work the benchmark claims: 10,000 PackageVariants with
// the same downstreams.
func TestFanoutSidesAgree(t *testing.T) {
	const n = 200
	c := porchFakeClient(t, n)
	r := &packagevariantset.PackageVariantSetReconciler{Client: c}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "fleet", Name: "app"}}); err != nil {
		t.Fatal(err)
	}
	var pvs pvapi.PackageVariantList
	if err := c.List(context.Background(), &pvs, client.InNamespace("fleet")); err != nil {
		t.Fatal(err)
	}
	porch := map[string]bool{}
	for _, pv := range pvs.Items {
		porch[pv.Spec.Downstream.Repo+"/"+pv.Spec.Downstream.Package+"/"+pv.Spec.Injectors[0].Name] = true
	}
	rl, err := krm.ParseResourceList(FanoutResourceList(n))
	if err != nil {
		t.Fatal(err)
	}
	set, problems := pvsexpand.ConfigFromObject(rl.FunctionConfig)
	if krm.HasErrorProblems(problems) {
		t.Fatal(problems)
	}
	x, err := pvsexpand.Expand(context.Background(), set, pvsexpand.WorldFromItems(set.Metadata.Namespace, rl.Items))
	if err != nil {
		t.Fatal(err)
	}
	if len(porch) != n || len(x.Children) != n {
		t.Fatalf("porch made %d, pvkit %d; want %d", len(porch), len(x.Children), n)
	}
	for _, ch := range x.Children {
		k := ch.Spec.Downstream.Repo + "/" + ch.Spec.Downstream.Package + "/" + ch.Spec.Injectors[0].Name
		if !porch[k] {
			t.Fatalf("pvkit made %s, Porch did not", k)
		}
	}
}

func porchFakeClient(tb testing.TB, n int) client.Client {
	tb.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{porchapi.AddToScheme, configapi.AddToScheme, pvapi.AddToScheme, pvsapi.AddToScheme} {
		if err := add(scheme); err != nil {
			tb.Fatal(err)
		}
	}
	set := &pvsapi.PackageVariantSet{}
	up := &porchapi.PackageRevision{}
	decode(tb, FanoutSet, set)
	decode(tb, FanoutUpstream, up)
	objs := []client.Object{set, up}
	for i := 0; i < n; i++ {
		repo := &configapi.Repository{}
		decode(tb, FanoutRepository(i), repo)
		objs = append(objs, repo)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(set).Build()
}

func decode(tb testing.TB, text string, into any) {
	if err := sigsyaml.Unmarshal([]byte(text), into); err != nil {
		tb.Fatal(fmt.Errorf("%s: %w", text[:40], err))
	}
}
