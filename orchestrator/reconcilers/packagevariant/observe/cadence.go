package observe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// ObserveIntervalAnnotation (deprecated on a variant: spec.policy.
// observeInterval; on a set, written into its children's) overrides the
// controller's --observe-interval for one variant: a Go duration (rule
// observe-cadence). A variant's author may lengthen it freely; one
// shorter than MinObserveInterval is raised to it (a tenant must not make
// the controller read Porch every second), one that does not parse reads
// as the controller's, and the log says so.
const ObserveIntervalAnnotation = pv.ObserveIntervalAnnotation

// MinObserveInterval is the shortest interval a variant may ask for.
const MinObserveInterval = time.Minute

// DefaultObserveInterval is --observe-interval's default: a commit pushed
// behind Porch's back on a quiet fleet is seen within about that long
// (it was about 10 hours: controller-runtime's resync).
const DefaultObserveInterval = 5 * time.Minute

// DefaultClusterPoll is how often a variant whose health is read from
// another cluster, and is not True, is read again (--health-cluster-poll).
const DefaultClusterPoll = 30 * time.Second

// Cadence is when a variant with a Published target is observed again
// though nothing wakes it (rule observe-cadence), so that what pvkit
// watches outside Kubernetes, the branch's content, the cluster's health,
// is looked at.
type Cadence struct {
	// Interval is the controller's (0: only when something wakes it).
	Interval time.Duration
	// ClusterPoll is how often a variant whose health from another
	// cluster is not True is read again (0: DefaultClusterPoll).
	ClusterPoll time.Duration
	// Jitter is added to each interval (nil: up to a tenth of it, at
	// random), so that a fleet's observations spread out.
	Jitter func(time.Duration) time.Duration
}

// Again is when the variant is reconciled again: its interval with
// jitter (0: not).
func (c Cadence) Again(ctx context.Context, v *pvapi.PackageVariant) time.Duration {
	published := false
	for _, t := range v.Status.DownstreamTargets {
		published = published || store.Lifecycle(t.Lifecycle).IsPublished()
	}
	if !published || c.Interval <= 0 {
		return 0
	}
	d := c.IntervalOf(ctx, v)
	poll := c.ClusterPoll
	if poll <= 0 {
		poll = DefaultClusterPoll
	}
	if WaitsOnACluster(v) && poll < d {
		d = poll // another cluster is polled, not watched
	}
	if c.Jitter != nil {
		return d + c.Jitter(d)
	}
	return d + time.Duration(rand.Int64N(int64(d/10)+1))
}

// IntervalOf is the variant's interval: its policy's, bounded below, else
// the controller's.
func (c Cadence) IntervalOf(ctx context.Context, v *pvapi.PackageVariant) time.Duration {
	what, val, ok := v.PolicyOf(ObserveIntervalAnnotation)
	if !ok {
		return c.Interval
	}
	d, err := time.ParseDuration(val)
	switch {
	case err != nil || d <= 0:
		ctrl.LoggerFrom(ctx).Info("an observe interval that is no positive duration: the controller's is used", "object", what, "value", val)
		return c.Interval
	case d < MinObserveInterval:
		return MinObserveInterval
	}
	return d
}

// DriftPolicy is the drift policy the variant asks for (its
// spec.policy.drift, else its annotation) and, for a value that is none
// of them, why it is read as report.
func DriftPolicy(v *pvapi.PackageVariant) (policy, problem string) {
	what, val, ok := v.PolicyOf(DriftPolicyAnnotation)
	switch {
	case !ok || val == DriftReport:
		return DriftReport, ""
	case val == DriftAdopt || val == DriftRevert:
		return val, ""
	}
	return DriftReport, fmt.Sprintf("%s has %s: %q, none of %q, %q and %q (read as %q until fixed)",
		what, DriftPolicyAnnotation, val, DriftReport, DriftAdopt, DriftRevert, DriftReport)
}
