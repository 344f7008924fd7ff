package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/internal/procstat"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	pvs "github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestScale is one row of docs/scale.md (make bench-scale runs it once per
// size, each in a process of its own, so that RSS is the size's): the
// fleet fanned out (the stand-in answering at once), then, against the
// stand-in at its measured latency, the controller's cold start (new
// reconcilers, nothing remembered, every set and variant queued as the
// informers' first list queues them), a steady resync (every one queued
// again), the process's memory, and a three-wave staged rollout of a new
// upstream revision. Not a pass/fail test: the figures are written to
// PVKIT_SCALE_OUT (JSON) and logged.
func TestScale(t *testing.T) {
	c := configFromEnv(t)
	r := run(t, c)
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scale: %s", out)
	if p := os.Getenv("PVKIT_SCALE_OUT"); p != "" {
		if err := os.WriteFile(p, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScaleHarness runs the harness small (40 variants in sets of 25, the
// stand-in at a twentieth of its latency), as make test does, and checks
// what the report's rows rest on: the fleet converges, the cold start
// reconciles every object once and reads no listing from Porch, a steady
// resync writes nothing, and the rollout publishes every child at the new
// revision, each child timed.
func TestScaleHarness(t *testing.T) {
	c := config{n: 40, setSize: 25, shape: "small", workers: 8, latency: 0.05, rollout: true, timeout: 2 * time.Minute}
	r := run(t, c)
	if r.Sets != 2 {
		t.Errorf("sets: got %d, want 2", r.Sets)
	}
	if r.Cold.Reconciles < c.n+r.Sets {
		t.Errorf("the cold start reconciled %d objects, want at least %d", r.Cold.Reconciles, c.n+r.Sets)
	}
	for _, p := range []struct {
		name string
		ph   phase
	}{{"cold start", r.Cold}, {"steady resync", r.Resync}} {
		for _, w := range []string{"create", "updateResources", "update", "approve", "delete"} {
			if p.ph.ByCall[w] > 0 {
				t.Errorf("the %s wrote to Porch: %s %d", p.name, w, p.ph.ByCall[w])
			}
		}
	}
	if r.Rollout.Children != c.n || r.Rollout.ByCall["approve"] < c.n {
		t.Errorf("the rollout timed %d children and approved %d, want %d", r.Rollout.Children, r.Rollout.ByCall["approve"], c.n)
	}
	if r.Rollout.P50 <= 0 || r.Rollout.P90 < r.Rollout.P50 {
		t.Errorf("per child: p50 %.2f s, p90 %.2f s", r.Rollout.P50, r.Rollout.P90)
	}
	if r.Rollout.Requests < 4 {
		t.Errorf("the rollout made %.2f Porch requests per variant: fewer than its writes (create, update of the resources, proposal, approval)", r.Rollout.Requests)
	}
}

// run is one scale run.
func run(t *testing.T, c config) result {
	ctrl.SetLogger(logr.Discard())
	f := newFleet(t, c)
	r := result{N: c.n, Shape: c.shape, Sets: len(f.sets), Workers: c.workers, Latency: c.latency, Date: time.Now().UTC().Format("2006-01-02"), Commit: os.Getenv("PVKIT_SCALE_COMMIT")}

	// The fan-out, the stand-in answering at once: pvkit's own CPU per target.
	f.st.setScale(0)
	l := f.start(16)
	m := measure()
	f.queueSets(l)
	f.waitFleet(t, l, 1, c.timeout)
	r.Build = m.phase(c.n, f.st.resetCalls())
	l.stop()

	// Cold start against the stand-in.
	f.st.setScale(c.latency)
	l = f.start(c.workers)
	m = measure()
	f.queueAll(l)
	if !l.waitIdle(time.Second, c.timeout) {
		t.Fatalf("the cold start did not settle in %s", c.timeout)
	}
	r.Cold = m.phase(c.n, f.st.resetCalls())
	r.Cold.Seconds -= 1 // the settle
	r.Cold.Reconciles = int(l.done.Load())

	// A steady resync.
	m = measure()
	before := l.done.Load()
	f.queueAll(l)
	if !l.waitIdle(time.Second, c.timeout) {
		t.Fatalf("the steady resync did not settle in %s", c.timeout)
	}
	r.Resync = m.phase(c.n, f.st.resetCalls())
	r.Resync.Seconds -= 1
	r.Resync.Reconciles = int(l.done.Load() - before)
	r.HeapMB, r.RSSMB, r.PeakRSSMB = memory()
	r.MemoryRecords, _ = f.pv.MemorySize()

	if c.rollout {
		f.st.mark()
		m = measure()
		f.st.Publish(ns, "blueprints", "app", storetest.Release(2))
		f.queueSets(l)
		f.waitRollout(t, l, c.timeout)
		r.Rollout = m.phase(c.n, f.st.resetCalls())
		per := f.st.perChild()
		r.Rollout.Children = len(per)
		if len(per) > 0 {
			r.Rollout.P50 = per[len(per)/2].Seconds()
			r.Rollout.P90 = per[len(per)*9/10].Seconds()
		}
	}
	l.stop()
	r.Failures = int(l.failures.Load())
	return r
}

// config is one scale run.
type config struct {
	n, workers, setSize int
	shape               string
	latency             float64
	rollout             bool
	timeout             time.Duration // each phase's
}

// configFromEnv reads PVKIT_SCALE (the variants; unset: skip),
// PVKIT_SCALE_SHAPE (large: sets of up to 5,000 children; small: sets of
// 25), PVKIT_SCALE_WORKERS (--workers, 32), PVKIT_SCALE_LATENCY (the
// stand-in's latency multiplier, 1) and PVKIT_SCALE_ROLLOUT (0: no
// rollout).
func configFromEnv(t *testing.T) config {
	s := os.Getenv("PVKIT_SCALE")
	if s == "" {
		t.Skip("the scale runs are make bench-scale's (PVKIT_SCALE=1000)")
	}
	c := config{shape: "large", workers: 32, latency: 1, rollout: true, timeout: time.Hour}
	var err error
	if c.n, err = strconv.Atoi(s); err != nil || c.n < 2 {
		t.Fatalf("PVKIT_SCALE=%q: want a number, 2 or more", s)
	}
	if v := os.Getenv("PVKIT_SCALE_SHAPE"); v != "" {
		c.shape = v
	}
	switch c.shape {
	case "large":
		c.setSize = 5000
	case "small":
		c.setSize = 25
	default:
		t.Fatalf("PVKIT_SCALE_SHAPE=%q: want large or small", c.shape)
	}
	if v := os.Getenv("PVKIT_SCALE_WORKERS"); v != "" {
		if c.workers, err = strconv.Atoi(v); err != nil || c.workers < 1 {
			t.Fatalf("PVKIT_SCALE_WORKERS=%q: want a number, 1 or more", v)
		}
	}
	if v := os.Getenv("PVKIT_SCALE_LATENCY"); v != "" {
		if c.latency, err = strconv.ParseFloat(v, 64); err != nil || c.latency < 0 {
			t.Fatalf("PVKIT_SCALE_LATENCY=%q: want a multiplier, 0 or more", v)
		}
	}
	c.rollout = os.Getenv("PVKIT_SCALE_ROLLOUT") != "0"
	return c
}

// result is one row's figures.
type result struct {
	N             int     `json:"n"`
	Shape         string  `json:"shape"`
	Sets          int     `json:"sets"`
	Workers       int     `json:"workers"`
	Latency       float64 `json:"latency"`
	Date          string  `json:"date"`
	Commit        string  `json:"commit,omitempty"`
	Build         phase   `json:"build"`
	Cold          phase   `json:"cold"`
	Resync        phase   `json:"resync"`
	Rollout       phase   `json:"rollout"`
	HeapMB        int     `json:"heapMB"`
	RSSMB         int     `json:"rssMB"`
	PeakRSSMB     int     `json:"peakRSSMB"`
	MemoryRecords int     `json:"memoryRecords"`
	Failures      int     `json:"failures"`
}

// phase is one phase's wall time, the process's CPU, and the requests to
// the stand-in (Porch) per variant (the watch cache's reads counted in
// ByCall, not in Requests).
type phase struct {
	Seconds     float64        `json:"seconds"`
	CPUSeconds  float64        `json:"cpuSeconds"`
	CPUmsPerVar float64        `json:"cpuMsPerVariant"`
	Requests    float64        `json:"requestsPerVariant"`
	ByCall      map[string]int `json:"byCall,omitempty"`
	Reconciles  int            `json:"reconciles,omitempty"`
	Children    int            `json:"children,omitempty"`
	P50         float64        `json:"p50,omitempty"`
	P90         float64        `json:"p90,omitempty"`
}

type meter struct {
	start time.Time
	cpu   time.Duration
}

func measure() meter { return meter{start: time.Now(), cpu: cpuTime()} }

func (m meter) phase(n int, calls map[string]int) phase {
	cpu := (cpuTime() - m.cpu).Seconds()
	total := 0
	for k, v := range calls {
		if !strings.HasPrefix(k, "cache.") {
			total += v
		}
	}
	return phase{Seconds: time.Since(m.start).Seconds(), CPUSeconds: cpu, CPUmsPerVar: 1000 * cpu / float64(n), Requests: float64(total) / float64(n), ByCall: calls}
}

// cpuTime is the process's user and system CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memory is the heap in use after a collection, the RSS and its peak, in
// MB.
func memory() (heap, rss, peak int) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r, p := procstat.Memory(0)
	return int(ms.HeapAlloc >> 20), int(r >> 20), int(p >> 20)
}

// fleet is the cluster, the stand-in and the controller's reconcilers.
type fleet struct {
	cfg    config
	st     *standin
	client client.Client
	loop   *loop
	sets   []string
	names  []string
	pv     interface{ MemorySize() (int, int) }
}

func newFleet(t *testing.T, c config) *fleet {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	f := &fleet{cfg: c, st: newStandin(1)}
	var objs []client.Object
	for i := range c.n {
		set := fmt.Sprintf("set-%03d", i/c.setSize)
		if i%c.setSize == 0 {
			f.sets = append(f.sets, set)
		}
		labels := map[string]string{"set": set}
		if i%c.setSize == 0 {
			labels["ring"] = "canary"
		}
		name := fmt.Sprintf("edge-%05d", i)
		objs = append(objs, &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}})
		f.st.AddRepository(ns, name)
	}
	f.st.Publish(ns, "blueprints", "app", storetest.Release(1))
	f.client = watched(embedded.New(embedded.Options{Scheme: scheme, Objects: objs}), &f.loop)
	for _, s := range f.sets {
		o := &pvsapi.PackageVariantSet{}
		if err := sigsyaml.Unmarshal([]byte(setYAML(s, min(c.setSize, c.n))), o); err != nil {
			t.Fatal(err)
		}
		o.Namespace = ns
		if err := f.client.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// start builds new reconcilers (a controller started afresh: nothing
// remembered) and runs them with w workers.
func (f *fleet) start(w int) *loop {
	pv, pvs := reconcilers.New(reconcilers.Options{Client: f.client, Store: f.st, ApproveByPolicy: true, Workers: w})
	f.pv = pv
	f.loop = newLoop(pv, pvs)
	f.loop.start(context.Background(), w)
	return f.loop
}

func (f *fleet) queueSets(l *loop) {
	for _, s := range f.sets {
		l.q.Add(item{set: true, name: s})
	}
}

// queueAll queues every set and variant, as the informers' lists do.
func (f *fleet) queueAll(l *loop) {
	f.queueSets(l)
	for _, n := range f.names {
		l.q.Add(item{name: n})
	}
}

// waitFleet waits until every target has a child Ready at its generation
// and published at the upstream's revision rev, the loop idle.
func (f *fleet) waitFleet(t *testing.T, l *loop, rev int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		ok, msg := f.converged(rev)
		if ok && l.waitIdle(500*time.Millisecond, timeout) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fleet did not converge in %s: %s", timeout, msg)
		}
		time.Sleep(2 * time.Second)
	}
}

func (f *fleet) converged(rev int) (bool, string) {
	var l pvapi.PackageVariantList
	if err := f.client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		return false, err.Error()
	}
	if len(l.Items) != f.cfg.n {
		return false, fmt.Sprintf("%d children of %d", len(l.Items), f.cfg.n)
	}
	f.names = f.names[:0]
	notReady := 0
	first := ""
	for i := range l.Items {
		v := &l.Items[i]
		f.names = append(f.names, v.Name)
		c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
		if c == nil || c.Status != metav1.ConditionTrue || v.Status.ObservedGeneration != v.Generation {
			notReady++
			if first == "" && c != nil {
				first = v.Name + ": " + c.Reason + ": " + c.Message
			}
		}
	}
	if notReady > 0 {
		return false, fmt.Sprintf("%d not Ready (%s)", notReady, first)
	}
	published := f.st.publishedAt(rev)
	if published < f.cfg.n {
		return false, fmt.Sprintf("%d of %d published at revision %d", published, f.cfg.n, rev)
	}
	return true, ""
}

// waitRollout waits until every set's rollout is Complete at the
// upstream's second revision and every target published at it.
func (f *fleet) waitRollout(t *testing.T, l *loop, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for {
		var sl pvsapi.PackageVariantSetList
		if err := f.client.List(context.Background(), &sl, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		complete := 0
		msg := ""
		for _, s := range sl.Items {
			ro := s.Status.Rollout
			if ro != nil && ro.Phase == pvs.RolloutComplete && ro.From != nil {
				complete++
			} else if ro != nil && msg == "" {
				msg = fmt.Sprintf("%s: %s: %s", s.Name, ro.Phase, ro.Message)
			}
		}
		if complete == len(sl.Items) && f.st.publishedAt(2) == f.cfg.n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rollout did not complete in %s: %d of %d sets complete, %d published (%s)", timeout, complete, len(sl.Items), f.st.publishedAt(2), msg)
		}
		time.Sleep(time.Second)
	}
}

// setYAML is a set over the repositories labelled set=name: a context key
// from CEL, approval by policy, a three-wave staged rollout (a canary;
// 30% up to 50 at a time; the rest a quarter of the set at a time).
func setYAML(name string, size int) string {
	return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: %s
spec:
  upstream: {repo: blueprints, package: app}
  targets:
  - repositorySelector:
      matchLabels: {set: %s}
    template:
      downstream: {package: app}
      annotations: {approval.nephio.org/policy: always}
      packageContext:
        dataExprs:
        - {key: repo, valueExpr: repository.name}
  rollout:
    waves:
    - name: canary
      selector:
        matchLabels: {ring: canary}
      size: 1
    - name: early
      size: 30%%
      maxUpdate: 50
    - name: rest
      maxUpdate: %d
`, name, name, max(size/4, 1))
}
