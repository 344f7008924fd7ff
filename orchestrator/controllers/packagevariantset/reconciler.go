package packagevariantset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/controllers/conditions"
	"github.com/pvkit/pvkit/orchestrator/controllers/dynwatch"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reconciler reconciles PackageVariantSets.
type Reconciler struct {
	Client client.Client
	Store  store.Store
	Clock  conditions.Clock

	watch *dynwatch.Watcher // set by SetupWithManager
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	set := &pvsapi.PackageVariantSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !set.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // children go with it (owner references)
	}
	orig := set.DeepCopy()
	defer func() {
		set.Status.ObservedGeneration = set.Generation
		if !equality.Semantic.DeepEqual(orig.Status, set.Status) {
			if err := r.Client.Status().Patch(ctx, set, client.MergeFrom(orig)); err != nil && !apierrors.IsNotFound(err) {
				retErr = errors.Join(retErr, err)
			}
		}
	}()
	return ctrl.Result{}, r.reconcileSet(ctx, set)
}

// reconcileSet validates, expands and applies. Sets Stalled and Ready.
func (r *Reconciler) reconcileSet(ctx context.Context, set *pvsapi.PackageVariantSet) error {
	env := envelope(set)
	node, err := krm.Encode(env)
	if err != nil {
		return err
	}
	if problems := pvsexpand.Validate(yaml.NewRNode(node), env); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Message
		}
		r.setCondition(set, pvsapi.ConditionStalled, metav1.ConditionTrue, pvsapi.ReasonValidationError, strings.Join(msgs, "; "))
		r.setCondition(set, pvsapi.ConditionReady, metav1.ConditionFalse, pvsapi.ReasonValidationError, "invalid packagevariantset object")
		return nil
	}
	world, err := r.world(ctx, set)
	if err != nil {
		return r.fail(set, err)
	}
	x, err := pvsexpand.Expand(env, world)
	if err != nil { // the upstream is missing: the revision watch brings the next reconcile
		r.setCondition(set, pvsapi.ConditionStalled, metav1.ConditionTrue, pvsapi.ReasonUpstreamNotFound, err.Error())
		r.setCondition(set, pvsapi.ConditionReady, metav1.ConditionFalse, pvsapi.ReasonUpstreamNotFound, err.Error())
		return nil
	}
	r.setCondition(set, pvsapi.ConditionStalled, metav1.ConditionFalse, pvsapi.ReasonValid, "all validation checks passed")
	existing, err := r.children(ctx, set)
	if err != nil {
		return r.fail(set, err)
	}
	steps, err := pvsexpand.Plan(env, x, existing)
	if err != nil {
		return r.fail(set, err)
	}
	if err := r.apply(ctx, set, steps); err != nil {
		return r.fail(set, err)
	}
	set.Status.TargetFailures = nil
	for _, f := range x.Failures {
		set.Status.TargetFailures = append(set.Status.TargetFailures, pvsapi.TargetFailure{Target: f.Where, Message: f.Message})
	}
	if len(x.Failures) > 0 {
		r.setCondition(set, pvsapi.ConditionReady, metav1.ConditionFalse, pvsapi.ReasonPartiallyReconciled,
			fmt.Sprintf("%d target entries could not be computed (see status.targetFailures); the others are reconciled and no PackageVariant was removed", len(x.Failures)))
		return nil
	}
	r.setCondition(set, pvsapi.ConditionReady, metav1.ConditionTrue, pvsapi.ReasonReconciled, "package variants successfully reconciled")
	return nil
}

func (r *Reconciler) fail(set *pvsapi.PackageVariantSet, err error) error {
	r.setCondition(set, pvsapi.ConditionReady, metav1.ConditionFalse, pvsapi.ReasonUnexpectedError, err.Error())
	return err
}

func (r *Reconciler) setCondition(set *pvsapi.PackageVariantSet, typ string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(&set.Status.Conditions, set.Generation, r.Clock, typ, status, reason, msg)
}

// envelope is the set as pvs-expand reads it.
func envelope(set *pvsapi.PackageVariantSet) *v1alpha2.PackageVariantSet {
	return &v1alpha2.PackageVariantSet{APIVersion: v1alpha2.APIVersion, Kind: v1alpha2.Kind,
		Metadata: meta.ObjectMeta{Name: set.Name, Namespace: set.Namespace, UID: string(set.UID), Labels: set.Labels, Annotations: set.Annotations},
		Spec:     set.Spec}
}

