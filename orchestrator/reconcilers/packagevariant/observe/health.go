package observe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/remote"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/health"
	"github.com/pvkit/pvkit/pkg/krm"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ObserveHealth (rule: health-gated-rollouts) reads the health check of a
// variant with spec.health for each of its Published targets and records
// what it read in the target's Health; other targets have none. The
// object is read in the variant's namespace only, with the controller's
// rights, so its kind must be a readable kind; a kind that is not, an
// object that is missing, or a check that fails to evaluate is recorded
// as Unknown, saying why: the variant itself stays Ready (its package is
// up to date), and a staged rollout waits for the cluster, then fails the
// child past its progress deadline. Since changes only when the status
// does: a steady resync writes nothing.
func (o Observer) ObserveHealth(ctx context.Context, v *pvapi.PackageVariant, b BranchHead) error {
	c := v.Spec.Health
	for i := range v.Status.DownstreamTargets {
		t := &v.Status.DownstreamTargets[i]
		if c == nil || t.Lifecycle != string(store.Published) {
			t.Health = nil
			continue
		}
		h, err := o.readHealth(ctx, v, t, b)
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

// Clusters reads objects of other clusters, for health checks that name
// one (spec.health.clusterExpr; rule health-from-the-clusters): the
// controller's orchestrator/remote, pvctl's files and kubeconfig contexts.
type Clusters interface {
	// Reader is a reader of cluster's API server for a variant in
	// namespace; a *remote.KubeconfigError when its kubeconfig cannot be
	// had.
	Reader(ctx context.Context, namespace, cluster string) (client.Reader, error)
	// Failed says a read through the cluster's reader failed.
	Failed(namespace, cluster string)
}

// readHealth evaluates the check for one published target: the object is
// read from the cluster the check names (none: the management cluster,
// watched), in the check's namespace (none: the variant's).
func (o Observer) readHealth(ctx context.Context, v *pvapi.PackageVariant, t *pvapi.DownstreamTarget, b BranchHead) (pvapi.TargetHealth, error) {
	c := v.Spec.Health
	unknown := func(reason, object, format string, a ...any) pvapi.TargetHealth {
		return pvapi.TargetHealth{Status: metav1.ConditionUnknown, Reason: reason, Object: object,
			Message: fmt.Sprintf(format, a...), Since: metav1.NewTime(o.now())}
	}
	hv := HealthVariant(v)
	name, err := health.Name(ctx, c, hv)
	if err != nil {
		return unknown(pvapi.ReasonCheckFailed, "", "spec.health.%v", err), nil
	}
	cluster, err := health.Cluster(ctx, c, hv)
	if err != nil {
		return unknown(pvapi.ReasonCheckFailed, "", "spec.health.%v", err), nil
	}
	ns := v.Namespace
	if c.Namespace != "" {
		ns = c.Namespace
	}
	object := fmt.Sprintf("%s %s/%s", c.Kind, ns, name)
	where := fmt.Sprintf("namespace %q", ns)
	if cluster != "" {
		object, where = "cluster "+cluster+": "+object, fmt.Sprintf("namespace %q of cluster %s", ns, cluster)
	}
	if !o.Kinds.Allows(krm.GVK{APIVersion: c.APIVersion, Kind: c.Kind}) {
		return unknown(pvapi.ReasonKindNotAllowed, object, "%s", o.Kinds.Refusal("spec.health names kind "+c.Kind)), nil
	}
	reader, err := o.healthReader(ctx, v, cluster, c)
	var ke *remote.KubeconfigError
	switch {
	case errors.As(err, &ke):
		return unknown(pvapi.ReasonKubeconfigUnavailable, object, "cannot read %s: %v", object, err), nil
	case err != nil:
		return pvapi.TargetHealth{}, err
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.FromAPIVersionAndKind(c.APIVersion, c.Kind))
	switch err := reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); {
	case apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err):
		return unknown(pvapi.ReasonObjectNotFound, object, "no %s %q in %s: the cluster has not reported on %s", c.Kind, name, where, t.Name), nil
	case err != nil && cluster != "":
		// pvkit's words, never the server's (remote.Describe): the
		// kubeconfig's author chose the server, and may read this status.
		// The whole error goes to the debug log only.
		log.FromContext(ctx).V(1).Info("reading another cluster failed", "cluster", cluster, "object", object, "error", err.Error())
		o.Clusters.Failed(v.Namespace, cluster)
		return unknown(pvapi.ReasonClusterUnreachable, object, "cluster %s (%s) did not answer reading %s: %s",
			cluster, o.clusterSource(v.Namespace, cluster), object, remote.Describe(err)), nil
	case err != nil:
		return pvapi.TargetHealth{}, fmt.Errorf("reading the health check's %s: %w", object, err)
	}
	return o.judgeHealth(ctx, c, hv, u.Object, healthRevision(v, t, b), object, t.Name), nil
}

