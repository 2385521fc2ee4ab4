package conditions

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// conflictRetry is how soon a conflicted status write is tried again.
const conflictRetry = 200 * time.Millisecond

// PatchStatus writes the status change set makes to obj as a merge patch
// of the status subresource. The patch carries no resourceVersion, so a
// concurrent write of another field (another controller's, the seed
// operator's runtime status) neither conflicts nor is overwritten; the
// conditions this controller owns are replaced whole. An object gone
// meanwhile needs no status; a conflict, should the API server still
// report one, is retried quietly rather than logged as an error.
func PatchStatus(ctx context.Context, c client.Client, obj client.Object, set func()) (ctrl.Result, error) {
	base := obj.DeepCopyObject().(client.Object)
	set()
	err := c.Status().Patch(ctx, obj, client.MergeFrom(base))
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case apierrors.IsConflict(err):
		log.FromContext(ctx).V(1).Info("status write conflicted; retrying", "object", client.ObjectKeyFromObject(obj))
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, err
}
