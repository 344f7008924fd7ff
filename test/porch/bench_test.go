package porch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/procstat"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestFanOutBench (make e2e-porch-bench, PVKIT_PORCH_BENCH=20,50): one
// PackageVariantSet fanned out to N repositories, converged once by pvkit
// and once by Porch v1.5.3's own controllers, each alone on the same stack
// in a namespace of its own. It prints seconds from the set's creation to
// N children Ready with one owned draft each, and the API requests the
// controller made in that namespace, per variant (kube-apiserver's audit
// log, by user and user agent). Not a pass/fail test: a table. Each run is
// cleared away before the next (retire).
// A third run, floor, is Porch alone: the same clones and resource writes
// issued directly (fanOutFloor), and the table gives each controller's time
// as a ratio to it. PVKIT_PORCH_BENCH=200 runs N=200.
// PVKIT_PORCH_BENCH_ONLY=pvkit,floor (any of pvkit, porch, floor) runs those;
// PVKIT_PORCH_FLOOR_WATCHING=1 keeps pvkit's controller running, idle, during
// the floor (its informers watching Porch);
// PVKIT_PORCH_WORKERS sets pvkit's --workers (default 8).
func TestFanOutBench(t *testing.T) {
	sizes := os.Getenv("PVKIT_PORCH_BENCH")
	if sizes == "" {
		t.Skip("the fan-out benchmark runs with make e2e-porch-bench (PVKIT_PORCH_BENCH=20,50)")
	}
	type row struct {
		n                int
		who              string
		seconds, perVari float64
		creates          int
		calls            map[string]int
	}
	var rows []row
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			t.Fatalf("PVKIT_PORCH_BENCH: %q is not a size", f)
		}
		whos := []string{"pvkit", "porch", "floor"}
		if only := os.Getenv("PVKIT_PORCH_BENCH_ONLY"); only != "" {
			whos = strings.Split(only, ",")
		}
		for _, who := range whos {
			e := newEnv(t, fmt.Sprintf("bench-%s-%d", who, n))
			if who == "floor" {
				stopPorchControllers()
				if os.Getenv("PVKIT_PORCH_FLOOR_WATCHING") == "" {
					stopController()
				} else if controller == nil { // the floor with pvkit's informers watching Porch (idle: no variant in the namespace)
					if err := startController(); err != nil {
						t.Fatal(err)
					}
				}
				w, err := strconv.Atoi(workers())
				if err != nil {
					t.Fatal(err)
				}
				secs, requests := e.fanOutFloor(t, n, w)
				e.retireFloor(t)
				rows = append(rows, row{n: n, who: who, seconds: secs, perVari: float64(requests) / float64(n), creates: n})
				continue
			}
			if who == "pvkit" {
				stopPorchControllers()
				if controller == nil {
					if err := startController(); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				stopController()
				if porchControllers == nil {
					startPorchControllers(t)
				}
			}
			secs, w := e.fanOut(t, n)
			e.retire(t)
			rows = append(rows, row{n: n, who: who, seconds: secs, perVari: float64(w.Requests) / float64(n), creates: w.Creates, calls: w.ByCall})
		}
	}
	stopPorchControllers()
	if controller == nil {
		if err := startController(); err != nil {
			t.Error(err)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| N | controller | seconds to converge | API requests per variant | drafts created |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %d |\n", r.n, r.who, r.seconds, r.perVari, r.creates)
	}
	fmt.Fprintf(&b, "\nAgainst Porch's floor (the same clones and writes issued directly, %s at a time, no controller):\n\n| N | controller | seconds | floor | ratio |\n|---|---|---|---|---|\n", workers())
	for _, r := range rows {
		for _, f := range rows {
			if f.who == "floor" && f.n == r.n && r.who != "floor" {
				fmt.Fprintf(&b, "| %d | %s | %.1f | %.1f | %.2fx |\n", r.n, r.who, r.seconds, f.seconds, r.seconds/f.seconds)
			}
		}
	}
	fmt.Fprintf(&b, "\nRequests per variant, by call:\n\n| N | controller | call | per variant |\n|---|---|---|---|\n")
	for _, r := range rows {
		calls := make([]string, 0, len(r.calls))
		for c := range r.calls {
			calls = append(calls, c)
		}
		sort.Strings(calls)
		for _, c := range calls {
			fmt.Fprintf(&b, "| %d | %s | %s | %.2f |\n", r.n, r.who, c, float64(r.calls[c])/float64(r.n))
		}
	}
	t.Log(b.String())
}

