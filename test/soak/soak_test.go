// Package soak runs pvkit's two reconcilers for a long time over a large
// fleet, under compressed churn and injected faults, and checks the
// invariants that months of running must keep (issue 61 #4; make soak).
package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit/kittest"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/variant"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	sigsyaml "sigs.k8s.io/yaml"
)

const ns = "soak"

// config is one soak: how long, how many variants, the seed, and how many
// workers reconcile the variants at once.
type config struct {
	duration time.Duration
	variants int
	seed     int64
	workers  int
}

// configFromEnv reads PVKIT_SOAK_DURATION, PVKIT_SOAK_VARIANTS and
// PVKIT_SOAK_SEED (make soak: 30 minutes, 1,000 variants) and
// PVKIT_SOAK_WORKERS; by default a minute over 200 variants with four
// workers, as make test runs it (-short: 15 s, 60). With one worker a
// seed replays exactly; with more, the workers' interleaving is the
// scheduler's.
func configFromEnv(t *testing.T) config {
	c := config{duration: time.Minute, variants: 200, seed: 1, workers: 4}
	if testing.Short() {
		c.duration, c.variants = 15*time.Second, 60
	}
	if s := os.Getenv("PVKIT_SOAK_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("PVKIT_SOAK_DURATION=%q: %v", s, err)
		}
		c.duration = d
	}
	for _, e := range []struct {
		name string
		dst  *int64
	}{{"PVKIT_SOAK_SEED", &c.seed}} {
		if s := os.Getenv(e.name); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("%s=%q: %v", e.name, s, err)
			}
			*e.dst = n
		}
	}
	if s := os.Getenv("PVKIT_SOAK_WORKERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PVKIT_SOAK_WORKERS=%q: want a number, 1 or more", s)
		}
		c.workers = n
	}
	if s := os.Getenv("PVKIT_SOAK_VARIANTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 8 {
			t.Fatalf("PVKIT_SOAK_VARIANTS=%q: want a number, 8 or more", s)
		}
		c.variants = n
	}
	return c
}

// TestSoak: the set and variant reconcilers over a fleet for the soak's
// duration, round after round (each round reconciles every set, then
// every variant, in an order the seed draws), with churn between rounds
// (new upstream revisions, approvals and rejections by a person, a
// person's edits of drafts, variants deleted and made again, commits on
// the branch behind Porch's back and their undoing) and faults (every
// seventh status patch a conflict, a fifth of the draft writes landing
// but answered with an error, the controller restarted every 25 rounds:
// its memory lost). After every round, the invariants (invariants.go);
// memory sampled, and after the warm-up (a fifth of the run) it must stay
// flat. The figures are logged (docs/performance.md).
func TestSoak(t *testing.T) {
	c := configFromEnv(t)
	s := newSoak(t, c)
	start := time.Now()
	warm := start.Add(c.duration / 5)
	var warmHeap, warmRSS uint64
	lastSample := start
	for time.Since(start) < c.duration {
		s.round++
		s.churn()
		s.reconcileAll()
		s.check()
		if t.Failed() {
			t.Fatalf("seed %d: an invariant broke at round %d (replay with PVKIT_SOAK_SEED=%d PVKIT_SOAK_VARIANTS=%d PVKIT_SOAK_WORKERS=1)", c.seed, s.round, c.seed, c.variants)
		}
		if time.Since(lastSample) >= c.duration/20 {
			lastSample = time.Now()
			heap, rss := sample()
			s.samples = append(s.samples, fmt.Sprintf("%s heap %d MB rss %d MB", time.Since(start).Round(time.Second), heap>>20, rss>>20))
			if warmHeap == 0 && time.Now().After(warm) {
				warmHeap, warmRSS = heap, rss
			}
		}
	}
	heap, rss := sample()
	t.Logf("soak: %s, seed %d, %d variants (%d deleted and made again), %d workers, %d rounds, %d reconciles, %d Porch writes, %d upstream revisions; faults: %d status conflicts, %d writes answered with an error, %d refused, %d stale reads of a variant, %d restarts; memory records at the end %d",
		c.duration, c.seed, c.variants, s.made, c.workers, s.round, s.reconciles, s.store.Writes(), s.upstreams, s.conflictsInjected(), s.store.lost, s.store.refused, s.lag.stale, s.restarts, s.memRecords())
	t.Logf("soak: heap %d MB at start, %d MB after warm-up, %d MB at the end; RSS %d MB, %d MB, %d MB", s.startHeap>>20, warmHeap>>20, heap>>20, s.startRSS>>20, warmRSS>>20, rss>>20)
	t.Logf("soak: samples: %s", strings.Join(s.samples, "; "))
	if warmHeap > 0 && heap > warmHeap+warmHeap/4+32<<20 {
		t.Errorf("the heap grew from %d MB after warm-up to %d MB at the end: memory is not flat", warmHeap>>20, heap>>20)
	}
}

