package metrics

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// lines renders what reg gathers whose name starts with prefix as sorted
// `name{label=value,...} value` lines; a histogram as its sample count.
func lines(t *testing.T, reg *prometheus.Registry, prefix string) []string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), prefix) {
			continue
		}
		for _, m := range f.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			var v float64
			switch {
			case m.Gauge != nil:
				v = m.GetGauge().GetValue()
			case m.Counter != nil:
				v = m.GetCounter().GetValue()
			case m.Histogram != nil:
				v = float64(m.GetHistogram().GetSampleCount())
			}
			out = append(out, fmt.Sprintf("%s{%s} %g", f.GetName(), strings.Join(ls, ","), v))
		}
	}
	sort.Strings(out)
	return out
}

func conds(ready metav1.ConditionStatus, reason string, stalled string) []metav1.Condition {
	c := []metav1.Condition{{Type: "Ready", Status: ready, Reason: reason}}
	if stalled != "" {
		c = append(c, metav1.Condition{Type: "Stalled", Status: metav1.ConditionTrue, Reason: stalled})
	}
	return c
}

// member is a PackageVariant of a grouped set, from the group revision rev.
func member(name, rev string) client.Object {
	return &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "a", Labels: map[string]string{"pvkit.dev/group": "free5gc"},
		Annotations: map[string]string{"pvkit.dev/group-revision": rev}}}
}

func TestFleetGauges(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	pv := func(name string, c []metav1.Condition) client.Object {
		return &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "a"}, Status: pvapi.PackageVariantStatus{Conditions: c}}
	}
	owned := []metav1.OwnerReference{{APIVersion: pvapi.GroupVersion.String(), Kind: "PackageVariant", Name: "v1", UID: "u"}}
	pr := func(name string, l porchapi.PackageRevisionLifecycle, owners []metav1.OwnerReference) client.Object {
		return &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "a", OwnerReferences: owners}, Spec: porchapi.PackageRevisionSpec{Lifecycle: l}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		pv("v1", conds(metav1.ConditionTrue, "NoErrors", "")),
		pv("v2", conds(metav1.ConditionTrue, "NoErrors", "")),
		pv("v3", conds(metav1.ConditionFalse, "Error", "StaleDraft")),
		pv("v4", conds(metav1.ConditionFalse, "Error", "")),
		pv("v5", nil),
		pv("v6", append(conds(metav1.ConditionTrue, "NoErrors", ""), metav1.Condition{Type: pvapi.ConditionPublishedDrift, Status: metav1.ConditionTrue, Reason: pvapi.ReasonNewerRevision})),
		// Issue 59: a group's release in flight, two members at v2, one at v1.
		member("g1", "blueprints.free5gc.v2"), member("g2", "blueprints.free5gc.v2"), member("g3", "blueprints.free5gc.v1"),
		&pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "b"}, Status: pvsapi.PackageVariantSetStatus{Conditions: conds(metav1.ConditionTrue, "Reconciled", "")}},
		rolloutSet("r1", metav1.Condition{Type: pvapi.ConditionRolloutPaused, Status: metav1.ConditionTrue, Reason: pvapi.ReasonErrorBudgetExceeded},
			metav1.Condition{Type: pvapi.ConditionRolloutProgressing, Status: metav1.ConditionFalse, Reason: pvapi.ReasonRolloutPhase}),
		rolloutSet("r2", metav1.Condition{Type: pvapi.ConditionRolloutComplete, Status: metav1.ConditionTrue, Reason: pvapi.ReasonAtTarget}),
		rolloutSet("r3"),
		pr("d1", porchapi.PackageRevisionLifecycleDraft, owned),
		pr("d2", porchapi.PackageRevisionLifecycleDraft, owned),
		pr("p1", porchapi.PackageRevisionLifecycleProposed, owned),
		pr("m1", porchapi.PackageRevisionLifecyclePublished, owned),
		pr("x1", porchapi.PackageRevisionLifecycleDraft, nil), // a person's draft: not pvkit's
		pr("x2", porchapi.PackageRevisionLifecycleDraft, []metav1.OwnerReference{{APIVersion: "other.example/v1", Kind: "PackageVariant", Name: "v", UID: "w"}}),
	).Build()
	reg := prometheus.NewRegistry()
	m, err := New(reg, c)
	if err != nil {
		t.Fatal(err)
	}
	// Issue 44 #5: the Porch store's failing repositories, each with how
	// long (a whole number of seconds ago, read as at least that).
	m.FailingRepositories(func() []RepositoryFailure {
		return []RepositoryFailure{{Namespace: "a", Repository: "deploy", Since: time.Now().Add(-100 * time.Hour)}}
	})
	want := []string{
		"pvkit_drafts{lifecycle=Draft} 2",
		"pvkit_drafts{lifecycle=Proposed} 1",
		"pvkit_metrics_collect_errors{kind=PackageRevision} 0",
		"pvkit_metrics_collect_errors{kind=PackageVariant} 0",
		"pvkit_metrics_collect_errors{kind=PackageVariantSet} 0",
		"pvkit_packagevariants{ready=False,reason=Error} 1",
		"pvkit_packagevariants{ready=False,reason=StaleDraft} 1",
		"pvkit_packagevariants{ready=True,reason=NoErrors} 3",
		"pvkit_packagevariants{ready=Unknown,reason=} 4",
		"pvkit_group_members{group=free5gc,revision=blueprints.free5gc.v1} 1",
		"pvkit_group_members{group=free5gc,revision=blueprints.free5gc.v2} 2",
		"pvkit_published_drift{reason=NewerRevision} 1",
		"pvkit_published_drift{reason=ContentChanged} 0",
		"pvkit_published_drift{reason=BranchUnreadable} 0",
		"pvkit_porch_repository_failing_seconds{namespace=a,repository=deploy} 360000",
		"pvkit_packagevariantsets{ready=True,reason=Reconciled} 1",
		"pvkit_packagevariantsets{ready=Unknown,reason=} 3",
		"pvkit_rollouts{phase=Complete,reason=AtTarget} 1",
		"pvkit_rollouts{phase=Paused,reason=ErrorBudgetExceeded} 1",
		"pvkit_rollouts{phase=Unknown,reason=} 1",
	}
	sort.Strings(want)
	if got := lines(t, reg, "pvkit_"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gauges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCollectErrorIsReported(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, l client.ObjectList, opts ...client.ListOption) error {
			if _, ok := l.(*porchapi.PackageRevisionList); ok {
				return fmt.Errorf("no kind PackageRevision in the cache")
			}
			return c.List(ctx, l, opts...)
		}}).Build()
	reg := prometheus.NewRegistry()
	if _, err := New(reg, c); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines(t, reg, "pvkit_metrics_collect_errors"), "\n")
	want := "pvkit_metrics_collect_errors{kind=PackageRevision} 1\npvkit_metrics_collect_errors{kind=PackageVariantSet} 0\npvkit_metrics_collect_errors{kind=PackageVariant} 0"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestPorchRequestsCountedByVerbAndCode(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	base := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			if _, ok := o.(*porchapi.PackageRevisionResources); ok {
				return apierrors.NewConflict(schema.GroupResource{Group: "porch.kpt.dev", Resource: "packagerevisionresources"}, o.GetName(), fmt.Errorf("changed"))
			}
			return c.Update(ctx, o, opts...)
		}}).Build()
	reg := prometheus.NewRegistry()
	m, err := New(reg, base)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Porch(base)
	ctx := context.Background()
	pr := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Name: "r.p.d", Namespace: "a"}}
	if err := c.Create(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pr), &porchapi.PackageRevision{}); err != nil { // the cache: not counted
		t.Fatal(err)
	}
	prr := &porchapi.PackageRevisionResources{ObjectMeta: metav1.ObjectMeta{Name: "r.p.d", Namespace: "a"}}
	if err := c.Get(ctx, client.ObjectKeyFromObject(prr), prr); !apierrors.IsNotFound(err) {
		t.Fatalf("get: %v", err)
	}
	if err := c.Update(ctx, prr); !apierrors.IsConflict(err) {
		t.Fatalf("update: %v", err)
	}
	if err := c.Update(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, pr); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "v", Namespace: "a"}}); err != nil { // not Porch's API
		t.Fatal(err)
	}
	want := []string{
		"pvkit_porch_requests_total{code=Conflict,resource=packagerevisionresources,verb=update} 1",
		"pvkit_porch_requests_total{code=NotFound,resource=packagerevisionresources,verb=get} 1",
		"pvkit_porch_requests_total{code=OK,resource=packagerevisions,verb=create} 1",
		"pvkit_porch_requests_total{code=OK,resource=packagerevisions,verb=delete} 1",
		"pvkit_porch_requests_total{code=OK,resource=packagerevisions,verb=update} 1",
	}
	if got := lines(t, reg, "pvkit_porch_requests_total"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := len(lines(t, reg, "pvkit_porch_request_duration_seconds")); got != 5 {
		t.Errorf("latency series: %d, want 5 (one per verb and resource)", got)
	}
}

