package kit

import (
	"context"

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
	err := c.Status().Patch(ctx, obj, client.MergeFrom(orig))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
