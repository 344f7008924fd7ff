// Package metrics is pvkit's Prometheus metrics, served by the controller
// on --metrics-bind-address (https://:8443/metrics, to authorized tokens) next to controller-runtime's
// own (controller_runtime_*, workqueue_*, rest_client_*). Every name starts
// with pvkit_:
//
//	pvkit_packagevariants{ready,reason}          gauge: variants by Ready status and reason
//	pvkit_packagevariantsets{ready,reason}       gauge: sets by Ready status and reason
//	pvkit_drafts{lifecycle}                      gauge: Draft and Proposed revisions a PackageVariant owns
//	pvkit_rollouts{phase,reason}                 gauge: sets with a staged rollout by phase (Progressing, Paused, Complete) and its reason
//	pvkit_porch_repository_failing_seconds{namespace,repository} gauge: how long a repository's writes have all failed
//	pvkit_published_drift{reason}                gauge: variants whose downstream changed behind their back (PublishedDrift)
//	pvkit_reconcile_duration_seconds{kind,result} histogram: one reconcile (result success|stalled|error|waiting|suspended)
//	pvkit_porch_requests_total{verb,resource,code} counter: requests to Porch's API (code OK or the error's reason)
//	pvkit_porch_request_duration_seconds{verb,resource} histogram: their latency
//
// The gauges are counted from the informer cache when Prometheus
// scrapes (Collector), so every replica, the standby included, reports the
// same fleet; the counters and histograms move only on the leader, the
// replica that reconciles. Reason is the Stalled reason when the object is
// stalled, else the Ready reason; an object never reconciled counts as
// ready="Unknown", reason="".
//
// Porch requests are the writes and the reads that bypass the cache:
// create, update and delete of packagerevisions, get and update of
// packagerevisionresources. PackageRevisions are read from the cache, and
// those reads are not counted.
package metrics

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// Results of a reconcile, the result label of pvkit_reconcile_duration_seconds.
const (
	ResultSuccess = "success"
	ResultStalled = "stalled"
	ResultError   = "error"
	ResultWaiting = "waiting"
	// ResultSuspended is a reconcile of a suspended object: nothing done.
	ResultSuspended = "suspended"
)

// Metrics holds pvkit's counters and histograms. New registers them on a
// registry; a nil *Metrics records nothing (pvctl run, tests).
type Metrics struct {
	reconcile *prometheus.HistogramVec
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	collector *Collector
}

// RepositoryFailure is a Porch repository whose writes keep failing, since
// when (the Porch store's record of it).
type RepositoryFailure struct {
	Namespace, Repository string
	Since                 time.Time
}

// FailingRepositories gives the collector the Porch store's failing
// repositories, for pvkit_porch_repository_failing_seconds.
func (m *Metrics) FailingRepositories(f func() []RepositoryFailure) {
	if m != nil {
		m.collector.failing.Store(&f)
	}
}

// New registers pvkit's counters and histograms, and the fleet gauges
// counted from r (the manager's cached client) at each scrape.
func New(reg prometheus.Registerer, r client.Reader) (*Metrics, error) {
	m := &Metrics{
		reconcile: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pvkit_reconcile_duration_seconds",
			Help:    "Time one reconcile of a PackageVariant or PackageVariantSet took, by kind and result (success, stalled, error, waiting).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"kind", "result"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pvkit_porch_requests_total",
			Help: "Requests pvkit sent to Porch's API, by verb, resource and outcome (OK, or the Kubernetes reason of the error).",
		}, []string{"verb", "resource", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pvkit_porch_request_duration_seconds",
			Help:    "Latency of pvkit's requests to Porch's API, by verb and resource.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"verb", "resource"}),
	}
	m.collector = &Collector{Reader: r}
	for _, c := range []prometheus.Collector{m.reconcile, m.requests, m.latency, m.collector} {
		err := reg.Register(c)
		var again prometheus.AlreadyRegisteredError
		if errors.As(err, &again) { // a second manager in one process (tests): the newest one counts
			reg.Unregister(again.ExistingCollector)
			err = reg.Register(c)
		}
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Result is the result label of a reconcile that returned err (nil or
// not) and stalled or not.
func Result(stalled bool, err error) string {
	switch {
	case stalled:
		return ResultStalled
	case err != nil:
		return ResultError
	}
	return ResultSuccess
}

// ResultOf is the result label of a reconcile that waits, or else stalled
// or not and returned err.
func ResultOf(waiting, stalled bool, err error) string {
	if waiting {
		return ResultWaiting
	}
	return Result(stalled, err)
}

// ObserveReconcile records one reconcile of kind that started at start.
func (m *Metrics) ObserveReconcile(kind, result string, start time.Time) {
	if m == nil {
		return
	}
	m.reconcile.WithLabelValues(kind, result).Observe(time.Since(start).Seconds())
}

// Porch wraps the client the Porch store uses so that every request to
// Porch's API is counted and timed.
func (m *Metrics) Porch(c client.Client) client.Client {
	if m == nil {
		return c
	}
	observe := func(verb string, obj any, start time.Time, err error) {
		res := resourceOf(obj)
		if res == "" {
			return
		}
		m.latency.WithLabelValues(verb, res).Observe(time.Since(start).Seconds())
		m.requests.WithLabelValues(verb, res, code(err)).Inc()
	}
	return interceptor.NewClient(noWatch{c}, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			start := time.Now()
			err := c.Get(ctx, key, obj, opts...)
			if _, ok := obj.(*porchapi.PackageRevisionResources); ok { // PackageRevisions come from the cache
				observe("get", obj, start, err)
			}
			return err
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			start := time.Now()
			err := c.Create(ctx, obj, opts...)
			observe("create", obj, start, err)
			return err
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			start := time.Now()
			err := c.Update(ctx, obj, opts...)
			observe("update", obj, start, err)
			return err
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
			start := time.Now()
			err := c.Patch(ctx, obj, p, opts...)
			observe("patch", obj, start, err)
			return err
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			start := time.Now()
			err := c.Delete(ctx, obj, opts...)
			observe("delete", obj, start, err)
			return err
		},
	})
}

// noWatch lets a client.Client through interceptor.NewClient, which wants
// a WithWatch; the Porch store never watches.
type noWatch struct{ client.Client }

func (noWatch) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("the Porch store does not watch")
}