// world gathers what the set is expanded against: the Repositories in its
// namespace, the upstream package's revisions (only that package, F7), and
// the objects of each selected kind; a kind that cannot be listed is
// Unavailable, which fails its targets (F8).
func (r *Reconciler) world(ctx context.Context, set *pvsapi.PackageVariantSet) (*pvsexpand.World, error) {
	var items []*yaml.RNode
	var repos porchconfig.RepositoryList
	if err := r.Client.List(ctx, &repos, client.InNamespace(set.Namespace)); err != nil {
		return nil, fmt.Errorf("listing Repositories: %w", err)
	}
	for i := range repos.Items {
		repo := &repos.Items[i]
		repo.APIVersion, repo.Kind = pvsexpand.RepositoryGVK.APIVersion, pvsexpand.RepositoryGVK.Kind
		n, err := toNode(repo)
		if err != nil {
			return nil, err
		}
		items = append(items, n)
	}
	u := set.Spec.Upstream
	revs, err := r.Store.ListRevisions(ctx, store.PackageKey{Namespace: set.Namespace, Repository: u.Repo, Package: u.Package})
	if err != nil {
		return nil, err
	}
	for _, rev := range revs {
		n, err := toNode(revisionObject(rev))
		if err != nil {
			return nil, err
		}
		items = append(items, n)
	}
	unavailable := map[krm.GVK]string{}
	for _, t := range set.Spec.Targets {
		if s := t.ObjectSelector; s != nil {
			g := krm.GVK{APIVersion: s.APIVersion, Kind: s.Kind}
			if err := r.watchKind(schema.FromAPIVersionAndKind(g.APIVersion, g.Kind)); err != nil {
				unavailable[g] = err.Error()
				continue
			}
			objs, err := r.list(ctx, set.Namespace, g)
			if err != nil {
				unavailable[g] = err.Error()
				continue
			}
			items = append(items, objs...)
		}
	}
	w := pvsexpand.NewWorld(set.Namespace, items)
	w.Unavailable = unavailable
	return w, nil
}

func (r *Reconciler) list(ctx context.Context, namespace string, g krm.GVK) ([]*yaml.RNode, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.FromAPIVersionAndKind(g.APIVersion, g.Kind+"List"))
	if err := r.Client.List(ctx, l, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := make([]*yaml.RNode, 0, len(l.Items))
	for i := range l.Items {
		n, err := toNode(l.Items[i].Object)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// revisionObject is a revision as pvs-expand reads PackageRevisions.
func revisionObject(rev store.Revision) map[string]any {
	return map[string]any{
		"apiVersion": pvsexpand.PackageRevisionGVK.APIVersion, "kind": pvsexpand.PackageRevisionGVK.Kind,
		"metadata": map[string]any{"name": rev.Name, "namespace": rev.Namespace, "labels": rev.Labels, "annotations": rev.Annotations},
		"spec": map[string]any{"repository": rev.Repository, "packageName": rev.Package, "workspaceName": rev.Workspace,
			"revision": rev.Revision, "lifecycle": string(rev.Lifecycle)},
	}
}

func toNode(v any) (*yaml.RNode, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return krm.ParseJSON(b)
}

// children lists the set's PackageVariants as nodes for the plan.
func (r *Reconciler) children(ctx context.Context, set *pvsapi.PackageVariantSet) ([]*yaml.RNode, error) {
	var list pvapi.PackageVariantList
	if err := r.Client.List(ctx, &list, client.InNamespace(set.Namespace),
		client.MatchingLabels{v1alpha2.SetLabel: pvsexpand.SetID(envelope(set))}); err != nil {
		return nil, fmt.Errorf("listing the set's PackageVariants: %w", err)
	}
	out := make([]*yaml.RNode, 0, len(list.Items))
	for i := range list.Items {
		c := &list.Items[i]
		c.APIVersion, c.Kind = pv.APIVersion, pv.Kind
		n, err := toNode(c)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// apply carries out the plan: create, update the spec in place, delete.
func (r *Reconciler) apply(ctx context.Context, set *pvsapi.PackageVariantSet, steps []pvsexpand.Step) error {
	var errs []error
	for _, s := range steps {
		var err error
		switch s.Action {
		case pvsexpand.Create:
			err = r.create(ctx, s.Desired)
		case pvsexpand.Update:
			err = r.update(ctx, set.Namespace, s)
		case pvsexpand.Remove:
			child := &pvapi.PackageVariant{}
			child.Namespace, child.Name = set.Namespace, s.Name
			err = client.IgnoreNotFound(r.Client.Delete(ctx, child))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s PackageVariant %q: %w", s.Action, s.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (r *Reconciler) create(ctx context.Context, desired *yaml.RNode) error {
	child := &pvapi.PackageVariant{}
	b, err := desired.MarshalJSON()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, child); err != nil {
		return err
	}
	controllerutil.AddFinalizer(child, pv.Finalizer)
	return r.Client.Create(ctx, child)
}

func (r *Reconciler) update(ctx context.Context, namespace string, s pvsexpand.Step) error {
	var spec pv.PackageVariantSpec
	b, err := yaml.NewRNode(krm.Field(s.Desired.YNode(), "spec")).MarshalJSON()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return err
	}
	child := &pvapi.PackageVariant{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: s.Name}, child); err != nil {
		return err
	}
	orig := child.DeepCopy()
	child.Spec = spec
	return r.Client.Patch(ctx, child, client.MergeFrom(orig))
}
