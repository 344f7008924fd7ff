package packagevariant

import (
	"context"
	"fmt"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stillMine reads the variant past the cache before a draft is created
// (the one write two processes could both make: two drafts of one
// variant) and says nothing when it is still this shard's. Relabelled to
// another shard meanwhile (its set handed over), or gone, the reconcile
// stops there, Waiting with no retry: the other shard's controller has it.
// With no sharding (pvctl run), or no reader, nothing is read.
func (r *Reconciler) stillMine(ctx context.Context, v *pvapi.PackageVariant) error {
	if r.Shard == nil || r.Reader == nil {
		return nil
	}
	fresh := &pvapi.PackageVariant{}
	err := r.Reader.Get(ctx, client.ObjectKeyFromObject(v), fresh)
	if apierrors.IsNotFound(err) {
		return kit.Wait(0, "PackageVariant %s is gone: no draft created", v.Name)
	}
	if err != nil {
		return fmt.Errorf("reading PackageVariant %s before creating its draft: %w", v.Name, err)
	}
	if fresh.UID != v.UID {
		return kit.Wait(0, "PackageVariant %s was made again (another UID): no draft created for the one that went", v.Name)
	}
	if !r.Shard.Owns(fresh.Labels) {
		return kit.Wait(0, "PackageVariant %s moved to %s: no draft created here, its controller has it", v.Name, kit.ShardName(fresh.Labels[v1alpha2.ShardLabel]))
	}
	return nil
}