func resourceOf(obj any) string {
	switch obj.(type) {
	case *porchapi.PackageRevision:
		return "packagerevisions"
	case *porchapi.PackageRevisionResources:
		return "packagerevisionresources"
	}
	return ""
}

// code is the outcome label: OK, the Kubernetes reason of an API error
// (Conflict, NotFound, InternalError...), or Error for anything else
// (a timeout on the way, a cancelled context).
func code(err error) string {
	if err == nil {
		return "OK"
	}
	if r := apierrors.ReasonForError(err); r != metav1.StatusReasonUnknown {
		return string(r)
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		return "Unknown"
	}
	return "Error"
}

// Collector counts the fleet from the cache at each scrape: variants and
// sets by Ready status and reason, and the drafts variants own.
type Collector struct {
	Reader  client.Reader
	failing atomic.Pointer[func() []RepositoryFailure]
}

var (
	variantsDesc = prometheus.NewDesc("pvkit_packagevariants", "PackageVariants by Ready status and reason (the Stalled reason when stalled).", []string{"ready", "reason"}, nil)
	setsDesc     = prometheus.NewDesc("pvkit_packagevariantsets", "PackageVariantSets by Ready status and reason (the Stalled reason when stalled).", []string{"ready", "reason"}, nil)
	rolloutsDesc = prometheus.NewDesc("pvkit_rollouts", "PackageVariantSets with a staged rollout, by phase (the True one of RolloutProgressing, RolloutPaused, RolloutComplete; Unknown before the first reconcile) and its reason.", []string{"phase", "reason"}, nil)
	driftDesc    = prometheus.NewDesc("pvkit_published_drift", "PackageVariants whose downstream package changed behind their back (the condition PublishedDrift True), by its reason (rule published-drift).", []string{"reason"}, nil)
	draftsDesc   = prometheus.NewDesc("pvkit_drafts", "Draft and Proposed package revisions owned by a PackageVariant: drafts in flight.", []string{"lifecycle"}, nil)
	failingDesc  = prometheus.NewDesc("pvkit_porch_repository_failing_seconds", "How long every write of pvkit's to a Porch repository has failed (an internal error, Porch's \"ref file is empty\", no answer), by namespace and repository; no series once a write succeeds.", []string{"namespace", "repository"}, nil)
	groupsDesc   = prometheus.NewDesc("pvkit_group_members", "PackageVariants of grouped sets (rule package-groups), by the group's package and the group's package revision they come from: a group's release in flight shows two revisions.", []string{"group", "revision"}, nil)
	errorDesc    = prometheus.NewDesc("pvkit_metrics_collect_errors", "1 when the last scrape could not list a kind from the cache (the others are still reported).", []string{"kind"}, nil)
)

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- variantsDesc
	ch <- setsDesc
	ch <- rolloutsDesc
	ch <- driftDesc
	ch <- draftsDesc
	ch <- groupsDesc
	ch <- failingDesc
	ch <- errorDesc
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	failed := func(kind string, err error) {
		v := 0.0
		if err != nil {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(errorDesc, prometheus.GaugeValue, v, kind)
	}
	if f := c.failing.Load(); f != nil {
		for _, r := range (*f)() {
			ch <- prometheus.MustNewConstMetric(failingDesc, prometheus.GaugeValue, float64(time.Since(r.Since)/time.Second), r.Namespace, r.Repository)
		}
	}
	var pvs pvapi.PackageVariantList
	err := c.Reader.List(ctx, &pvs)
	failed("PackageVariant", err)
	if err == nil {
		counts, groups := map[[2]string]float64{}, map[[2]string]float64{}
		drift := map[string]float64{pvapi.ReasonNewerRevision: 0, pvapi.ReasonContentChanged: 0, pvapi.ReasonBranchUnreadable: 0}
		for i := range pvs.Items {
			counts[readiness(pvs.Items[i].Status.Conditions)]++
			if g := pvs.Items[i].Labels[v1alpha2.GroupLabel]; g != "" {
				groups[[2]string{g, pvs.Items[i].Annotations[v1alpha2.GroupRevisionAnnotation]}]++
			}
			if c := apimeta.FindStatusCondition(pvs.Items[i].Status.Conditions, pvapi.ConditionPublishedDrift); c != nil && c.Status == metav1.ConditionTrue {
				drift[c.Reason]++
			}
		}
		emit(ch, variantsDesc, counts)
		emit(ch, groupsDesc, groups)
		reasons := make([]string, 0, len(drift))
		for r := range drift {
			reasons = append(reasons, r)
		}
		sort.Strings(reasons)
		for _, r := range reasons {
			ch <- prometheus.MustNewConstMetric(driftDesc, prometheus.GaugeValue, drift[r], r)
		}
	}
	var sets pvsapi.PackageVariantSetList
	err = c.Reader.List(ctx, &sets)
	failed("PackageVariantSet", err)
	if err == nil {
		counts, rollouts := map[[2]string]float64{}, map[[2]string]float64{}
		for i := range sets.Items {
			counts[readiness(sets.Items[i].Status.Conditions)]++
			if sets.Items[i].Spec.Rollout != nil {
				rollouts[rolloutPhase(sets.Items[i].Status.Conditions)]++
			}
		}
		emit(ch, setsDesc, counts)
		emit(ch, rolloutsDesc, rollouts)
	}
	var prs porchapi.PackageRevisionList
	err = c.Reader.List(ctx, &prs)
	failed("PackageRevision", err)
	if err == nil {
		drafts := map[porchapi.PackageRevisionLifecycle]float64{porchapi.PackageRevisionLifecycleDraft: 0, porchapi.PackageRevisionLifecycleProposed: 0}
		for i := range prs.Items {
			pr := &prs.Items[i]
			if _, ok := drafts[pr.Spec.Lifecycle]; ok && ownedByVariant(pr) {
				drafts[pr.Spec.Lifecycle]++
			}
		}
		for _, l := range []porchapi.PackageRevisionLifecycle{porchapi.PackageRevisionLifecycleDraft, porchapi.PackageRevisionLifecycleProposed} {
			ch <- prometheus.MustNewConstMetric(draftsDesc, prometheus.GaugeValue, drafts[l], string(l))
		}
	}
}

