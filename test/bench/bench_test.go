package bench

import (
	"bytes"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/packagecontext"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var sizes = []int{10, 1000, 10000}

const variant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: app-prod
spec:
  packageContext:
    data:
      env: prod
      region: us-east1
    removeKeys:
    - old
  pipeline:
    mutators:
    - image: gcr.io/kpt-fn/set-namespace:v0.4.1
      name: set-ns
      configMap:
        namespace: prod
`

// BenchmarkFloor parses and serialises each benchmark's ResourceList with
// kyaml and does nothing else: no function can be faster.
func BenchmarkFloor(b *testing.B) {
	inputs := map[string][]byte{InjectionName: InjectionResourceList(1000, 10000, 100), FanoutName: FanoutResourceList(fanoutTargets)}
	names := []string{}
	for _, n := range sizes {
		inputs[strconv.Itoa(n)] = ResourceList(n, variant)
		names = append(names, strconv.Itoa(n))
	}
	for _, name := range append(names, InjectionName, FanoutName) {
		in := inputs[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for i := 0; i < b.N; i++ {
				doc, err := yaml.Parse(string(in))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := doc.String(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkPackageContext(b *testing.B) {
	benchFunction(b, "package-context", packagecontext.Process)
}

func BenchmarkPipelinePrepend(b *testing.B) {
	benchFunction(b, "pipeline-prepend", pipelineprepend.Process)
}

func benchFunction(b *testing.B, name string, p krm.Processor) {
	for _, n := range sizes {
		in := ResourceList(n, variant)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			var stderr bytes.Buffer
			interleaved(b, in, func() {
				if code := fnmain.Run(name, p, bytes.NewReader(in), io.Discard, &stderr); code != 0 {
					b.Fatalf("exit %d: %s", code, stderr.String())
				}
			})
		})
	}
}

// interleaved times run (the benchmark's ns/op) and, between its runs with
// the timer stopped, the floor on the same input, and reports their ratio
// as "x-floor": both are measured under the same machine conditions, so the
// ratio does not drift with the load of a shared 2-core machine the way two
// separate benchmarks minutes apart do.
func interleaved(b *testing.B, in []byte, run func()) {
	var floor, fn time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		start := time.Now()
		doc, err := yaml.Parse(string(in))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := doc.String(); err != nil {
			b.Fatal(err)
		}
		floor += time.Since(start)
		b.StartTimer()
		start = time.Now()
		run()
		fn += time.Since(start)
	}
	b.ReportMetric(float64(fn)/float64(floor), "x-floor")
}

// The generated package must be what the benchmarks claim: n items, and
// both functions must change it.
func TestGeneratedPackage(t *testing.T) {
	for _, p := range []struct {
		name string
		proc krm.Processor
	}{{"package-context", packagecontext.Process}, {"pipeline-prepend", pipelineprepend.Process}} {
		in := ResourceList(1000, variant)
		var out, stderr bytes.Buffer
		if code := fnmain.Run(p.name, p.proc, bytes.NewReader(in), &out, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", p.name, code, stderr.String())
		}
		rl, err := krm.ParseResourceList(out.Bytes())
		if err != nil || len(rl.Items) != 1000 {
			t.Fatalf("%s: %d items, %v", p.name, len(rl.Items), err)
		}
		if msg := rl.Results[len(rl.Results)-1].Message; !bytes.Contains([]byte(msg), []byte("1 ")) {
			t.Fatalf("%s did nothing: %s", p.name, msg)
		}
	}
}
