package kit

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus patches obj's status subresource from orig when the two
// statuses differ (an unchanged object costs no write). An object deleted in
// the meantime (its finalizer gone) is no error.
func PatchStatus(ctx context.Context, c client.Client, orig, obj client.Object, origStatus, status any) error {
	if equality.Semantic.DeepEqual(origStatus, status) {
		return nil
	}
	// With the version read (optimistic lock): a reconcile that read the
	// object before another's status patch landed (a lagging cache) must
	// not overwrite that status with its older view; it fails with a
	// conflict instead and the next reconcile reads afresh.
	// (The version is the latest this reconcile saw: its own writes, such
	// as adding the finalizer, moved it on.)
	base := orig.DeepCopyObject().(client.Object)
	base.SetResourceVersion(obj.GetResourceVersion())
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// StatusLostRetry is how soon a reconcile whose status patch was lost
// (StatusLost) runs again.
const StatusLostRetry = 100 * time.Millisecond

// StatusLost says whether a PatchStatus error is a conflict: the reconcile
// read the object from a cache that had not yet seen a newer write (most
// often the status its own previous reconcile patched). Nothing is wrong
// and nothing is kept from the stale view: the reconcile runs again after
// StatusLostRetry and reads afresh. The reconcilers return that as a
// requeue, not an error, so the log does not show an ERROR for a cache
// that lagged by a few milliseconds.
func StatusLost(err error) bool { return apierrors.IsConflict(err) }