// sample is the heap in use after a collection, and the process's RSS.
func sample() (heap, rss uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, _ = procstat.Memory(0)
	return ms.HeapAlloc, rss
}

// soak is the fleet, the controller and what the person did.
type soak struct {
	t          *testing.T
	rng        *rand.Rand
	cfg        config
	store      *faultyStore
	client     client.Client
	conflicts  *kittest.Conflicts
	lag        *lagging
	pv         *packagevariant.Reconciler
	pvs        *packagevariantset.Reconciler
	round      int
	reconciles int
	upstreams  int
	made       int
	restarts   int
	// edited are the drafts a person changed (by name, the round), which
	// pvkit must not approve and whose content is not its last write.
	edited map[string]int
	// seen is the round a draft was first seen, by name.
	seen map[string]int
	// gone are the repositories of deleted variants, their packages to
	// remove once the variant is gone.
	gone                []string
	startHeap, startRSS uint64
	samples             []string
}

// sets are the soak's sets: half ask for approval by policy, half are
// approved by a person.
var sets = []string{"auto-a", "auto-b", "manual-a", "manual-b"}

func newSoak(t *testing.T, c config) *soak {
	ctrl.SetLogger(logr.Discard()) // the reconcilers' logs are not the soak's output
	s := &soak{t: t, rng: rand.New(rand.NewSource(c.seed)), cfg: c, edited: map[string]int{}, seen: map[string]int{}}
	s.startHeap, s.startRSS = sample()
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	var objs []client.Object
	st := &faultyStore{Store: fakestore.New(), rng: s.rng}
	for i := 0; i < c.variants; i++ {
		name := fmt.Sprintf("edge-%04d", i)
		objs = append(objs, &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"set": sets[i%len(sets)]}}})
		st.AddRepository(ns, name)
	}
	cluster := embedded.New(embedded.Options{Scheme: scheme, Objects: objs})
	s.conflicts = &kittest.Conflicts{}
	s.conflicts.EveryNth(7)
	s.client = interceptor.NewClient(cluster, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := s.conflicts.Take(pvapi.GroupVersion.WithResource("packagevariants").GroupResource(), o); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
	})
	s.store = st
	st.Publish(ns, "blueprints", "app", storetest.Release(1))
	s.upstreams = 1
	for _, name := range sets {
		s.create(setYAML(name))
	}
	s.start()
	return s
}

// start (re)starts the controller: new reconcilers, nothing remembered.
func (s *soak) start() {
	s.lag = &lagging{Client: s.client, rng: rand.New(rand.NewSource(s.cfg.seed + int64(s.restarts)))}
	s.pv, s.pvs = reconcilers.New(reconcilers.Options{Client: s.lag, Reader: s.client, Store: s.store, ApproveByPolicy: true, Workers: s.cfg.workers})
}

func (s *soak) create(text string) {
	s.t.Helper()
	var u struct {
		Kind string `json:"kind"`
	}
	if err := sigsyaml.Unmarshal([]byte(text), &u); err != nil {
		s.t.Fatal(err)
	}
	var o client.Object = &pvsapi.PackageVariantSet{}
	if u.Kind == "PackageVariant" {
		o = &pvapi.PackageVariant{}
	}
	if err := sigsyaml.Unmarshal([]byte(text), o); err != nil {
		s.t.Fatal(err)
	}
	o.SetNamespace(ns)
	if err := s.client.Create(context.Background(), o); err != nil {
		s.t.Fatal(err)
	}
}

