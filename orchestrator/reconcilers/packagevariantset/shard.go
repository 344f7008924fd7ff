package packagevariantset

import (
	"context"
	"fmt"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EventHandedOver is the Event of a set whose children were moved to its
// shard.
const EventHandedOver = "HandedOver"

// handOverWait is how soon a set handed over is reconciled again (its
// children, relabelled, come into this shard's cache; their watch wakes it
// too).
const handOverWait = 2 * time.Second

// reader reads past the cache (Reader), or the client when there is none.
func (r *Reconciler) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

// handOver carries a set's children over to its shard when the set is new
// to it (status.shard is not its label: it was relabelled, or has never
// been handed over): the children carrying another shard's label are
// invisible to this shard's cache, so they are listed past it (one LIST of
// the set's children, once per move) and relabelled to the set's shard;
// the other shard's controller, whose cache they leave, stops reconciling
// them, and its variants' reconciles read a variant fresh before creating
// a draft (packagevariant's stillMine). Until the moved children are in
// this cache the reconcile Waits: planning without them would create them
// again. Nothing is done without sharding, or for a set whose status
// already names its shard.
func (r *Reconciler) handOver(ctx context.Context, set *pvsapi.PackageVariantSet) error {
	want := set.Labels[v1alpha2.ShardLabel]
	if r.Shard == nil || set.Status.Shard == want {
		return nil
	}
	var list pvapi.PackageVariantList
	if err := r.reader().List(ctx, &list, client.InNamespace(set.Namespace),
		client.MatchingLabels{v1alpha2.SetLabel: pvsexpand.SetID(set.Core())}); err != nil {
		return fmt.Errorf("listing the set's PackageVariants to hand them over to %s: %w", kit.ShardName(want), err)
	}
	moved := 0
	for i := range list.Items {
		child := &list.Items[i]
		if child.Labels[v1alpha2.ShardLabel] == want {
			continue
		}
		if err := r.relabel(ctx, child, want); err != nil {
			return err
		}
		moved++
	}
	set.Status.Shard = want
	if moved == 0 {
		return nil
	}
	kit.Events{Recorder: r.Recorder}.Normal(set, EventHandedOver, "moved %d PackageVariants to %s, the set's", moved, kit.ShardName(want))
	return kit.Wait(handOverWait, "moved %d children to %s: waiting for the cache to show them", moved, kit.ShardName(want))
}
