// Command benchtable reads `go test -bench -benchmem` output on stdin and
// prints a Markdown table: one row per benchmark and size, with the median
// time over -count runs, allocations, and the ratio to the floor benchmark of
// the same package and size: the "x-floor" metric a benchmark measured
// interleaved with the floor when it has one, else the ratio to a benchmark
// named BenchmarkFloor/<size> run separately. It
// then prints Porch v1.5.3's reconcilers side by side with pvkit's code on
// the same input (see versusPorch).
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// versusPorch pairs a benchmark of Porch's own code with pvkit's benchmark of
// the same work on the same input.
var versusPorch = []struct{ porch, pvkit string }{
	{"BenchmarkPorchPVSReconciler", "BenchmarkPVSExpandLibrary"},
	{"BenchmarkPorchPVResync", "BenchmarkPVResync"},
	{"BenchmarkPorchPVResync", "BenchmarkPVResyncCold"},
}

var line = regexp.MustCompile(`^(Benchmark[^\s/]+)/([^\s]+?)(-\d+)?\s+\d+\s+(.*)$`)

type key struct{ pkg, name, size string }

type sample struct {
	ns     []float64
	bytes  float64
	allocs float64
	extra  map[string]float64 // custom metrics, e.g. calls/variant
	xfloor []float64          // ratios to the floor measured interleaved
}

// metrics parses "123 ns/op 4 B/op 3.000 calls/variant ..." pairs.
func metrics(text string) map[string]float64 {
	f := strings.Fields(text)
	out := map[string]float64{}
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			out[f[i+1]] = v
		}
	}
	return out
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	samples := map[key]*sample{}
	var order []key
	pkg := ""
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		text := sc.Text()
		if strings.HasPrefix(text, "pkg: ") {
			pkg = strings.TrimPrefix(text, "pkg: ")
			continue
		}
		m := line.FindStringSubmatch(text)
		if m == nil {
			if strings.HasPrefix(text, "--- FAIL") || strings.HasPrefix(text, "FAIL") {
				return fmt.Errorf("a benchmark failed: %s", text)
			}
			continue
		}
		met := metrics(m[4])
		ns, ok := met["ns/op"]
		if !ok {
			continue
		}
		k := key{pkg, m[1], m[2]}
		s := samples[k]
		if s == nil {
			s = &sample{extra: map[string]float64{}}
			samples[k] = s
			order = append(order, k)
		}
		s.ns = append(s.ns, ns)
		s.bytes, s.allocs = met["B/op"], met["allocs/op"]
		for unit, v := range met {
			if strings.HasSuffix(unit, "/variant") {
				s.extra[unit] = v
			}
			if unit == "x-floor" {
				s.xfloor = append(s.xfloor, v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark results on stdin")
	}
	fmt.Fprintln(out, "| benchmark | size | time/op (median) | runs | MB alloc/op | allocs/op | vs floor |")
	fmt.Fprintln(out, "|---|---:|---:|---:|---:|---:|---:|")
	for _, k := range order {
		s := samples[k]
		ratio := "-"
		if len(s.xfloor) > 0 { // measured interleaved with the floor: preferred
			ratio = fmt.Sprintf("%.2fx", median(s.xfloor))
		} else if f, ok := samples[key{k.pkg, "BenchmarkFloor", k.size}]; ok && k.name != "BenchmarkFloor" {
			ratio = fmt.Sprintf("%.2fx (separate runs)", median(s.ns)/median(f.ns))
		}
		fmt.Fprintf(out, "| %s | %s | %s | %d | %.1f | %.0f | %s |\n", strings.TrimPrefix(k.name, "Benchmark"), k.size,
			duration(median(s.ns)), len(s.ns), s.bytes/1e6, s.allocs, ratio)
	}
	return sideBySide(out, samples, order)
}

func sideBySide(out io.Writer, samples map[key]*sample, order []key) error {
	header := false
	for _, k := range order {
		for _, v := range versusPorch {
			if k.name != v.porch {
				continue
			}
			p := samples[k]
			q, ok := samples[key{k.pkg, v.pvkit, k.size}]
			if !ok {
				continue
			}
			if !header {
				fmt.Fprintln(out, "\n| Porch v1.5.3 | pvkit | input | Porch time/op | pvkit time/op | pvkit speed-up | Porch MB alloc/op | pvkit MB alloc/op | API calls/variant (Porch, pvkit) | writes/variant (Porch, pvkit) |")
				fmt.Fprintln(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
				header = true
			}
			fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %.1fx | %.1f | %.1f | %s | %s |\n", strings.TrimPrefix(v.porch, "Benchmark"),
				strings.TrimPrefix(v.pvkit, "Benchmark"), k.size, duration(median(p.ns)), duration(median(q.ns)),
				median(p.ns)/median(q.ns), p.bytes/1e6, q.bytes/1e6, pair(p, q, "calls/variant"), pair(p, q, "writes/variant"))
		}
	}
	return nil
}

func pair(p, q *sample, unit string) string {
	a, okA := p.extra[unit]
	b, okB := q.extra[unit]
	if !okA || !okB {
		return "-"
	}
	return fmt.Sprintf("%.1f, %.1f", a, b)
}

func median(v []float64) float64 {
	c := append([]float64(nil), v...)
	sort.Float64s(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

func duration(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}