// fanOut makes N repositories and a set over them, and waits for N Ready
// children with one owned draft each; it returns the seconds that took and
// the controller's requests in the namespace meanwhile.
func (e *env) fanOut(t *testing.T, n int) (float64, writes) {
	e.benchRepos(t, n)
	set := &pvsapi.PackageVariantSet{}
	if err := yaml.UnmarshalStrict([]byte(setOver("workspaceName: v1", `bench: "yes"`, `      packageContext:
        dataExprs:
        - key: cluster
          valueExpr: repository.name
      injectors:
      - kind: ConfigMap
        name: us-east1-endpoints
`)), set); err != nil {
		t.Fatal(err)
	}
	set.Namespace = e.ns
	offset := auditSize(t)
	cpu := cpuNow()
	defer func() { t.Logf("N=%d: CPU seconds while converging: %s", n, cpu.since()) }()
	// The clock runs from the set's create (through the client: a kubectl
	// process would put its own start-up and discovery on the clock) to
	// the watch event that makes N children Ready: a watch, not polls (a
	// list of N children with their status every 100 ms loaded
	// kube-apiserver during pvkit's run and not during the floor's). The
	// Porch list that checks their drafts comes after, off the clock (the
	// floor's clock stops at its last answer too).
	wc, err := newWatchClient(adminKC)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*converge)
	defer cancel()
	// watch (re)starts the watch: a new one begins with every child as it
	// is (ADDED events), so what is Ready is counted again from there.
	// kube-apiserver ends a watch its cache cannot serve yet ("Too large
	// resource version", seen right after the set's create): watched again.
	var w watch.Interface
	ready := map[string]bool{}
	rewatch := func() {
		if w != nil {
			w.Stop()
			time.Sleep(100 * time.Millisecond)
		}
		if ctx.Err() != nil {
			t.Fatalf("%d children Ready: not within %s (%d Ready)", n, 10*converge, len(ready))
		}
		ready = map[string]bool{}
		if w, err = wc.Watch(ctx, &pvapi.PackageVariantList{}, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
	}
	rewatch()
	defer func() { w.Stop() }()
	start := time.Now()
	if err := e.c.Create(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	var secs float64
	for secs == 0 {
		ev, ok := <-w.ResultChan()
		v, isPV := ev.Object.(*pvapi.PackageVariant)
		if !ok || !isPV {
			rewatch()
			continue
		}
		if r, _ := isReady(v); r && ev.Type != watch.Deleted {
			ready[v.Name] = true
		} else {
			delete(ready, v.Name)
		}
		if len(ready) == n {
			secs = time.Since(start).Seconds()
		}
	}
	deadline := time.Now().Add(10 * converge)
	last := ""
	for {
		ok, msg := e.allReady(n)
		if ok {
			drafts := 0
			for _, r := range e.revisionNames(t) {
				if r == "Draft" {
					drafts++
				}
			}
			if ok, msg = drafts == n, fmt.Sprintf("%d children Ready, %d drafts", n, drafts); ok {
				break
			}
		}
		last = msg
		if time.Now().After(deadline) {
			t.Fatalf("%d children Ready with one draft each: not within %s; last: %s", n, 10*converge, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // the audit log is written asynchronously
	return secs, audit(t, offset, e.ns, func(user, agent string) bool { return isPvkit(user, agent) || isPorchControllers(user, agent) })
}

// benchRepos sets up the blueprint, the cluster's objects and N
// repositories labelled bench=yes, and waits until Porch has synced them
// all, so that the clock measures the controller, not the sync.
func (e *env) benchRepos(t *testing.T, n int) []string {
	e.upstream(blueprint(t))
	e.apply(cluster)
	repos := make([]string, n)
	for i := range repos {
		repos[i] = fmt.Sprintf("r-%03d", i)
		e.repository(repos[i], e.bareRepo(repos[i]), true, map[string]string{"bench": "yes"})
	}
	e.eventually(3*converge, "repositories ready", func() (bool, string) {
		out, err := kubectl("", "get", "repositories", "-n", e.ns, "-o", "jsonpath={range .items[*]}{.status.conditions[0].status}{\"\\n\"}{end}")
		if err != nil {
			return false, err.Error()
		}
		return strings.Count(out, "True") == n+1, out
	})
	return repos
}

// retire clears a run away, so that the next one starts on an equal stack:
// the set and its children are deleted while their controller still runs
// (which deletes the drafts), then the repositories, which Porch would
// otherwise keep syncing every 5 s for the rest of the benchmark.
func (e *env) retire(t *testing.T) {
	// A set deletes its children itself, the last wave first, under its
	// mass-deletion guard (rule set-deletion): lifted here. No
	// kube-controller-manager, so no garbage collector: whatever is left
	// is deleted by name.
	if _, err := kubectl("", "annotate", "-n", e.ns, "packagevariantsets", "--all", "--overwrite", "pvkit.dev/allow-mass-deletion=true"); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectl("", "delete", "-n", e.ns, "packagevariantsets", "--all", "--wait=false"); err != nil {
		t.Fatal(err)
	}
	if _, err := kubectl("", "delete", "-n", e.ns, "packagevariants", "--all", "--wait=false"); err != nil {
		t.Fatal(err)
	}
	e.eventually(10*converge, "the children gone", func() (bool, string) {
		var l pvapi.PackageVariantList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d children", len(l.Items))
	})
	e.eventually(2*converge, "the sets gone", func() (bool, string) {
		var l pvsapi.PackageVariantSetList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		return len(l.Items) == 0, fmt.Sprintf("%d sets", len(l.Items))
	})
	if _, err := kubectl("", "delete", "-n", e.ns, "repositories", "--all", "--timeout=120s"); err != nil {
		t.Fatal(err)
	}
}

// cpuTimes are the CPU seconds (user and system) each process of the stack
// and the controller has used, from /proc: which side a run's time goes to
// on a machine whose cores they share.
type cpuTimes map[string]float64

// cpuNow reads them now: the stack's processes (their pid files) and the
// controller under test (pvkit's or Porch's).
func cpuNow() cpuTimes {
	out := cpuTimes{}
	pids := stackPids()
	for name, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: utime is the
		// 12th, stime the 13th, in clock ticks (100 a second on Linux).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		out[name] = (ut + st) / 100
	}
	return out
}

// stackPids are the stack's processes (their pid files) and the
// controller under test (pvkit's or Porch's), by name.
func stackPids() map[string]int {
	pids := map[string]int{}
	for _, name := range []string{"porch-server", "kube-apiserver", "etcd", "function-runner"} {
		if b, err := os.ReadFile(filepath.Join(stackDir, name+".pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				pids[name] = pid
			}
		}
	}
	if controller != nil && controller.Process != nil {
		pids["pvkit-controller"] = controller.Process.Pid
	}
	if porchControllers != nil && porchControllers.Process != nil {
		pids["porch-controllers"] = porchControllers.Process.Pid
	}
	return pids
}

// memoryNow is each of the stack's processes' RSS and its peak (VmHWM),
// sorted by name: "porch-server 512 MB (peak 640 MB), ...".
func memoryNow() string {
	pids := stackPids()
	names := make([]string, 0, len(pids))
	for n := range pids {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		if rss, peak := procstat.Memory(pids[name]); rss > 0 {
			out = append(out, fmt.Sprintf("%s %d MB (peak %d MB)", name, rss>>20, peak>>20))
		}
	}
	return strings.Join(out, ", ")
}

// since says how much CPU each process used since c, sorted by name.
func (c cpuTimes) since() string {
	now := cpuNow()
	names := make([]string, 0, len(now))
	for n := range now {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f", n, now[n]-c[n]))
	}
	return strings.Join(parts, ", ")
}
