package embedded

import (
	"context"
	"crypto/sha256"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clienttesting "k8s.io/client-go/testing"
	"reflect"
	"strings"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// UID is the UID the embedded cluster gives an object: the same for the
// same kind, namespace and name on every run, so that a variant owns its
// downstream revisions across pvctl runs (ownership is by UID) and a child
// a set removes and adds again adopts what it had.
func UID(kind, namespace, name string) types.UID {
	h := sha256.Sum256([]byte(kind + "/" + namespace + "/" + name))
	x := fmt.Sprintf("%x", h[:16])
	return types.UID(x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32])
}

// Cluster is the embedded API server pvctl run reconciles against, and the
// reconcilers' tests too: controller-runtime's in-memory client (resource
// versions, finalizers and deletion timestamps, the status subresource),
// plus what an API server adds that it lacks: the CRDs' schemas and CEL
// rules on every write (schema.go), UIDs on create and a generation that
// moves when the spec changes. Every kind is namespaced. It counts its
// writes.
type Cluster struct {
	client.WithWatch
	raw    client.WithWatch // the in-memory client, without the API server's checks
	mu     sync.Mutex
	writes int
	// shared are objects read with client.UnsafeDisableDeepCopy, served
	// again without a copy (as an informer cache serves them) until a
	// write touches their key; ver counts each key's writes (a read that
	// raced a write is not kept): one counter per key the process ever
	// wrote, which bounds it (pvctl run: one run; the controller never
	// uses the embedded cluster).
	shared map[client.ObjectKey]map[reflect.Type]client.Object
	ver    map[client.ObjectKey]uint64
	// lists are whole namespaces listed with client.UnsafeDisableDeepCopy,
	// by list type and namespace, served again (filtered by the labels
	// asked), as an informer's indexer serves them: a write marks its
	// object's name dirty in the lists of its kind and namespace (dirty),
	// and the next list reads those objects again, one each, not the
	// whole namespace (epoch counts the writes, for a list built whole
	// while one ran). listMu makes one list at a time bring a kept list up
	// to date.
	lists  map[listKey]client.ObjectList
	kinds  map[listKey]string
	dirty  map[listKey]map[string]bool
	epoch  uint64
	listMu sync.Mutex
}

type listKey struct {
	t         reflect.Type
	namespace string
}

// Get is the in-memory client's, but for a read with
// client.UnsafeDisableDeepCopy: the object as last read is given again,
// not decoded anew (controller-runtime's client without a cache ignores
// the option and decodes every object; pvkit's variants read their set,
// whose status names every child, on each reconcile, and that decoding
// grew with the square of the fleet: docs/scale.md). As with an informer,
// the caller must not write to what it gets.
func (c *Cluster) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	var o client.GetOptions
	o.ApplyOptions(opts)
	if o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
		return c.WithWatch.Get(ctx, key, obj, opts...)
	}
	t := reflect.TypeOf(obj)
	c.mu.Lock()
	cached, ok := c.shared[key][t]
	ver := c.ver[key]
	c.mu.Unlock()
	if ok {
		reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(cached).Elem())
		return nil
	}
	if err := c.WithWatch.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	keep := obj.DeepCopyObject().(client.Object)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ver[key] == ver { // no write since the read began
		if c.shared == nil {
			c.shared = map[client.ObjectKey]map[reflect.Type]client.Object{}
		}
		if c.shared[key] == nil {
			c.shared[key] = map[reflect.Type]client.Object{}
		}
		c.shared[key][t] = keep
	}
	return nil
}