func ownedByVariant(pr *porchapi.PackageRevision) bool {
	for _, o := range pr.OwnerReferences {
		if o.Kind == "PackageVariant" && o.APIVersion == pvapi.GroupVersion.String() {
			return true
		}
	}
	return false
}

// rolloutPhase is a set's (phase, reason) label pair: the rollout
// condition that is True (rule rollout-conditions).
func rolloutPhase(conds []metav1.Condition) [2]string {
	for _, p := range []struct{ typ, phase string }{
		{pvapi.ConditionRolloutProgressing, "Progressing"}, {pvapi.ConditionRolloutPaused, "Paused"}, {pvapi.ConditionRolloutComplete, "Complete"},
	} {
		for _, c := range conds {
			if c.Type == p.typ && c.Status == metav1.ConditionTrue {
				return [2]string{p.phase, c.Reason}
			}
		}
	}
	return [2]string{"Unknown", ""}
}

// readiness is an object's (ready, reason) label pair (kit.Readiness).
func readiness(conds []metav1.Condition) [2]string {
	ready, reason, _, _ := kit.Readiness(conds)
	return [2]string{string(ready), reason}
}

func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, counts map[[2]string]float64) {
	keys := make([][2]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"\x00"+keys[i][1] < keys[j][0]+"\x00"+keys[j][1] })
	for _, k := range keys {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, counts[k], k[0], k[1])
	}
}
