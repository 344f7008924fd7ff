package kit

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StatusRebases is how many times a status patch that conflicts is
// rebased onto the object as it is now and tried again.
const StatusRebases = 3

// PatchStatus patches obj's status subresource from orig when the two
// statuses differ (an unchanged object costs no write); status(o) is the
// address of o's status. A status write loses nothing (ARCHITECTURE.md):
// the patch carries the version the reconcile read (optimistic lock), and
// when it conflicts (another write landed since: a spec update, the set
// rewriting its child), the object is read again past the cache (reader;
// nil: c) and this reconcile's own changes are re-applied to its status
// field by field (Rebase), at most StatusRebases times. An object deleted
// in the meantime (its finalizer gone) is no error. obj holds the status
// and version written.
func PatchStatus(ctx context.Context, c client.Client, reader client.Reader, orig, obj client.Object, status func(client.Object) any) error {
	before, after := status(orig), status(obj)
	if equality.Semantic.DeepEqual(before, after) {
		return nil
	}
	// (The version is the latest this reconcile saw: its own writes, such
	// as adding the finalizer, moved it on.)
	base := orig.DeepCopyObject().(client.Object)
	base.SetResourceVersion(obj.GetResourceVersion())
	err := c.Status().Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	if reader == nil {
		reader = c
	}
	for i := 0; i < StatusRebases && apierrors.IsConflict(err); i++ {
		fresh := obj.DeepCopyObject().(client.Object)
		if err = reader.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
			break
		}
		target := fresh.DeepCopyObject().(client.Object)
		if err = Rebase(before, after, status(fresh), status(target)); err != nil {
			return err
		}
		if equality.Semantic.DeepEqual(status(fresh), status(target)) {
			err = nil // this reconcile's changes are there already
		} else {
			err = c.Status().Patch(ctx, target, client.MergeFromWithOptions(fresh, client.MergeFromWithOptimisticLock{}))
		}
		if err == nil { // obj holds what was written
			reflect.ValueOf(after).Elem().Set(reflect.ValueOf(status(target)).Elem())
			obj.SetResourceVersion(target.GetResourceVersion())
		}
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// StatusLostRetry is how soon a reconcile whose status patch was lost
// (StatusLost) runs again.
const StatusLostRetry = 100 * time.Millisecond

// StatusLost says whether a PatchStatus error is a conflict that
// StatusRebases rebases did not get past (the object rewritten as fast as
// it was read). Nothing is kept from the stale view: the reconcile runs
// again after StatusLostRetry and reads afresh. The reconcilers return
// that as a requeue, not an error.
func StatusLost(err error) bool { return apierrors.IsConflict(err) }
