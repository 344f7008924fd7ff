package bench

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
)

// BenchmarkConfigInject runs the function as the binary does, bytes in and
// out, on 1,000 points, 10,000 candidates and 100 injectors.
func BenchmarkConfigInject(b *testing.B) {
	in := InjectionResourceList(1000, 10000, 100)
	b.Run(InjectionName, func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		var stderr bytes.Buffer
		for i := 0; i < b.N; i++ {
			if code := fnmain.Run("config-inject", configinject.Process, bytes.NewReader(in), io.Discard, &stderr); code != 0 {
				b.Fatalf("exit %d: %s", code, stderr.String())
			}
		}
	})
}

// BenchmarkConfigInjectLibrary times the mutation alone, as the orchestrator
// calls it on already parsed objects: reading the config (indexing the
// candidates), choosing, injecting and editing the Kptfile.
func BenchmarkConfigInjectLibrary(b *testing.B) {
	in := InjectionResourceList(1000, 10000, 100)
	b.Run(InjectionName, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			rl, err := krm.ParseResourceList(in)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, problems := configinject.Run(rl.Items, rl.FunctionConfig); krm.HasErrorProblems(problems) {
				b.Fatal(problems)
			}
		}
	})
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
	if n := strings.Count(rl.Items[1].MustString(), "value: v999"); n != 1 {
		t.Fatalf("point 0 did not get the last candidate of its type:\n%s", rl.Items[1].MustString())
	}
}
