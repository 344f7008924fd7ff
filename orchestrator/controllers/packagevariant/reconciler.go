package packagevariant

import (
	"context"
	"errors"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/controllers/conditions"
	"github.com/pvkit/pvkit/orchestrator/controllers/dynwatch"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/upstream"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Reasons pvkit adds to Porch's.
const (
	ReasonUpstreamNotFound = "UpstreamNotFound"
	ReasonStaleDraft       = "StaleDraft"
	ReasonMutationFailed   = "MutationFailed"
	ReasonDeleting         = "Deleting"
	// ReasonRenderFailed: Porch refused a draft update because the package's
	// Kptfile pipeline failed to render; status.downstreamTargets has the
	// render status. Retried with backoff.
	ReasonRenderFailed = "RenderFailed"
)

// Reconciler reconciles PackageVariants.
type Reconciler struct {
	// Client reads and patches PackageVariants and lists injected objects.
	Client client.Client
	// Store is Porch.
	Store store.Store
	// Clock stamps condition transitions (default: the real clock).
	Clock conditions.Clock

	watch *dynwatch.Watcher // set by SetupWithManager
	memo  memo
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	v := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, req.NamespacedName, v); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	orig := v.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, orig, v); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()
	if !v.DeletionTimestamp.IsZero() {
		r.forget(v.UID)
		return ctrl.Result{}, r.reconcileDelete(ctx, v)
	}
	if err := r.ensureFinalizer(ctx, v); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.reconcileVariant(ctx, v)
}

// reconcileVariant runs the steps. Sets Stalled and Ready.
func (r *Reconciler) reconcileVariant(ctx context.Context, v *pvapi.PackageVariant) error {
	if msg := validate(v); msg != "" {
		r.setCondition(v, pvapi.ConditionStalled, metav1.ConditionTrue, pvapi.ReasonValidationError, msg)
		r.setCondition(v, pvapi.ConditionReady, metav1.ConditionFalse, pvapi.ReasonError, "invalid packagevariant object")
		return nil
	}
	up, err := r.findUpstream(ctx, v)
	if err != nil {
		return r.fail(v, err)
	}
	if up == nil {
		msg := "upstream package revision not found: " + upstream.Describe(*v.Spec.Upstream)
		r.setCondition(v, pvapi.ConditionStalled, metav1.ConditionTrue, ReasonUpstreamNotFound, msg)
		r.setCondition(v, pvapi.ConditionReady, metav1.ConditionFalse, ReasonUpstreamNotFound, msg)
		return nil
	}
	r.setCondition(v, pvapi.ConditionStalled, metav1.ConditionFalse, pvapi.ReasonValid, "all validation checks passed")
	targets, err := r.reconcileDownstream(ctx, v, up)
	if err != nil {
		var rf *renderFailure
		if errors.As(err, &rf) {
			v.Status.DownstreamTargets = recordRender(v.Status.DownstreamTargets, rf.target)
		}
		return r.fail(v, err)
	}
	v.Status.DownstreamTargets = mergeTargets(v.Status.DownstreamTargets, targets)
	r.setCondition(v, pvapi.ConditionReady, metav1.ConditionTrue, pvapi.ReasonNoErrors, "successfully ensured downstream package variant")
	return nil
}

// userError is a failure only a change of the variant, the package or the
// cluster can fix: reported, not retried (the watches bring the next
// reconcile).
type userError struct {
	reason string
	err    error
}

func (e *userError) Error() string { return e.err.Error() }

// fail reports err as Ready=False; it returns err to retry it, unless it is
// a userError.
func (r *Reconciler) fail(v *pvapi.PackageVariant, err error) error {
	var ue *userError
	if errors.As(err, &ue) {
		r.setCondition(v, pvapi.ConditionReady, metav1.ConditionFalse, ue.reason, err.Error())
		return nil
	}
	reason := pvapi.ReasonError
	if errors.As(err, new(*renderFailure)) {
		reason = ReasonRenderFailed
	}
	r.setCondition(v, pvapi.ConditionReady, metav1.ConditionFalse, reason, err.Error())
	return err
}

func (r *Reconciler) setCondition(v *pvapi.PackageVariant, typ string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(&v.Status.Conditions, v.Generation, r.Clock, typ, status, reason, msg)
}

// patchStatus writes the status when it changed (an unchanged variant costs
// no write).
func (r *Reconciler) patchStatus(ctx context.Context, orig, v *pvapi.PackageVariant) error {
	if v.DeletionTimestamp.IsZero() {
		v.Status.ObservedGeneration = v.Generation
	}
	if equality.Semantic.DeepEqual(orig.Status, v.Status) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, v, client.MergeFrom(orig))
	if apierrors.IsNotFound(err) {
		return nil // deleted once its finalizer went
	}
	return err
}

func (r *Reconciler) ensureFinalizer(ctx context.Context, v *pvapi.PackageVariant) error {
	if controllerutil.ContainsFinalizer(v, pv.Finalizer) {
		return nil
	}
	orig := v.DeepCopy()
	controllerutil.AddFinalizer(v, pv.Finalizer)
	return r.Client.Patch(ctx, v, client.MergeFrom(orig))
}

// ownerRef is the variant as the owner of its revisions.
func ownerRef(v *pvapi.PackageVariant) store.OwnerRef {
	return store.OwnerRef{APIVersion: pv.APIVersion, Kind: pv.Kind, Name: v.Name, UID: string(v.UID), Controller: true}
}
