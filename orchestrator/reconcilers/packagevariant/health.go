package packagevariant

import (
	"context"
	"fmt"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/health"
	"github.com/pvkit/pvkit/pkg/krm"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// observeHealth (rule: health-gated-rollouts) reads the health check of a
// variant with spec.health for each of its Published targets and records
// what it read in the target's Health; other targets have none. The
// object is read in the variant's namespace only, with the controller's
// rights, so its kind must be a readable kind; a kind that is not, an
// object that is missing, or a check that fails to evaluate is recorded
// as Unknown, saying why: the variant itself stays Ready (its package is
// up to date), and a staged rollout waits for the cluster, then fails the
// child past its progress deadline. Since changes only when the status
// does: a steady resync writes nothing.
func (r *Reconciler) observeHealth(ctx context.Context, v *pvapi.PackageVariant) error {
	c := v.Spec.Health
	for i := range v.Status.DownstreamTargets {
		t := &v.Status.DownstreamTargets[i]
		if c == nil || t.Lifecycle != string(store.Published) {
			t.Health = nil
			continue
		}
		h, err := r.readHealth(ctx, v, t)
		if err != nil {
			return err
		}
		if old := t.Health; old != nil && old.Status == h.Status {
			h.Since = old.Since
			if *old == h {
				continue // unchanged: no allocation, no write
			}
		}
		t.Health = &h
	}
	return nil
}

// readHealth evaluates the check for one published target.
func (r *Reconciler) readHealth(ctx context.Context, v *pvapi.PackageVariant, t *pvapi.DownstreamTarget) (pvapi.TargetHealth, error) {
	c := v.Spec.Health
	unknown := func(reason, object, format string, a ...any) pvapi.TargetHealth {
		return pvapi.TargetHealth{Status: metav1.ConditionUnknown, Reason: reason, Object: object,
			Message: fmt.Sprintf(format, a...), Since: metav1.NewTime(r.now())}
	}
	hv := healthVariant(v)
	name, err := health.Name(ctx, c, hv)
	if err != nil {
		return unknown(pvapi.ReasonCheckFailed, "", "spec.health.%v", err), nil
	}
	object := fmt.Sprintf("%s %s/%s", c.Kind, v.Namespace, name)
	gvk := schema.FromAPIVersionAndKind(c.APIVersion, c.Kind)
	if !r.Kinds.Allows(krm.GVK{APIVersion: c.APIVersion, Kind: c.Kind}) {
		return unknown(pvapi.ReasonKindNotAllowed, object, "%s", r.Kinds.Refusal("spec.health names kind "+c.Kind)), nil
	}
	if err := r.watchKind(c.APIVersion, c.Kind); err != nil {
		return pvapi.TargetHealth{}, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	switch err := r.Client.Get(ctx, client.ObjectKey{Namespace: v.Namespace, Name: name}, u); {
	case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
		return unknown(pvapi.ReasonObjectNotFound, object, "no %s %q in namespace %q: the cluster has not reported on %s", c.Kind, name, v.Namespace, t.Name), nil
	case err != nil:
		return pvapi.TargetHealth{}, fmt.Errorf("reading the health check's %s: %w", object, err)
	}
	state, err := health.Evaluate(ctx, c, hv, u.Object, healthRevision(v, t))
	switch {
	case err != nil:
		return unknown(pvapi.ReasonCheckFailed, object, "spec.health.%v", err), nil
	case state == health.Current:
		return pvapi.TargetHealth{Status: metav1.ConditionTrue, Reason: pvapi.ReasonHealthy, Object: object,
			Message: fmt.Sprintf("%s reports %s", object, t.Name), Since: metav1.NewTime(r.now())}, nil
	case state == health.Failed:
		return pvapi.TargetHealth{Status: metav1.ConditionFalse, Reason: pvapi.ReasonHealthFailed, Object: object,
			Message: fmt.Sprintf("%s reports %s failed (%s)", object, t.Name, strings.TrimSpace(c.Failed)), Since: metav1.NewTime(r.now())}, nil
	}
	return pvapi.TargetHealth{Status: metav1.ConditionFalse, Reason: pvapi.ReasonNotHealthy, Object: object,
		Message: fmt.Sprintf("%s does not report %s (%s)", object, t.Name, strings.TrimSpace(c.Condition)), Since: metav1.NewTime(r.now())}, nil
}

func healthVariant(v *pvapi.PackageVariant) health.Variant {
	hv := health.Variant{Name: v.Name, Namespace: v.Namespace, Labels: v.Labels, Annotations: v.Annotations}
	if d := v.Spec.Downstream; d != nil {
		hv.Repo, hv.Package = d.Repo, d.Package
	}
	return hv
}

// healthRevision is `revision` of a published target: its Porch name, the
// downstream's repository and package, its number (from the name's
// lifecycle: the store's listing has it; the status keeps the name) and
// its upstream lock.
func healthRevision(v *pvapi.PackageVariant, t *pvapi.DownstreamTarget) health.Revision {
	rev := health.Revision{Name: t.Name}
	if d := v.Spec.Downstream; d != nil {
		rev.Repo, rev.Package = d.Repo, d.Package
	}
	rev.Revision = t.Revision
	if rev.Revision > 0 {
		rev.Ref = health.Ref(rev.Package, rev.Revision)
	}
	if l := t.UpstreamLock; l != nil {
		rev.UpstreamRepo, rev.UpstreamPackage, rev.UpstreamRef, rev.UpstreamCommit = l.Repo, l.Package, l.Ref, l.Commit
	}
	return rev
}