// touch forgets what was read of o's key: a write to it ended.
func (c *Cluster) touch(o client.Object) {
	key := client.ObjectKeyFromObject(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ver == nil {
		c.ver = map[client.ObjectKey]uint64{}
	}
	c.ver[key]++
	delete(c.shared, key)
	c.epoch++
	kind := KindOf(c.Scheme(), o)
	for k := range c.lists {
		switch {
		case kind == "":
			clear(c.lists) // a kind not known: every list is read whole again
			return
		case k.namespace == key.Namespace && c.kinds[k] == kind:
			if c.dirty == nil {
				c.dirty = map[listKey]map[string]bool{}
			}
			if c.dirty[k] == nil {
				c.dirty[k] = map[string]bool{}
			}
			c.dirty[k][key.Name] = true
		}
	}
}

// Seed stores objects as they are, past the schemas (no UID or generation
// given, no write counted), as a cluster holds objects stored before its
// CRD changed: what the reconcilers do with an object the API server
// would not take now.
func (c *Cluster) Seed(ctx context.Context, objs ...client.Object) error {
	for _, o := range objs {
		c.touch(o)
		if err := c.raw.Create(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// Options are what a Cluster is made with.
type Options struct {
	Scheme *runtime.Scheme
	// Objects are stored as they are (no schema, UID or generation given).
	Objects []client.Object
	// Hold, when set, is asked before a PackageVariant or
	// PackageVariantSet is deleted; its error refuses the delete (pvctl
	// run without --prune).
	Hold func(format string, a ...any) error
	// Note, when set, is told of each variant created, each variant whose
	// spec changed and each set or variant deleted (pvctl run's report).
	Note func(format string, a ...any)
	// Indexes are field indexes the client serves (a controller's cache
	// indexes, for its tests).
	Indexes []Index
}

// Index is a field index: the field's name and how to read it.
type Index struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
}

// New makes an embedded cluster.
func New(o Options) *Cluster {
	c := &Cluster{}
	a := &apiServer{c: c, scheme: o.Scheme, hold: o.Hold, note: o.Note}
	if a.hold == nil {
		a.hold = func(string, ...any) error { return nil }
	}
	if a.note == nil {
		a.note = func(string, ...any) {}
	}
	a.sch, a.schErr = crdSchemas()
	// A plain object tracker, without managed fields: pvkit applies
	// nothing server-side, and client-go's field-managed tracker builds a
	// REST mapper of the whole scheme on every write (a fifth of a
	// reconcile's time in a 10,000-cycle run).
	tracker := clienttesting.NewObjectTracker(o.Scheme, serializer.NewCodecFactory(o.Scheme).UniversalDecoder())
	b := fake.NewClientBuilder().WithScheme(o.Scheme).WithRESTMapper(namespacedMapper{o.Scheme}).WithObjectTracker(tracker).WithObjects(o.Objects...).
		WithStatusSubresource(&pvapi.PackageVariant{}, &pvsapi.PackageVariantSet{})
	for _, i := range o.Indexes {
		b = b.WithIndex(i.Object, i.Field, i.Extract)
	}
	c.raw = b.Build()
	c.WithWatch = interceptor.NewClient(c.raw, interceptor.Funcs{Create: a.create, Update: a.update, Patch: a.patch, Delete: a.delete,
		SubResourcePatch: a.subResourcePatch, SubResourceUpdate: a.subResourceUpdate})
	return c
}

// apiServer is what the embedded cluster adds to controller-runtime's
// in-memory client on every write, as an API server would: the CRDs'
// schemas, UIDs and generations, the write count, and the host's holds and
// notes.
type apiServer struct {
	c      *Cluster
	scheme *runtime.Scheme
	sch    schemas
	schErr error
	hold   func(format string, a ...any) error
	note   func(format string, a ...any)
}

// valid checks a write of o as the API server would with the CRDs'
// schemas (schema.go); create: there is no old object.
func (a *apiServer) valid(ctx context.Context, cl client.Client, o client.Object, create bool) error {
	if a.schErr != nil {
		return a.schErr
	}
	gvk, err := apiutil.GVKForObject(o, a.scheme)
	if err != nil {
		return err
	}
	if _, ok := a.sch[gvk]; !ok {
		return nil
	}
	var old func() (runtime.Object, error) // read only when o has errors
	if !create {
		old = func() (runtime.Object, error) {
			cur := o.DeepCopyObject().(client.Object)
			return cur, cl.Get(ctx, client.ObjectKeyFromObject(o), cur)
		}
	}
	return a.sch.validate(ctx, gvk, o.GetName(), o, old)
}

func (a *apiServer) count() {
	a.c.mu.Lock()
	a.c.writes++
	a.c.mu.Unlock()
}

func (a *apiServer) create(ctx context.Context, cl client.WithWatch, o client.Object, opts ...client.CreateOption) error {
	defer a.c.touch(o)
	if err := a.valid(ctx, cl, o, true); err != nil {
		return err
	}
	a.count()
	// An API server ignores a client's UID: an object created in a run (a
	// set's child, a synced object) gets the cluster's.
	o.SetUID(UID(KindOf(a.scheme, o), o.GetNamespace(), o.GetName()))
	o.SetGeneration(1)
	if err := cl.Create(ctx, o, opts...); err != nil {
		return err
	}
	if k := KindOf(a.scheme, o); k == "PackageVariant" {
		a.note("created %s %s", k, o.GetName())
	}
	return nil
}

func (a *apiServer) update(ctx context.Context, cl client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
	defer a.c.touch(o)
	if err := a.valid(ctx, cl, o, false); err != nil {
		return err
	}
	a.count()
	if err := bumpGeneration(ctx, cl, o, nil); err != nil {
		return err
	}
	return cl.Update(ctx, o, opts...)
}

// patch: pvkit patches with client.MergeFrom, so o is the object as the
// patch leaves it.
func (a *apiServer) patch(ctx context.Context, cl client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
	defer a.c.touch(o)
	if err := a.valid(ctx, cl, o, false); err != nil {
		return err
	}
	a.count()
	before, err := specOf(ctx, cl, o)
	if err != nil {
		return err
	}
	if err := cl.Patch(ctx, o, p, opts...); err != nil {
		return err
	}
	gen := o.GetGeneration()
	if err := bumpGeneration(ctx, cl, o, before); err != nil {
		return err
	}
	if k := KindOf(a.scheme, o); k == "PackageVariant" && o.GetGeneration() != gen {
		a.note("updated the spec of %s %s", k, o.GetName())
	}
	return nil
}

// delete asks the host before a variant or set is removed (pvctl run
// holds it back without --prune).
func (a *apiServer) delete(ctx context.Context, cl client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
	defer a.c.touch(o)
	k := KindOf(a.scheme, o)
	pvkits := k == "PackageVariant" || k == "PackageVariantSet"
	if pvkits {
		if err := a.hold("%s %s", k, o.GetName()); err != nil {
			return err
		}
	}
	a.count()
	if err := cl.Delete(ctx, o, opts...); err != nil {
		return err
	}
	if pvkits {
		a.note("deleted %s %s", k, o.GetName())
	}
	return nil
}

func (a *apiServer) subResourcePatch(ctx context.Context, cl client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	defer a.c.touch(o)
	if err := a.valid(ctx, cl, o, false); err != nil {
		return err
	}
	a.count()
	return cl.SubResource(sub).Patch(ctx, o, p, opts...)
}

func (a *apiServer) subResourceUpdate(ctx context.Context, cl client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
	defer a.c.touch(o)
	if err := a.valid(ctx, cl, o, false); err != nil {
		return err
	}
	a.count()
	return cl.SubResource(sub).Update(ctx, o, opts...)
}

// Writes counts the writes so far.
func (c *Cluster) Writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

// KindOf is an object's kind: its own, or the scheme's name for its type.
func KindOf(scheme *runtime.Scheme, o runtime.Object) string {
	if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	if gvks, _, err := scheme.ObjectKinds(o); err == nil && len(gvks) > 0 {
		return gvks[0].Kind
	}
	return ""
}

// spec returns the spec of a PackageVariant or PackageVariantSet (nil for
// other kinds: their generation is left alone).
func spec(o client.Object) any {
	switch t := o.(type) {
	case *pvapi.PackageVariant:
		return t.Spec
	case *pvsapi.PackageVariantSet:
		return t.Spec
	}
	return nil
}

// specOf reads the stored spec of o.
func specOf(ctx context.Context, cl client.Reader, o client.Object) (any, error) {
	if spec(o) == nil {
		return nil, nil
	}
	cur := o.DeepCopyObject().(client.Object)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return spec(cur), nil
}

// bumpGeneration moves o's generation on when its spec differs from the
// stored one (before, when the write already happened: a patch).
func bumpGeneration(ctx context.Context, cl client.WithWatch, o client.Object, before any) error {
	if spec(o) == nil {
		return nil
	}
	patched := before != nil
	if !patched {
		cur := o.DeepCopyObject().(client.Object)
		if err := cl.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			return client.IgnoreNotFound(err)
		}
		before = spec(cur)
		o.SetGeneration(cur.GetGeneration())
	}
	if equality.Semantic.DeepEqual(before, spec(o)) {
		return nil
	}
	o.SetGeneration(o.GetGeneration() + 1)
	if patched {
		return cl.Update(ctx, o)
	}
	return nil
}

// namespacedMapper maps every kind, known or not, as namespaced: the
// embedded cluster lists whatever kinds a package's injection points or a
// set's selectors name, including kinds no file supplied (an empty list).
type namespacedMapper struct{ scheme *runtime.Scheme }

func (m namespacedMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return schema.GroupVersionKind{}, fmt.Errorf("pvctl run maps kinds, not resources (%s)", r)
}

func (m namespacedMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	_, err := m.KindFor(r)
	return nil, err
}

func (m namespacedMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return r, nil
}

func (m namespacedMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return []schema.GroupVersionResource{r}, nil
}

func (m namespacedMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*apimeta.RESTMapping, error) {
	if len(versions) == 0 || versions[0] == "" {
		vs := m.scheme.VersionsForGroupKind(gk)
		if len(vs) == 0 {
			return nil, &apimeta.NoKindMatchError{GroupKind: gk}
		}
		versions = []string{vs[0].Version}
	}
	gvk := gk.WithVersion(versions[0])
	plural, _ := apimeta.UnsafeGuessKindToResource(gvk)
	return &apimeta.RESTMapping{Resource: plural, GroupVersionKind: gvk, Scope: apimeta.RESTScopeNamespace}, nil
}

func (m namespacedMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*apimeta.RESTMapping, error) {
	r, err := m.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	return []*apimeta.RESTMapping{r}, nil
}

func (m namespacedMapper) ResourceSingularizer(resource string) (string, error) {
	return strings.TrimSuffix(resource, "s"), nil
}
