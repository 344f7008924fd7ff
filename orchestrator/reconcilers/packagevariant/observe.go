package packagevariant

import (
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
)

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