// setYAML is a set over the repositories labelled set=name; the auto-*
// sets' children ask for approval by policy.
func setYAML(name string) string {
	ann := ""
	if strings.HasPrefix(name, "auto-") {
		ann = "      annotations: {approval.nephio.org/policy: always}\n"
	}
	return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: %s
  annotations: {pvkit.dev/allow-mass-deletion: "true"}
spec:
  upstream: {repo: blueprints, package: app}
  targets:
  - repositorySelector:
      matchLabels: {set: %s}
    template:
      downstream: {package: app}
%s      packageContext:
        dataExprs:
        - {key: repo, valueExpr: repository.name}
`, name, name, ann)
}

// reconcileAll reconciles every set, then every variant, in an order the
// seed draws (sorted first: the draws are the seed's whatever the
// listings' order).
func (s *soak) reconcileAll() {
	ctx := context.Background()
	for _, name := range sets {
		s.reconciles++
		_, _ = s.pvs.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
	}
	names := s.variantNames()
	s.rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	trace := os.Getenv("PVKIT_SOAK_TRACE")
	s.lag.snapshot(s.variants())
	queue := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < s.cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range queue {
				w := s.store.Writes()
				res, err := s.pv.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}})
				if name == trace {
					s.t.Logf("round %d: %s: %d writes, %+v, %v", s.round, name, s.store.Writes()-w, res, err)
				}
			}
		}()
	}
	for _, name := range names {
		s.reconciles++
		queue <- name
	}
	close(queue)
	wg.Wait()
}

// lagging is the controller's cache of variants: a third of its reads of
// a variant serve it as it was when the round began (an informer behind
// the writes of the round), the rest as it is; the reconcilers read past
// it (Reader) where they must.
type lagging struct {
	client.Client
	mu     sync.Mutex
	rng    *rand.Rand
	before map[string]*pvapi.PackageVariant
	stale  int
}

func (l *lagging) snapshot(vs []pvapi.PackageVariant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.before = make(map[string]*pvapi.PackageVariant, len(vs))
	for i := range vs {
		l.before[vs[i].Name] = vs[i].DeepCopy()
	}
}

func (l *lagging) Get(ctx context.Context, key client.ObjectKey, o client.Object, opts ...client.GetOption) error {
	if v, ok := o.(*pvapi.PackageVariant); ok {
		l.mu.Lock()
		old, stale := l.before[key.Name], l.rng.Intn(3) == 0
		if stale && old != nil {
			l.stale++
		}
		l.mu.Unlock()
		if stale && old != nil {
			old.DeepCopyInto(v)
			return nil
		}
	}
	return l.Client.Get(ctx, key, o, opts...)
}

func (s *soak) variantNames() []string {
	var l pvapi.PackageVariantList
	if err := s.client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		s.t.Fatal(err)
	}
	out := make([]string, 0, len(l.Items))
	for _, v := range l.Items {
		out = append(out, v.Name)
	}
	sort.Strings(out)
	return out
}

func (s *soak) variants() []pvapi.PackageVariant {
	var l pvapi.PackageVariantList
	if err := s.client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		s.t.Fatal(err)
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items
}

func (s *soak) memRecords() int {
	n, _ := s.pv.MemorySize()
	return n
}

func (s *soak) conflictsInjected() int { return s.conflicts.Taken() }

// faultyStore is the memory store with Porch's branch placeholder kept as
// Porch keeps it (an approval moves it), upgrades made as Porch makes them
// (the local revision's files, the upstream's new ones merged in), a
// fifth of the draft writes landing but answered with an error (Porch
// v1.5.3's "remote not found") and a tenth refused before they land ("the
// server is currently unable to handle the request": e2e-porch, loaded,
// an upgrade draft complete but for its record, then waited for a person).
type faultyStore struct {
	*fakestore.Store
	mu      sync.Mutex
	rng     *rand.Rand
	lose    bool
	lost    int
	refused int
}

func (f *faultyStore) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	d, err := f.Store.CreateDraft(ctx, spec)
	if err != nil || spec.Task.Type != store.Upgrade {
		return d, err
	}
	return f.Store.MergeLocal(ctx, spec, d)
}

func (f *faultyStore) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	f.mu.Lock()
	refuse := f.lose && f.rng.Intn(10) == 0
	if refuse {
		f.refused++
	}
	f.mu.Unlock()
	if refuse {
		return store.RenderStatus{}, store.Resources{}, errors.New("the server is currently unable to handle the request (put packagerevisionresources.porch.kpt.dev " + name + ")")
	}
	rs, after, err := f.Store.UpdateResourcesRendered(ctx, namespace, name, res)
	f.mu.Lock()
	lose := f.lose && err == nil && f.rng.Intn(5) == 0
	if lose {
		f.lost++
	}
	f.mu.Unlock()
	if lose {
		return rs, store.Resources{}, errors.New("Internal error occurred: remote not found")
	}
	return rs, after, err
}

func (f *faultyStore) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	rev, err := f.Store.ApproveRevision(ctx, namespace, name)
	if err == nil {
		f.placeholder(rev)
	}
	return rev, err
}

// placeholder moves the branch placeholder of a published revision's
// package to its files, as Porch's approval does.
func (f *faultyStore) placeholder(rev store.Revision) {
	f.SetPlaceholder(store.Revision{Namespace: rev.Namespace, Repository: rev.Repository, Package: rev.Package, Workspace: "main",
		Revision: -1, Lifecycle: store.Published, Lock: rev.Lock, Name: store.RevisionName(rev.Repository, rev.Package, "main")}, f.Files(rev.Namespace, rev.Name))
}

// gateTrue reports whether every readiness gate of a package's Kptfile is
// True.
func gateTrue(files map[string]string) bool {
	kf, err := kptfile.FromFiles(files)
	if err != nil || kf == nil {
		return false
	}
	gate, _, err := kf.NotReady()
	return err == nil && gate == ""
}

// digest is a package's content by meaning, as a variant records it.
func digest(files map[string]string) string { return variant.Fingerprint(files) }
