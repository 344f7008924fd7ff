package main

import (
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	in := `pkg: example.com/bench
BenchmarkFloor/1000-2   	4	 200000000 ns/op	   2.36 MB/s	147652552 B/op	  335015 allocs/op
BenchmarkFloor/1000-2   	4	 100000000 ns/op	   2.36 MB/s	147652552 B/op	  335015 allocs/op
BenchmarkFloor/1000-2   	4	 300000000 ns/op	   2.36 MB/s	147652552 B/op	  335015 allocs/op
BenchmarkPackageContext/1000-2   	4	 300000000 ns/op	   2.36 MB/s	150000000 B/op	  336000 allocs/op
PASS
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "| Floor | 1000 | 200.00 ms | 3 | 147.7 | 335015 | - |\n| PackageContext | 1000 | 300.00 ms | 1 | 150.0 | 336000 | 1.50x (separate runs) |\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Fatalf("got\n%s\nwant suffix\n%s", out.String(), want)
	}
	var inter strings.Builder
	if err := run(strings.NewReader("pkg: p\nBenchmarkX/7-2  3  100 ns/op  1.10 x-floor  5 B/op  1 allocs/op\nBenchmarkX/7-2  3  100 ns/op  1.30 x-floor  5 B/op  1 allocs/op\nBenchmarkX/7-2  3  100 ns/op  1.20 x-floor  5 B/op  1 allocs/op\n"), &inter); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(inter.String(), "| X | 7 | 100 ns | 3 | 0.0 | 1 | 1.20x |") {
		t.Fatalf("interleaved ratio not used:\n%s", inter.String())
	}
	var side strings.Builder
	in2 := "pkg: p\nBenchmarkPorchPVSReconciler/big-2   1   30000000000 ns/op   21000000000 B/op   1 allocs/op\n" +
		"BenchmarkPVSExpandLibrary/big-2   3   500000000 ns/op   185000000 B/op   1 allocs/op\n"
	if err := run(strings.NewReader(in2), &side); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(side.String(), "| PorchPVSReconciler | PVSExpandLibrary | big | 30.00 s | 500.00 ms | 60.0x | 21000.0 | 185.0 | - | - |") {
		t.Fatalf("no side-by-side row:\n%s", side.String())
	}
	var resync strings.Builder
	in3 := "pkg: p\nBenchmarkPorchPVResync/1000v-2   3   4000000000 ns/op   4.000 calls/variant   1.000 writes/variant   3000000000 B/op   9 allocs/op\n" +
		"BenchmarkPVResync/1000v-2   3   200000000 ns/op   3.000 calls/variant   0 writes/variant   30000000 B/op   9 allocs/op\n"
	if err := run(strings.NewReader(in3), &resync); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resync.String(), "| PorchPVResync | PVResync | 1000v | 4.00 s | 200.00 ms | 20.0x | 3000.0 | 30.0 | 4.0, 3.0 | 1.0, 0.0 |") {
		t.Fatalf("no resync row:\n%s", resync.String())
	}
	if err := run(strings.NewReader("--- FAIL: BenchmarkX\n"), &out); err == nil || !strings.Contains(err.Error(), "a benchmark failed") {
		t.Fatalf("error = %v", err)
	}
	if err := run(strings.NewReader(""), &out); err == nil || err.Error() != "no benchmark results on stdin" {
		t.Fatalf("error = %v", err)
	}
}
