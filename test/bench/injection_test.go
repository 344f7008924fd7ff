package bench

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// BenchmarkConfigInject runs the function as the binary does, bytes in and
// out, on 1,000 points, 10,000 candidates and 100 injectors.
func BenchmarkConfigInject(b *testing.B) {
	in := InjectionResourceList(1000, 10000, 100)
	b.Run(InjectionName, func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		var stderr bytes.Buffer
		interleaved(b, in, func() {
			if code := fnmain.Run("config-inject", configinject.Process, bytes.NewReader(in), io.Discard, &stderr); code != 0 {
				b.Fatalf("exit %d: %s", code, stderr.String())
			}
		})
	})
}

// BenchmarkConfigInjectLibrary times the mutation alone, as the orchestrator
// calls it on already parsed objects: reading the config (indexing the
// candidates), choosing, injecting and editing the Kptfile. Iterations
// alternate between two configs whose injectors pick different candidates,
// so every iteration injects all 1,000 points again.
func BenchmarkConfigInjectLibrary(b *testing.B) {
	rl, err := krm.ParseResourceList(InjectionResourceList(1000, 10000, 100))
	if err != nil {
		b.Fatal(err)
	}
	other, err := krm.ParseResourceList(injectionVariant(1000, 10000, 100))
	if err != nil {
		b.Fatal(err)
	}
	configs := []*yaml.RNode{rl.FunctionConfig, other.FunctionConfig}
	next := 0 // testing calls the function several times; keep alternating across calls
	b.Run(InjectionName, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			next++
			summary, problems := configinject.Run(rl.Items, configs[next%2])
			if krm.HasErrorProblems(problems) || !strings.Contains(summary, "(1000 updated") {
				b.Fatalf("%s %v", summary, problems)
			}
		}
	})
}

// injectionVariant is InjectionResourceList with the matching injectors
// pointing at the second-to-last candidate of each type.
func injectionVariant(points, candidates, injectors int) []byte {
	in := string(InjectionResourceList(points, candidates, injectors))
	last := candidates/injectionTypes - 1
	for t := 0; t < injectionTypes; t++ {
		kind, _ := typeOf(t)
		in = strings.Replace(in, fmt.Sprintf("    - kind: %s\n      name: cand-%d-%d\n", kind, t, last),
			fmt.Sprintf("    - kind: %s\n      name: cand-%d-%d\n", kind, t, last-1), 1)
	}
	return []byte(in)
}

// The benchmark input does what it claims: every point is injected from the
// last injector of its type, and one candidate per type is in another namespace.
func TestInjectionInput(t *testing.T) {
	rl, err := krm.ParseResourceList(InjectionResourceList(1000, 10000, 100))
	if err != nil {
		t.Fatal(err)
	}
	summary, problems := configinject.Run(rl.Items, rl.FunctionConfig)
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	want := "1000 injection point(s): 1000 injected (1000 updated, 0 already current), 0 not injected; 500 readiness gate(s) added; 10 candidate(s) in other namespaces ignored"
	if summary != want {
		t.Fatalf("summary = %q, want %q", summary, want)
	}
	if n := strings.Count(rl.Items[1].MustString(), "value: v0-999"); n != 1 {
		t.Fatalf("point 0 did not get the last candidate of its type:\n%s", rl.Items[1].MustString())
	}
}
