// Command scaletable prints make bench-scale's results (test/scale's JSON
// files, named on the command line) as the tables of docs/scale.md.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// row is the part of test/scale's result the tables show.
type row struct {
	N, Sets, Workers                   int
	Shape, Date, Commit                string
	Latency                            float64
	Build, Cold, Resync, Rollout       phase
	HeapMB, RSSMB, PeakRSSMB, Failures int
	MemoryRecords                      int
}

type phase struct {
	Seconds, CPUSeconds, CPUmsPerVariant, RequestsPerVariant, P50, P90 float64
	Children, Reconciles                                               int
	ByCall                                                             map[string]int
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: scaletable RESULT.json...")
		os.Exit(2)
	}
	var rows []row
	for _, p := range os.Args[1:] {
		b, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "scaletable: %v\n", err)
			os.Exit(1)
		}
		var r row
		if err := json.Unmarshal(b, &r); err != nil {
			fmt.Fprintf(os.Stderr, "scaletable: %s: %v\n", p, err)
			os.Exit(1)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Shape != rows[j].Shape {
			return rows[i].Shape < rows[j].Shape
		}
		return rows[i].N < rows[j].N
	})
	write(os.Stdout, rows)
}

func write(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| variants | sets | workers | RSS (peak) | heap | cold start | cold start CPU | steady resync | resync CPU | Porch requests per variant (cold / resync) | date, commit |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %d (%s) | %d | %d MB (%d MB) | %d MB | %.1f s | %.1f s | %.1f s | %.2f s | %.2f / %.2f | %s, %s |\n",
			r.N, r.Sets, r.Shape, r.Workers, r.RSSMB, r.PeakRSSMB, r.HeapMB, r.Cold.Seconds, r.Cold.CPUSeconds,
			r.Resync.Seconds, r.Resync.CPUSeconds, r.Cold.RequestsPerVariant, r.Resync.RequestsPerVariant, r.Date, r.Commit)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| variants | sets | first fan-out, stand-in answering at once | CPU per target | three-wave rollout | p50 / p90 per child | Porch requests per variant | rollout CPU per child |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		ro := "not run"
		per, req, cpu := "-", "-", "-"
		if r.Rollout.Children > 0 {
			ro = fmt.Sprintf("%.0f s (%d children)", r.Rollout.Seconds, r.Rollout.Children)
			per = fmt.Sprintf("%.1f s / %.1f s", r.Rollout.P50, r.Rollout.P90)
			req = fmt.Sprintf("%.2f (%s)", r.Rollout.RequestsPerVariant, calls(r.Rollout.ByCall, r.N))
			cpu = fmt.Sprintf("%.1f ms", r.Rollout.CPUmsPerVariant)
		}
		fmt.Fprintf(w, "| %d | %d (%s) | %.1f s | %.1f ms | %s | %s | %s | %s |\n",
			r.N, r.Sets, r.Shape, r.Build.Seconds, r.Build.CPUmsPerVariant, ro, per, req, cpu)
	}
}

// calls are the Porch requests per variant by call, the most first.
func calls(by map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range by {
		if !strings.HasPrefix(k, "cache.") {
			l = append(l, kv{k, v})
		}
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].v != l[j].v {
			return l[i].v > l[j].v
		}
		return l[i].k < l[j].k
	})
	var out []string
	for _, e := range l {
		out = append(out, fmt.Sprintf("%s %.2f", e.k, float64(e.v)/float64(n)))
	}
	return strings.Join(out, ", ")
}
