package render

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pvkit/pvkit/pkg/krm"
)

// Issue 27 #5: a render runs at most MaxFunctions functions, its package's
// pipeline and its subpackages' together, refused before any runs.
func TestFunctionsBounded(t *testing.T) {
	pipeline := func(n int) string {
		var b strings.Builder
		b.WriteString("pipeline:\n  mutators:\n")
		for i := 0; i < n; i++ {
			b.WriteString("  - image: example.com/label:v1\n    configMap: {n: x}\n")
		}
		return b.String()
	}
	ran := 0
	rt := goRuntime{"example.com/label:v1": func(rl *krm.ResourceList) error { ran++; return setLabel(rl) }}
	files := map[string]string{"Kptfile": kptfile("app", pipeline(60)), "sub/Kptfile": kptfile("sub", pipeline(41)), "cm.yaml": fmt.Sprintf(cm, "a")}
	_, st, err := Render(context.Background(), files, Options{Runtime: rt})
	want := "package sub: its pipeline brings the render to 101 functions; a render runs at most 100 (the package's pipeline and its subpackages' together)"
	if err == nil || err.Error() != want || st.Err != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if ran != 0 {
		t.Fatalf("%d functions ran before the bound was found", ran)
	}
	files["sub/Kptfile"] = kptfile("sub", pipeline(40))
	if _, _, err := Render(context.Background(), files, Options{Runtime: rt}); err != nil || ran != 100 {
		t.Fatalf("100 functions: %v, %d ran", err, ran)
	}
}

// Issue 27 #5: the caller's deadline is the whole render's: a function
// that holds it past the deadline is stopped by its runtime, and no
// function after it runs.
func TestRenderDeadline(t *testing.T) {
	var ran []string
	rt := ctxRuntime(func(ctx context.Context, image string) error {
		ran = append(ran, image)
		if image == "example.com/slow:v1" {
			<-ctx.Done() // a runtime stops its function at the deadline
			return &ExitError{Code: 1, Stderr: "stopped: " + ctx.Err().Error()}
		}
		return nil
	})
	files := map[string]string{"Kptfile": kptfile("app", "pipeline:\n  mutators:\n  - image: example.com/slow:v1\n  validators:\n  - image: example.com/next:v1\n"),
		"cm.yaml": fmt.Sprintf(cm, "a")}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, st, err := Render(ctx, files, Options{Runtime: rt})
	if err == nil || !strings.Contains(err.Error(), "function example.com/slow:v1 failed: exit code 1: stopped: context deadline exceeded") {
		t.Fatalf("err = %v", err)
	}
	if len(ran) != 1 || len(st.Runs) != 1 {
		t.Fatalf("ran %v after the deadline; status %+v", ran, st)
	}
	// A render whose deadline has passed runs nothing.
	ran = nil
	_, _, err = Render(ctx, files, Options{Runtime: rt})
	if err == nil || !strings.Contains(err.Error(), "`pipeline.mutators[0]` (example.com/slow:v1): not run: the render was stopped (context deadline exceeded)") || len(ran) != 0 {
		t.Fatalf("err = %v, ran %v", err, ran)
	}
}

// ctxRuntime runs every image with run, which sees the render's context;
// a function that succeeds returns its input.
type ctxRuntime func(ctx context.Context, image string) error

func (c ctxRuntime) Runner(ctx context.Context, f Function) (Runner, error) {
	return func(in io.Reader, out io.Writer) error {
		b, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		if err := c(ctx, f.Image); err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}, nil
}

// A Kptfile whose pipeline names 10,000 functions (it ran for more than
// 10 minutes): refused before any runs.
func BenchmarkHostilePipeline(b *testing.B) {
	var k strings.Builder
	k.WriteString("pipeline:\n  mutators:\n")
	for i := 0; i < 10_000; i++ {
		k.WriteString("  - image: example.com/label:v1\n    configMap: {n: x}\n")
	}
	files := map[string]string{"Kptfile": kptfile("app", k.String()), "cm.yaml": fmt.Sprintf(cm, "a")}
	rt := goRuntime{"example.com/label:v1": setLabel}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := Render(context.Background(), files, Options{Runtime: rt}); err == nil {
			b.Fatal("a 10,000-function pipeline rendered")
		}
	}
}

