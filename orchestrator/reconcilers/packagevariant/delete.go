package packagevariant

import (
	"context"
	"errors"
	"fmt"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// reconcileDelete handles every owned revision per the deletion policy, and
// removes the finalizer only when all were handled (rule: finalizer-waits). Sets Ready=False
// Deleting while revisions remain.
func (r *Reconciler) reconcileDelete(ctx context.Context, v *pvapi.PackageVariant) error {
	if !controllerutil.ContainsFinalizer(v, pv.Finalizer) {
		return nil
	}
	owned, err := r.porch().ListOwned(ctx, v.Namespace, string(v.UID))
	if err != nil {
		return err
	}
	var errs []error
	for _, rev := range owned {
		if err := r.deleteOrOrphan(ctx, v, rev); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return kit.Retry(pvapi.ReasonDeleting, fmt.Errorf("deleting owned package revisions: %w", err))
	}
	orig := v.DeepCopy()
	controllerutil.RemoveFinalizer(v, pv.Finalizer)
	// Gone already: a reconcile that read a lagging cache, after an
	// earlier one removed the finalizer. The deletion is done.
	return client.IgnoreNotFound(r.Client.Patch(ctx, v, client.MergeFrom(orig)))
}

// deleteOrOrphan applies the deletion policy to an owned revision: orphan
// removes the variant's ownership; delete deletes a Draft or Proposed
// revision and proposes a Published one for deletion (a person or an
// automation approves it), then gives it up so nothing deletes it before.
func (r *Reconciler) deleteOrOrphan(ctx context.Context, v *pvapi.PackageVariant, rev store.Revision) error {
	if v.Spec.DeletionPolicy == pv.DeletionPolicyOrphan {
		return r.disown(ctx, v, rev)
	}
	switch rev.Lifecycle {
	case store.Draft, store.Proposed:
		if err := r.porch().Delete(ctx, v.Namespace, rev.Name); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil
			}
			return fmt.Errorf("deleting %s: %w", rev.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("deleted revision", "revision", rev.Name, "lifecycle", rev.Lifecycle)
		r.events().Normal(v, EventRevisionDeleted, "deleted %s (%s)", rev.Name, rev.Lifecycle)
		return nil
	case store.Published:
		rev.Lifecycle = store.DeletionProposed
		if err := r.porch().Update(ctx, rev); err != nil {
			return fmt.Errorf("proposing the deletion of %s: %w", rev.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("proposed revision for deletion", "revision", rev.Name)
		r.events().Normal(v, EventProposedForDeletion, "proposed %s for deletion; approving the deletion removes it", rev.Name)
		rev.ResourceVersion = ""
	}
	if !v.DeletionTimestamp.IsZero() {
		return r.disown(ctx, v, rev)
	}
	return nil
}

func (r *Reconciler) disown(ctx context.Context, v *pvapi.PackageVariant, rev store.Revision) error {
	kept := rev.Owners[:0]
	for _, o := range rev.Owners {
		if o.UID != string(v.UID) {
			kept = append(kept, o)
		}
	}
	rev.Owners = kept
	if err := r.porch().Update(ctx, rev); err != nil {
		return fmt.Errorf("orphaning %s: %w", rev.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("released revision", "revision", rev.Name)
	r.events().Normal(v, EventRevisionOrphaned, "released %s (no longer owned)", rev.Name)
	return nil
}