func TestReconcileObserved(t *testing.T) {
	scheme, err := api.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := New(reg, fake.NewClientBuilder().WithScheme(scheme).Build())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	m.ObserveReconcile("PackageVariant", Result(false, nil), start)
	m.ObserveReconcile("PackageVariant", Result(true, fmt.Errorf("x")), start)
	m.ObserveReconcile("PackageVariant", Result(false, fmt.Errorf("x")), start)
	m.ObserveReconcile("PackageVariantSet", ResultWaiting, start)
	var none *Metrics
	none.ObserveReconcile("PackageVariant", ResultSuccess, start) // pvctl run: records nothing, no panic
	want := []string{
		"pvkit_reconcile_duration_seconds{kind=PackageVariant,result=error} 1",
		"pvkit_reconcile_duration_seconds{kind=PackageVariant,result=stalled} 1",
		"pvkit_reconcile_duration_seconds{kind=PackageVariant,result=success} 1",
		"pvkit_reconcile_duration_seconds{kind=PackageVariantSet,result=waiting} 1",
	}
	if got := lines(t, reg, "pvkit_reconcile"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := New(reg, nil); err != nil { // a second manager in one process takes the names over
		t.Errorf("second registration: %v", err)
	}
}

// rolloutSet is a set with a staged rollout and the given conditions.
func rolloutSet(name string, cs ...metav1.Condition) *pvsapi.PackageVariantSet {
	s := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "b"}, Status: pvsapi.PackageVariantSetStatus{Conditions: cs}}
	s.Spec.Rollout = &v1alpha2.Rollout{Waves: []v1alpha2.Wave{{Name: "all"}}}
	return s
}
