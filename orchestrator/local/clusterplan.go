package local

// pvctl plan --kubeconfig: what the controller would do with changed files
// on a cluster, through the same reconcilers, reading the cluster and
// writing nothing to it.

import (
	"context"
	"fmt"
	"sort"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ClusterPlanOptions are pvctl plan --kubeconfig's.
type ClusterPlanOptions struct {
	// Client reads the cluster; nothing is ever written through it.
	Client    client.Client
	Namespace string
	// Files and Stdin are -f's: the objects to apply, as kubectl apply
	// would (the cluster's other sets and variants stay as they are).
	Files []string
	Stdin []byte
	// ReadableKinds are the controller's --readable-kinds beyond
	// ConfigMap; MaxChildren its --max-children-per-set; ApproveByPolicy
	// its --approve-by-policy.
	ReadableKinds   []string
	MaxChildren     int
	ApproveByPolicy bool
	// Render renders each write as Porch's function runner would (nil:
	// no render).
	Render *Render
	// MaxPasses bounds the reconcile passes (0: 20).
	MaxPasses int
}

// PlanCluster is pvctl plan --kubeconfig -f: the namespace's sets,
// variants, Repositories, package revisions and readable objects are read
// from the cluster into an embedded cluster and an in-memory Porch (each
// revision's files read when a reconciler first needs them); the files'
// objects are applied over them (kubectl apply: created or changed, nothing
// else removed); the controller's reconcilers run passes until nothing
// changes, and the report says what they would write. Nothing is removed
// (no --prune: what would be is listed as held back), and nothing is
// written to the cluster.
func PlanCluster(ctx context.Context, o ClusterPlanOptions) (*Report, error) {
	in, err := readInput(o.Files, o.Namespace, o.Stdin)
	if err != nil {
		return nil, err
	}
	kinds, err := in.readableKinds(o.ReadableKinds)
	if err != nil {
		return nil, err
	}
	if o.MaxPasses == 0 {
		o.MaxPasses = 20
	}
	where := fmt.Sprintf("namespace %s of the cluster", o.Namespace)
	cl, err := readCluster(ctx, o, where)
	if err != nil {
		return nil, err
	}
	mem := cl.memoryPorch(ctx, o, where)
	objs, deleted, err := cl.objects(ctx, o, in, kinds, where)
	if err != nil {
		return nil, err
	}

	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	pr := newPruner(PruneNone)
	w := &world{pr: pr}
	w.j = &journal{Store: mem, pruner: pr}
	w.c = newCluster(scheme, pr, w.j.note, objs...)
	if len(deleted) > 0 { // none: every set and variant of the cluster is given
		return nil, fmt.Errorf("internal: the plan would delete %s", deleted[0].GetName())
	}
	w.events = newEventLog(scheme, nil, nil)
	w.pv, w.pvs = reconcilers.New(reconcilers.Options{Client: w.c, Store: w.j, Recorder: w.events, Kinds: kinds,
		MaxChildren: o.MaxChildren, ApproveByPolicy: o.ApproveByPolicy})
	rep, errs, err := w.loop(ctx, RunOptions{Namespace: o.Namespace, MaxPasses: o.MaxPasses})
	if err != nil {
		return nil, err
	}
	if err := rep.collect(ctx, w.c, mem, o.Namespace, errs); err != nil {
		return nil, err
	}
	rep.DryRun = true
	for _, c := range w.j.Changes() {
		rep.Changes = append(rep.Changes, conditional(c))
	}
	rep.Held = pr.Held()
	return rep, nil
}

// clusterLists are what PlanCluster reads of the cluster's namespace.
type clusterLists struct {
	variants pvapi.PackageVariantList
	sets     pvsapi.PackageVariantSetList
	repos    porchconfig.RepositoryList
	revs     porchapi.PackageRevisionList
}

// readCluster lists the namespace's sets, variants, Repositories and
// PackageRevisions (the embedded cluster creates what it is given: no
// resourceVersion).
func readCluster(ctx context.Context, o ClusterPlanOptions, where string) (*clusterLists, error) {
	cl := &clusterLists{}
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{{"PackageVariants", &cl.variants}, {"PackageVariantSets", &cl.sets}, {"Repositories", &cl.repos}, {"PackageRevisions", &cl.revs}} {
		if err := o.Client.List(ctx, l.list, client.InNamespace(o.Namespace)); err != nil {
			return nil, fmt.Errorf("reading %s: listing %s: %w", where, l.what, err)
		}
	}
	for i := range cl.variants.Items {
		cl.variants.Items[i].ResourceVersion = ""
	}
	for i := range cl.sets.Items {
		cl.sets.Items[i].ResourceVersion = ""
	}
	for i := range cl.repos.Items {
		cl.repos.Items[i].ResourceVersion = ""
	}
	return cl, nil
}

// memoryPorch is Porch, in memory: the repositories and their revisions as
// listed, each revision's files read when first needed.
func (cl *clusterLists) memoryPorch(ctx context.Context, o ClusterPlanOptions, where string) *memory.Store {
	mem := memory.New()
	for _, r := range cl.repos.Items {
		mem.SetDeployment(o.Namespace, r.Name, r.Spec.Deployment)
	}
	sort.Slice(cl.revs.Items, func(i, j int) bool { return cl.revs.Items[i].Name < cl.revs.Items[j].Name })
	for i := range cl.revs.Items {
		pr := &cl.revs.Items[i]
		name := pr.Name
		mem.RestoreLazy(porch.FromAPI(pr), func() (map[string]string, error) {
			var res porchapi.PackageRevisionResources
			if err := o.Client.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: name}, &res); err != nil {
				return nil, fmt.Errorf("reading %s: the resources of %s: %w", where, name, err)
			}
			return res.Spec.Resources, nil
		})
	}
	if o.Render != nil {
		mem.SetRenderer(o.Render.renderer(ctx))
	}
	return mem
}

