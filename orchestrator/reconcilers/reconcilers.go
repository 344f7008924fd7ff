// Package reconcilers builds the two reconcilers the one way both hosts
// use: the controller's manager (orchestrator/manager) and pvctl run
// (orchestrator/local). What a host gives them is Options; nothing else
// about them differs between the two (rule: one-orchestrator).
package reconcilers

import (
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"time"

	"github.com/pvkit/pvkit/orchestrator/metrics"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"github.com/pvkit/pvkit/orchestrator/store"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Options are what a host gives the reconcilers.
type Options struct {
	// Client is the cluster (the manager's cached client; pvctl's embedded
	// cluster).
	Client client.Client
	// Reader reads past the cache (the manager's API reader; nil: Client,
	// pvctl's embedded cluster has no cache).
	Reader client.Reader
	// Store is Porch (the Porch store; pvctl: the git store, journaled).
	Store store.Store
	// Clock stamps conditions and decides approval delays (nil: real).
	Clock kit.Clock
	// Recorder records Events (nil: none).
	Recorder record.EventRecorder
	// Metrics records reconciles (nil: none).
	Metrics *metrics.Metrics
	// Kinds are the kinds injection and objectSelector may read.
	Kinds kit.ReadableKinds
	// Workers is --workers (0: one at a time).
	Workers int
	// MaxChildren bounds a set's children (0: the default).
	MaxChildren int
	// ApproveByPolicy approves drafts that ask for it (--approve-by-policy;
	// always on in pvctl run).
	ApproveByPolicy bool
	// AllowMassDeletion lifts every set's mass-deletion guard (pvctl run
	// --prune=all).
	AllowMassDeletion bool
	// Provenance signs drafts' provenance records and checks them for
	// pvkit.dev/require-provenance (--provenance-key,
	// --provenance-allowed-signers); Builder is set by New's caller.
	Provenance stamp.Provenance
	// ObserveInterval is --observe-interval (0: observe only when woken;
	// pvctl, whose every run observes).
	ObserveInterval time.Duration
	// Shard is --shard (nil: no sharding, pvctl run).
	Shard *kit.Shard
	// Clusters reads health objects of other clusters (the controller's
	// orchestrator/remote; pvctl's files and contexts); ClusterPoll is
	// --health-cluster-poll.
	Clusters    packagevariant.Clusters
	ClusterPoll time.Duration
	// ReconcileTimeout is --reconcile-timeout: the bound of one reconcile
	// (0: kit.DefaultReconcileTimeout).
	ReconcileTimeout time.Duration
	// PorchTimeout is --porch-timeout: the bound of one request to Porch,
	// which the controller's Porch store sets (0:
	// porch.DefaultRequestTimeout).
	PorchTimeout time.Duration
}

// New builds the PackageVariant and PackageVariantSet reconcilers.
func New(o Options) (*packagevariant.Reconciler, *packagevariantset.Reconciler) {
	pv := &packagevariant.Reconciler{Client: o.Client, Reader: o.Reader, Store: o.Store, Clock: o.Clock, Recorder: o.Recorder, Metrics: o.Metrics,
		Kinds: o.Kinds, Workers: o.Workers, ApproveByPolicy: o.ApproveByPolicy, Provenance: o.Provenance, ObserveInterval: o.ObserveInterval, Shard: o.Shard,
		Clusters: o.Clusters, ClusterPoll: o.ClusterPoll, ReconcileTimeout: o.ReconcileTimeout}
	pvs := &packagevariantset.Reconciler{Client: o.Client, Store: o.Store, Clock: o.Clock, Recorder: o.Recorder, Metrics: o.Metrics,
		Kinds: o.Kinds, Workers: o.Workers, MaxChildren: o.MaxChildren, AllowMassDeletion: o.AllowMassDeletion, Reader: o.Reader, Shard: o.Shard,
		ReconcileTimeout: o.ReconcileTimeout}
	return pv, pvs
}
