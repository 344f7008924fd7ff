package fnruntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/render"
)

// slowSearch is a ResourceList for search-replace whose regex costs about
// 80 µs a byte of its input (RE2 is linear, with a 2,000-instruction
// program): n bytes of value.
func slowSearch(n int) string {
	return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: big\n  data:\n    v: " +
		strings.Repeat("ab", n/2) + "\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: f\n  data:\n    by-value-regex: '[ab]{0,1000}z'\n    put-value: x\n"
}

// Issue 47 #2: pvkit's catalog functions ran in pvctl's own process and
// ignored every deadline and Ctrl-C (1 MB took 46 s under a 3 s render
// deadline). In a worker, the deadline stops them.
func TestCatalogFunctionStopsAtTheDeadline(t *testing.T) {
	rt := &Runtime{Timeout: time.Second}
	run, err := rt.Runner(context.Background(), render.Function{Image: "gcr.io/kpt-fn/search-replace:v0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = run(strings.NewReader(slowSearch(400<<10)), &strings.Builder{})
	var ee *render.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "(stopped: context deadline exceeded)") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopped after %s", d)
	}
	// Ctrl-C: the run's context is cancelled.
	ctx, cancel := context.WithCancelCause(context.Background())
	run, err = (&Runtime{}).Runner(ctx, render.Function{Image: "gcr.io/kpt-fn/search-replace:v0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(200 * time.Millisecond); cancel(errors.New("interrupted")) }()
	if err := run(strings.NewReader(slowSearch(400<<10)), &strings.Builder{}); !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "(stopped: interrupted)") {
		t.Fatalf("cancelled: %v", err)
	}
}

// Issue 47 #3: what a catalog function may allocate is bounded; past it,
// that render fails alone, saying why, and the next one runs.
func TestCatalogFunctionMemoryBounded(t *testing.T) {
	if cgoBuild {
		t.Skip("a 96 MiB bound counts the worker's pthread stacks in a cgo build (cgo_test.go): make test builds without cgo (CGO_ENABLED=0)")
	}
	rt := &Runtime{Memory: 96 << 20}
	run, err := rt.Runner(context.Background(), render.Function{Image: "gcr.io/kpt-fn/set-labels:v0.2.0"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c%d\n  data:\n    v: %s\n", i, strings.Repeat("x", 16<<10))
	}
	b.WriteString("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: f\n  data:\n    tier: prod\n")
	err = run(strings.NewReader(b.String()), &strings.Builder{})
	var ee *render.ExitError
	// Past its bound the worker's allocation fails and the Go runtime ends
	// it ("fatal error: runtime: out of memory" with cgo; a SIGSEGV in a
	// static build, as make builds it).
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "its process ended") || !strings.Contains(ee.Stderr, "bounded to 96 MiB of memory") {
		t.Fatalf("err = %v", err)
	}
	var out strings.Builder
	small := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: f\n  data:\n    tier: prod\n"
	if err := run(strings.NewReader(small), &out); err != nil || !strings.Contains(out.String(), "tier: prod") {
		t.Fatalf("the next render: %v\n%s", err, out.String())
	}
}

// Issue 47 #2's worst case: search-replace's slowest regex on 1 MB (46 s
// in pvctl's process before), under a 3 s render deadline.
func BenchmarkHostileCatalogRegex(b *testing.B) {
	in := slowSearch(1 << 20)
	for i := 0; i < b.N; i++ {
		run, err := (&Runtime{Timeout: 3 * time.Second}).Runner(context.Background(), render.Function{Image: "gcr.io/kpt-fn/search-replace:v0.2.0"})
		if err != nil {
			b.Fatal(err)
		}
		var ee *render.ExitError
		if err := run(strings.NewReader(in), &strings.Builder{}); !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "stopped") {
			b.Fatalf("err = %v", err)
		}
	}
}

// Issue 47 #3's worst case: a catalog function that allocates without end
// (set-labels on 3,000 objects of 16 KiB, 48 MB, under a 96 MiB bound; the
// default bound is 2 GiB): the time to the worker's end, and what pvctl's
// own process allocates meanwhile (-benchmem).
func BenchmarkHostileCatalogMemory(b *testing.B) {
	var s strings.Builder
	s.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&s, "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c%d\n  data:\n    v: %s\n", i, strings.Repeat("x", 16<<10))
	}
	s.WriteString("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: f\n  data:\n    tier: prod\n")
	in := s.String()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run, err := (&Runtime{Memory: 96 << 20}).Runner(context.Background(), render.Function{Image: "gcr.io/kpt-fn/set-labels:v0.2.0"})
		if err != nil {
			b.Fatal(err)
		}
		var ee *render.ExitError
		if err := run(strings.NewReader(in), &strings.Builder{}); !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "its process ended") {
			b.Fatalf("err = %v", err)
		}
	}
}