// objects are the embedded cluster's: the cluster's sets and variants
// (UIDs, status, finalizers) with the files' applied over them, the
// Repositories, and the objects of the readable kinds the files do not
// give.
func (cl *clusterLists) objects(ctx context.Context, o ClusterPlanOptions, in *input, kinds kit.ReadableKinds, where string) (objs, deleted []client.Object, err error) {
	givenV, givenS := map[string]bool{}, map[string]bool{}
	for _, v := range in.variants {
		givenV[v.Name] = true
	}
	for _, s := range in.sets {
		givenS[s.Name] = true
	}
	for i := range cl.sets.Items {
		if s := &cl.sets.Items[i]; !givenS[s.Name] {
			in.sets = append(in.sets, s.DeepCopy())
		}
	}
	for i := range cl.variants.Items {
		v := &cl.variants.Items[i]
		if owner := metav1.GetControllerOf(v); !givenV[v.Name] && (owner == nil || owner.Kind != "PackageVariantSet") {
			in.variants = append(in.variants, v.DeepCopy())
		}
	}
	objs, deleted = clusterObjects(in, &state.State{Variants: cl.variants.Items, Sets: cl.sets.Items})
	givenR := map[string]bool{}
	for _, r := range in.repositories {
		givenR[r.Name] = true
	}
	for i := range cl.repos.Items {
		if r := &cl.repos.Items[i]; !givenR[r.Name] {
			objs = append(objs, r.DeepCopy())
		}
	}
	givenO := givenKeys(in)
	for _, gk := range kinds.List() {
		m, err := o.Client.RESTMapper().RESTMapping(schema.GroupKind{Group: gk.Group, Kind: gk.Kind})
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: kind %s: %w", where, gk, err)
		}
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(m.GroupVersionKind.GroupVersion().WithKind(gk.Kind + "List"))
		if err := o.Client.List(ctx, l, client.InNamespace(o.Namespace)); err != nil {
			return nil, nil, fmt.Errorf("reading %s: listing %s: %w", where, gk, err)
		}
		for i := range l.Items {
			u := &l.Items[i]
			if !givenO[state.ObjectKey(u.Object)] {
				u = u.DeepCopy()
				u.SetResourceVersion("")
				objs = append(objs, u)
			}
		}
	}
	return objs, deleted, nil
}
