package packagevariant

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/memory"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// tinyBlueprint is the smallest package a variant edits: a Kptfile and a
// ConfigMap, no pipeline, no injection point.
func tinyBlueprint() map[string]string {
	return map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: tiny\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
	}
}

const tinyVariant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: tiny
spec:
  upstream: {repo: blueprints, package: tiny}
  downstream: {repo: deploy, package: tiny}
  packageContext:
    data: {cycle: "0"}
`

// editCycles makes a variant write a new draft n times, as a variant does
// over months: its spec changes, it makes an edit draft of its published
// revision, a person approves it, the revision before goes. It returns
// the memory's largest size seen.
func (e *env) editCycles(name string, n int) (maxVariants, maxNotes int) {
	e.t.Helper()
	ctx := context.Background()
	for i := 1; i <= n; i++ {
		e.edit(name, func(v *pvapi.PackageVariant) { v.Spec.PackageContext.Data["cycle"] = fmt.Sprint(i) })
		e.mustReconcile(name)
		for _, r := range e.downstreamOf(name) {
			if r.Lifecycle.IsPublished() {
				r.Lifecycle, r.ResourceVersion = store.DeletionProposed, ""
				if err := e.store.Update(ctx, r); err != nil {
					e.t.Fatal(err)
				}
				if err := e.store.Delete(ctx, ns, r.Name); err != nil {
					e.t.Fatal(err)
				}
			} else if _, err := e.store.Approve(ns, r.Name); err != nil {
				e.t.Fatal(err)
			}
		}
		if v, notes := e.r.MemorySize(); v > maxVariants || notes > maxNotes {
			maxVariants, maxNotes = v, notes
		}
		e.events() // drained: the recorder holds 1,000
	}
	return maxVariants, maxNotes
}

// Issue 61 #2: what the reconciler remembers of a variant is one record,
// bounded whatever the variant's age: a draft note was added for every
// draft a variant ever wrote, and never pruned. 10,000 cycles of a new
// draft leave one record and no note.
func TestMemoryIsBoundedOverTime(t *testing.T) {
	t.Parallel()
	n := 10_000
	if testing.Short() {
		n = 500
	}
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "tiny", tinyBlueprint())
	e.variant(tinyVariant)
	e.mustReconcile("tiny")
	if _, err := e.store.Approve(ns, e.downstreamOf("tiny")[0].Name); err != nil {
		t.Fatal(err)
	}
	if v, notes := e.editCycles("tiny", n); v != 1 || notes != 0 {
		t.Fatalf("over %d cycles the memory held up to %d variants and %d notes", n, v, notes)
	}
	if got := e.downstreamOf("tiny"); len(got) != 1 || got[0].Workspace != fmt.Sprintf("packagevariant-%d", n+1) {
		t.Fatalf("the cycles did not make a draft each: %v", got)
	}
}

// Issue 61 #2: a variant's record is forgotten when it goes, whichever
// way: deleted through its finalizer, or released (its finalizer removed,
// pvctl release) and deleted, seen only as NotFound. 1,000 variants
// created, reconciled and gone leave the memory empty.
func TestMemoryForgetsEveryVariantThatGoes(t *testing.T) {
	t.Parallel()
	n := 1000
	if testing.Short() {
		n = 100
	}
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("v%04d", i)
		e.variant(strings.NewReplacer("name: app-prod", "name: "+names[i], "package: app-prod", "package: "+names[i]).Replace(appVariant))
		e.mustReconcile(names[i])
		e.events() // drained: the recorder holds 1,000
	}
	if v, _ := e.r.mem.Size(); v != n {
		t.Fatalf("%d records for %d variants", v, n)
	}
	for i, name := range names {
		v := e.get(name)
		if i%2 == 1 { // released: the finalizer goes first, the reconciler never sees it deleting
			controllerutil.RemoveFinalizer(v, pv.Finalizer)
			if err := e.client.Update(context.Background(), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.client.Delete(context.Background(), v); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3; j++ { // deleting, then gone
			e.mustReconcile(name)
		}
		e.events()
	}
	if _, names := e.r.mem.Size(); names != 0 {
		t.Fatalf("after every variant went: %d names", names)
	}
	if v, notes := e.r.MemorySize(); v != 0 || notes != 0 {
		t.Fatalf("after every variant went: %d records, %d notes", v, notes)
	}
	var left pvapi.PackageVariantList
	if err := e.client.List(context.Background(), &left); err != nil || len(left.Items) != 0 {
		t.Fatalf("variants left: %v %d", err, len(left.Items))
	}
}

// BenchmarkMemoryPerVariant: the heap the memory holds per variant
// reconciled (its record, with a memo), measured by dropping it
// (docs/performance.md, make bench).
func BenchmarkMemoryPerVariant(b *testing.B) {
	const n = 200
	for i := 0; i < b.N; i++ {
		e := newEnv(b, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
		e.store.Publish(ns, "blueprints", "app", blueprint(b))
		for j := 0; j < n; j++ {
			name := fmt.Sprintf("v%04d", j)
			e.variant(strings.NewReplacer("name: app-prod", "name: "+name, "package: app-prod", "package: "+name).Replace(appVariant))
			e.mustReconcile(name)
			e.events()
		}
		held := heap()
		e.r.mem, e.r.settled = memory.Memory{}, nil
		b.ReportMetric(float64(held-heap())/n, "bytes/variant")
	}
}

func heap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
