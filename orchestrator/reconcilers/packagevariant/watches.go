package packagevariant

import (
	"context"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/health"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Indexes on PackageVariants, so that each event maps to the variants it
// concerns (rule: targeted-watches), never to every variant in the namespace.
const (
	// indexUpstream keys variants by "<repo>/<package>" of their upstream.
	indexUpstream = "pvkit.dev/upstream"
	// indexInjector keys variants by the names their injectors select.
	indexInjector = "pvkit.dev/injector"
	// indexHealth keys variants by the object their health check reads,
	// "Kind/name" (rule: health-gated-rollouts).
	indexHealth = "pvkit.dev/health"
)

// SetupWithManager registers the reconciler: it watches PackageVariants,
// the PackageRevisions of their upstream and downstream packages (mapped
// through owner references and the upstream index), and, once a package
// shows injection points of a kind, the objects of that kind (mapped through
// the injector index): an injected object that changes gives an updated
// draft.
func (r *Reconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	ix := mgr.GetFieldIndexer()
	if err := ix.IndexField(ctx, &pvapi.PackageVariant{}, indexUpstream, upstreamKeys); err != nil {
		return err
	}
	if err := ix.IndexField(ctx, &pvapi.PackageVariant{}, indexInjector, injectorNames); err != nil {
		return err
	}
	if err := ix.IndexField(ctx, &pvapi.PackageVariant{}, indexHealth, healthObjects); err != nil {
		return err
	}
	c, err := ctrl.NewControllerManagedBy(mgr).Named("packagevariant").
		For(&pvapi.PackageVariant{}, builder.WithPredicates(kit.Changed())).
		Watches(&porchapi.PackageRevision{}, handler.EnqueueRequestsFromMapFunc(r.mapRevision)).
		Watches(&pvsapi.PackageVariantSet{}, handler.EnqueueRequestsFromMapFunc(r.mapSetChildren), builder.WithPredicates(kit.SuspendChanged())).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(r.Workers, 1), RateLimiter: kit.RateLimiter()}).
		Build(r)
	if err != nil {
		return err
	}
	r.watch = kit.NewWatcher(c, mgr.GetCache(), r.mapInjected)
	return nil
}

// mapSetChildren maps a set whose suspension changed to its children: a
// set's suspension holds them, and its end resumes them.
func (r *Reconciler) mapSetChildren(ctx context.Context, o client.Object) []reconcile.Request {
	var l pvapi.PackageVariantList
	if err := r.Client.List(ctx, &l, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the children of a set whose suspension changed", "set", o.GetName())
		return nil
	}
	var out []reconcile.Request
	for _, v := range l.Items {
		if owner := metav1.GetControllerOf(&v); owner != nil && owner.UID == o.GetUID() {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: v.Namespace, Name: v.Name}})
		}
	}
	return out
}

func upstreamKeys(o client.Object) []string {
	if u := o.(*pvapi.PackageVariant).Spec.Upstream; u != nil {
		return []string{u.Repo + "/" + u.Package}
	}
	return nil
}

func injectorNames(o client.Object) []string {
	var names []string
	for _, inj := range o.(*pvapi.PackageVariant).Spec.Injectors {
		names = append(names, inj.Name)
	}
	return names
}

// mapRevision maps a PackageRevision to its owning variants, to the
// variants whose upstream is its package and, when no variant owns it and
// it is published, to the variants whose downstream it is.
func (r *Reconciler) mapRevision(ctx context.Context, o client.Object) []reconcile.Request {
	pr, ok := o.(*porchapi.PackageRevision)
	if !ok {
		return nil
	}
	seen := map[types.NamespacedName]bool{}
	var out []reconcile.Request
	add := func(name string) {
		k := types.NamespacedName{Namespace: pr.Namespace, Name: name}
		if !seen[k] {
			seen[k] = true
			out = append(out, reconcile.Request{NamespacedName: k})
		}
	}
	for _, ref := range pr.OwnerReferences {
		if ref.Kind == pv.Kind {
			add(ref.Name)
		}
	}
	// Not mapped: a revision of a variant's downstream it does not own
	// (Porch's branch placeholder after a commit, a person's revision).
	// Mapping it brought reconciles ahead of Porch's listing and, in
	// fresh-clone CI, a staged rollout of 444 s and Porch timing out; a
	// drift is seen at the variant's next reconcile instead.
	indexes := []string{indexUpstream}
	for _, ix := range indexes {
		var l pvapi.PackageVariantList
		if err := r.Client.List(ctx, &l, client.InNamespace(pr.Namespace),
			client.MatchingFields{ix: pr.Spec.RepositoryName + "/" + pr.Spec.PackageName}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "mapping a PackageRevision to the variants of its package", "packageRevision", pr.Name)
		}
		for _, v := range l.Items {
			add(v.Name)
		}
	}
	return out
}

// healthObjects is the object a variant's health check reads, as
// "Kind/name" (none when the name does not evaluate: the reconcile says
// why).
func healthObjects(o client.Object) []string {
	v := o.(*pvapi.PackageVariant)
	if v.Spec.Health == nil {
		return nil
	}
	name, err := health.Name(context.Background(), v.Spec.Health, observe.HealthVariant(v))
	if err != nil {
		return nil
	}
	return []string{v.Spec.Health.Kind + "/" + name}
}

// mapInjected maps an in-cluster object to the variants that inject it,
// and to those whose health check reads it.
func (r *Reconciler) mapInjected(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	seen := map[string]bool{}
	for _, f := range []client.MatchingFields{{indexInjector: o.GetName()},
		{indexHealth: o.GetObjectKind().GroupVersionKind().Kind + "/" + o.GetName()}} {
		var l pvapi.PackageVariantList
		if err := r.Client.List(ctx, &l, client.InNamespace(o.GetNamespace()), f); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "mapping an in-cluster object to its variants", "object", o.GetName())
			return nil
		}
		for _, v := range l.Items {
			if !seen[v.Name] {
				seen[v.Name] = true
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: v.Namespace, Name: v.Name}})
			}
		}
	}
	return out
}

// watchKind starts watching a kind of injected objects, once.
func (r *Reconciler) watchKind(apiVersion, kind string) error {
	return r.watch.Ensure(schema.FromAPIVersionAndKind(apiVersion, kind))
}