// One pipeline over the bound is refused as it is read, naming its
// Kptfile.
func TestPipelineOverBoundRefusedAsRead(t *testing.T) {
	var k strings.Builder
	k.WriteString("pipeline:\n  validators:\n")
	for i := 0; i < MaxFunctions+1; i++ {
		k.WriteString("  - image: example.com/label:v1\n")
	}
	_, _, err := Render(context.Background(), map[string]string{"Kptfile": kptfile("app", k.String())}, Options{Runtime: goRuntime{}})
	if want := "Kptfile: `pipeline` has 101 functions; a render runs at most 100"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

// resultsRuntime's function fails with n results of a message of size
// bytes each.
type resultsRuntime struct{ n, size int }

func (r resultsRuntime) Runner(context.Context, Function) (Runner, error) {
	return func(in io.Reader, out io.Writer) error {
		_, _ = io.Copy(io.Discard, in)
		fmt.Fprint(out, "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n")
		for i := 0; i < r.n; i++ {
			fmt.Fprintf(out, "- severity: error\n  message: m%d-%s\n", i, strings.Repeat("é", r.size/2))
		}
		return &ExitError{Code: 1, Stderr: "failed"}
	}, nil
}

// Issue 47 #12: a function chooses its results' number and size, and each
// was copied into the status, the error and the variant's status whole (a
// 20 MB message took pvctl to 506 MB). What a render keeps of them is
// bounded before they are decoded.
func TestResultsBounded(t *testing.T) {
	files := map[string]string{"Kptfile": kptfile("app", "pipeline:\n  mutators:\n  - image: example.com/noisy:v1\n"), "cm.yaml": fmt.Sprintf(cm, "a")}
	for _, tc := range []struct {
		name    string
		rt      resultsRuntime
		results int
	}{
		{"one 20 MB message", resultsRuntime{1, 20 << 20}, 1},
		{"5,000 results", resultsRuntime{5000, 64}, MaxResults + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, st, err := Render(context.Background(), files, Options{Runtime: tc.rt})
			if err == nil || len(err.Error()) > MaxResults*(MaxResultValue+64) {
				t.Fatalf("err: %d bytes", len(fmt.Sprint(err)))
			}
			rs := st.Runs[0].Results
			if len(rs) != tc.results {
				t.Fatalf("%d results kept, want %d", len(rs), tc.results)
			}
			for _, r := range rs {
				if len(r.Message) > MaxResultValue || !utf8.ValidString(r.Message) {
					t.Fatalf("a message of %d bytes kept", len(r.Message))
				}
			}
			if tc.results > 1 && rs[len(rs)-1].Message != "4900 more results were left out (a render keeps 100 of a function's)" {
				t.Fatalf("last result: %q", rs[len(rs)-1].Message)
			}
		})
	}
}

// BenchmarkHostileWhen: a `when` of 40 matches over a 20 KB field (issue
// 55 #6: it rendered 20-35 s past a 2 s render timeout with CEL's own
// `matches`); it stops at the cost limit.
func BenchmarkHostileWhen(b *testing.B) {
	parts := make([]string, 40)
	for i := range parts {
		parts[i] = "r.data.big.matches('[ab]{0,200}c')"
	}
	step := "    when: \"resources.exists(r, has(r.data) && has(r.data.big) && (" + strings.Join(parts, " || ") + "))\"\n"
	files := map[string]string{
		"Kptfile":  kptfile("p", "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n"+step),
		"big.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  big: " + strings.Repeat("ab", 10000) + "\n",
	}
	rt := goRuntime{"gcr.io/kpt-fn/set-labels:v0.1": setLabel}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := Render(context.Background(), files, Options{Runtime: rt}); err == nil || !strings.Contains(err.Error(), "actual cost limit exceeded") {
			b.Fatalf("err = %v", err)
		}
	}
}
