package packagevariant

import (
	"context"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"math/rand/v2"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
	"github.com/pvkit/pvkit/orchestrator/store"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ObserveIntervalAnnotation (deprecated on a variant: spec.policy.
// observeInterval; on a set, written into its children's) overrides the
// controller's --observe-interval for one variant: a Go duration (rule
// observe-cadence). A variant's author may lengthen it
// freely; one shorter than MinObserveInterval is raised to it (a tenant
// must not make the controller read Porch every second), one that does
// not parse reads as the controller's, and the log says so.
const ObserveIntervalAnnotation = pv.ObserveIntervalAnnotation

// MinObserveInterval is the shortest interval ObserveIntervalAnnotation
// may ask for.
const MinObserveInterval = time.Minute

// DefaultObserveInterval is --observe-interval's default: a commit pushed
// behind Porch's back on a quiet fleet is seen within about that long
// (it was about 10 hours: controller-runtime's resync).
const DefaultObserveInterval = 5 * time.Minute

// observeAgain is when a variant with a Published target is reconciled
// again though nothing wakes it: its interval with jitter (0: not).
func (r *Reconciler) observeAgain(ctx context.Context, v *pvapi.PackageVariant) time.Duration {
	published := false
	for _, t := range v.Status.DownstreamTargets {
		published = published || store.Lifecycle(t.Lifecycle).IsPublished()
	}
	if !published || r.ObserveInterval <= 0 {
		return 0
	}
	d := r.observeInterval(ctx, v)
	if p := r.clusterPoll(); observe.WaitsOnACluster(v) && p < d {
		d = p // another cluster is polled, not watched
	}
	if r.Jitter != nil {
		return d + r.Jitter(d)
	}
	return d + time.Duration(rand.Int64N(int64(d/10)+1))
}

// observeInterval is the variant's interval: its annotation's (or its
// set's), bounded below, else the controller's.
func (r *Reconciler) observeInterval(ctx context.Context, v *pvapi.PackageVariant) time.Duration {
	what, val, ok := v.PolicyOf(ObserveIntervalAnnotation)
	if !ok {
		return r.ObserveInterval
	}
	d, err := time.ParseDuration(val)
	switch {
	case err != nil || d <= 0:
		ctrl.LoggerFrom(ctx).Info("an observe interval that is no positive duration: the controller's is used", "object", what, "value", val)
		return r.ObserveInterval
	case d < MinObserveInterval:
		return MinObserveInterval
	}
	return d
}

// DefaultClusterPoll is how often a variant whose health is read from
// another cluster, and is not True, is read again (--health-cluster-poll).
const DefaultClusterPoll = 30 * time.Second

func (r *Reconciler) clusterPoll() time.Duration {
	if r.ClusterPoll > 0 {
		return r.ClusterPoll
	}
	return DefaultClusterPoll
}

// observer reads what the variant published (package observe) with the
// reconciler's clients, kinds, clusters and memory.
func (r *Reconciler) observer() observe.Observer {
	return observe.Observer{Client: r.Client, Store: r.porch(), Kinds: r.Kinds, Clusters: r.Clusters, Watch: r.watchKind,
		Clock: r.Clock, Events: r.events(), Memory: &r.mem}
}

// Clusters reads objects of other clusters, for health checks that name
// one (observe.Clusters).
type Clusters = observe.Clusters

// ClusterSource names where a cluster's client comes from (observe.ClusterSource).
type ClusterSource = observe.ClusterSource