// ClusterSource is what a Clusters may say of where a cluster's client
// comes from (pvctl: a context of the user's kubeconfig); without it, the
// cluster's kubeconfig Secret.
type ClusterSource interface {
	Source(namespace, cluster string) string
}

// clusterSource names where cluster's client comes from, for messages.
func (o Observer) clusterSource(namespace, cluster string) string {
	if cs, ok := o.Clusters.(ClusterSource); ok {
		return cs.Source(namespace, cluster)
	}
	return fmt.Sprintf("kubeconfig Secret %s/%s", namespace, remote.SecretName(cluster))
}

// healthReader is where the object is read: the management cluster
// (watched: a change wakes the variant) or the cluster's reader.
func (o Observer) healthReader(ctx context.Context, v *pvapi.PackageVariant, cluster string, c *pv.HealthCheck) (client.Reader, error) {
	if cluster == "" {
		return o.Client, o.Watch(c.APIVersion, c.Kind)
	}
	if o.Clusters == nil {
		return nil, &remote.KubeconfigError{Secret: v.Namespace + "/" + remote.SecretName(cluster), Err: errors.New("this controller reads no other cluster")}
	}
	return o.Clusters.Reader(ctx, v.Namespace, cluster)
}

// judgeHealth is the health of an object read: Healthy, HealthFailed or
// NotHealthy, with the cluster's words (the check's message).
func (o Observer) judgeHealth(ctx context.Context, c *pv.HealthCheck, hv health.Variant, obj map[string]any, rev health.Revision, object, target string) pvapi.TargetHealth {
	h := pvapi.TargetHealth{Object: object, Since: metav1.NewTime(o.now())}
	state, err := health.Evaluate(ctx, c, hv, obj, rev)
	if err != nil {
		h.Status, h.Reason, h.Message = metav1.ConditionUnknown, pvapi.ReasonCheckFailed, fmt.Sprintf("spec.health.%v", err)
		return h
	}
	words, err := health.Reported(ctx, c, hv, obj, rev)
	if err != nil {
		words = fmt.Sprintf("(spec.health.%v)", err)
	}
	h.Reported = words
	said := func(expr string) string {
		if words != "" {
			return ": " + words
		}
		return " (" + strings.TrimSpace(expr) + ")"
	}
	switch state {
	case health.Current:
		h.Status, h.Reason, h.Message = metav1.ConditionTrue, pvapi.ReasonHealthy, fmt.Sprintf("%s reports %s", object, target)
	case health.Failed:
		h.Status, h.Reason, h.Message = metav1.ConditionFalse, pvapi.ReasonHealthFailed, fmt.Sprintf("%s reports %s failed%s", object, target, said(c.Failed))
	default:
		h.Status, h.Reason, h.Message = metav1.ConditionFalse, pvapi.ReasonNotHealthy, fmt.Sprintf("%s does not report %s%s", object, target, said(c.Condition))
	}
	return h
}

// HealthVariant is the variant as a health check's CEL reads it.
func HealthVariant(v *pvapi.PackageVariant) health.Variant {
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
func healthRevision(v *pvapi.PackageVariant, t *pvapi.DownstreamTarget, b BranchHead) health.Revision {
	rev := health.Revision{Name: t.Name, Commit: t.Commit, Branch: b.branch}
	if t.Commit != "" {
		rev.Commits = append(rev.Commits, t.Commit)
	}
	if b.holds == t.Name && b.commit != "" && b.commit != t.Commit {
		rev.Commits = append(rev.Commits, b.commit)
	}
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

// WaitsOnACluster reports whether a target's health comes from another
// cluster (spec.health.clusterExpr) and is not True: nothing there wakes
// the variant, so it is polled.
func WaitsOnACluster(v *pvapi.PackageVariant) bool {
	if v.Spec.Health == nil || v.Spec.Health.ClusterExpr == "" {
		return false
	}
	for _, t := range v.Status.DownstreamTargets {
		if t.Health != nil && t.Health.Status != metav1.ConditionTrue {
			return true
		}
	}
	return false
}
