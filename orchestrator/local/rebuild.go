package local

// pvctl verify --rebuild: a package revision pvkit wrote, built again from
// what its provenance record names, by the controller's reconcilers on an
// in-memory Porch, and compared with what the repository holds (rule
// provenance-rebuild in docs/behavior.md).

import (
	"context"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"slices"
	"sort"
	"strings"
	"sync"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/render"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Rebuilt is what a rebuild found.
type Rebuilt struct {
	// From says what the package was rebuilt from (the upstream ref and
	// commit, the variant).
	From string
	// Problems are what does not hold before the comparison: an injected
	// object the package holds otherwise than the record says.
	Problems []string
	// Differences are the fields (objects, files) where the package is
	// not what its inputs give, unexplained.
	Differences []tasks.FieldChange
	// Explained are the differences in files the record says a person
	// edited (or pvkit adopted), by file, with the record's words.
	Explained map[string]string
	// Version is set when the record was written by another pvkit
	// version than this one: its.
	Version string
	// StandIns are the kinds a stand-in object was put in the rebuild's
	// cluster for, taken from the package's own conditions
	// (provenance.StandIns): the package's word, not checked.
	StandIns []string
}

// OK reports whether the package is what its inputs give (a person's
// recorded edits aside).
func (r *Rebuilt) OK() bool { return len(r.Problems) == 0 && len(r.Differences) == 0 }

// RebuildOptions are a rebuild's: the store the package revision and its
// upstream are read from, and how drafts render (nil: not rendered, as
// pvctl run --no-render).
type RebuildOptions struct {
	Store     *gitstore.Store
	Namespace string
	Render    *Render
	// Version is this pvkit's version, to say when the record's was
	// another.
	Version string
	// Variants are the variants the fleet has now (the last run's state),
	// by namespace/name: the functions the record's variant's spec names
	// may run in its rebuild beside those of the revision's own Kptfiles.
	Variants map[string]*pvapi.PackageVariant
}

// Rebuild builds rev's package again from what its record (in files)
// names: the upstream at its recorded commit, the variant's recorded spec,
// the injected objects as the package holds them (checked against their
// recorded digests), with the controller's reconcilers on an in-memory
// Porch, and compares the draft they write with files by meaning. The
// error is provenance.ErrNoParameters for a record written before records
// carried what a rebuild needs, or names what could not be read.
func Rebuild(ctx context.Context, o RebuildOptions, rev store.Revision, files map[string]string) (*Rebuilt, error) {
	rec, err := provenance.Read(files)
	if err != nil {
		return nil, err
	}
	rb, err := rec.Rebuild()
	if err != nil {
		return nil, err
	}
	spec := rb.Parameters
	if spec.Upstream == nil || spec.Downstream == nil {
		return nil, fmt.Errorf("%s: externalParameters.parameters names no upstream or downstream", provenance.FileName)
	}
	out := &Rebuilt{From: fmt.Sprintf("upstream %s at %s, variant %s/%s", rb.Ref, shortCommit(rb.Commit), rb.Variant.Namespace, rb.Variant.Name)}
	if o.Version != "" && rb.Version != "" && rb.Version != o.Version {
		out.Version = rb.Version
	}
	objs, problems, err := rb.Objects(files)
	if err != nil {
		return nil, err
	}
	out.Problems = problems
	standIns, err := rb.StandIns(files, o.Namespace)
	if err != nil {
		return nil, err
	}
	objs = append(objs, standIns...)
	for _, o := range standIns {
		out.StandIns = append(out.StandIns, fmt.Sprint(o["kind"]))
	}
	held := heldTo(o.Render, files, o.Variants[rb.Variant.Namespace+"/"+rb.Variant.Name])
	mem, err := rebuildStore(ctx, o, rb, held)
	if err != nil {
		return nil, err
	}
	draft, err := rebuildDraft(ctx, o, mem, rb, objs)
	if refused := held.Refused(); len(refused) > 0 {
		return nil, fmt.Errorf("the rebuild would run %s, which the revision's own Kptfiles do not name (the record chose it): not run", strings.Join(refused, ", "))
	}
	if err != nil {
		return nil, err
	}
	rebuilt, err := mem.GetResources(ctx, o.Namespace, draft)
	if err != nil {
		return nil, err
	}
	marked := rec.MarkedOrigins()
	for _, c := range tasks.FieldChanges(provenance.WithoutRecord(files), provenance.WithoutRecord(rebuilt.Files), "published", "rebuilt") {
		if origin, ok := marked[c.File]; ok {
			if out.Explained == nil {
				out.Explained = map[string]string{}
			}
			out.Explained[c.File] = origin.String()
			continue
		}
		out.Differences = append(out.Differences, c)
	}
	return out, nil
}

// rebuildStore is an in-memory Porch holding the upstream revision at the
// recorded commit (as the repository's revision that the lock names
// lists it) and the downstream repository, empty.
func rebuildStore(ctx context.Context, o RebuildOptions, rb *provenance.Rebuild, held *heldRuntime) (*memory.Store, error) {
	up, down := rb.Parameters.Upstream, rb.Parameters.Downstream
	revs, err := o.Store.ListRevisions(ctx, store.PackageKey{Namespace: o.Namespace, Repository: up.Repo, Package: up.Package})
	if err != nil {
		return nil, err
	}
	lock := &store.Lock{Repository: up.Repo, Package: up.Package, Ref: rb.Ref}
	var upRev *store.Revision
	for i := range revs {
		if revs[i].Lifecycle.IsPublished() && lock.Matches(revs[i]) {
			upRev = &revs[i]
		}
	}
	if upRev == nil {
		return nil, fmt.Errorf("the upstream %s of repository %s is not served (pvctl get --repo %s lists what is)", rb.Ref, up.Repo, up.Repo)
	}
	upFiles, err := o.Store.FilesAt(up.Repo, rb.Commit, up.Package)
	if err != nil {
		return nil, fmt.Errorf("the upstream at its recorded commit: %w", err)
	}
	mem := memory.New()
	deployment := false
	for _, r := range o.Store.Repositories() {
		if r.Name == down.Repo {
			deployment = r.Deployment
		}
	}
	mem.SetDeployment(o.Namespace, down.Repo, deployment)
	u := *upRev
	u.Commit, u.Owners, u.Annotations, u.Labels = rb.Commit, nil, nil, nil
	mem.Restore(u, upFiles)
	mem.SetDeployment(o.Namespace, up.Repo, false)
	mem.SetOrigin(func(r store.Revision) (string, string, string) {
		if r.Name == u.Name {
			return rb.URL, rb.Ref, rb.Commit
		}
		return "", "", ""
	})
	if o.Render != nil {
		r := &Render{Runtime: held, AllowExec: o.Render.AllowExec, Timeout: o.Render.Timeout}
		mem.SetRenderer(r.renderer(ctx))
	}
	return mem, nil
}

// heldRuntime is a rebuild's runtime: it runs only the functions the
// revision's own Kptfiles name (render.Functions: the upstream's pipeline
// and the functions the variant's spec prepended, as the package holds
// them) and those the variant's spec names now, whatever the record says;
// another is refused and remembered, so a forged record cannot choose
// which functions a rebuild runs.
type heldRuntime struct {
	runtime render.Runtime
	allowed map[string]bool

	mu      sync.Mutex
	refused []string
}

// heldTo is the held runtime of r's runtime for a revision of files and
// the variant live has now (nil: none; nil r: nothing renders).
func heldTo(r *Render, files map[string]string, live *pvapi.PackageVariant) *heldRuntime {
	h := &heldRuntime{allowed: map[string]bool{}}
	if r != nil {
		h.runtime = r.Runtime
	}
	fns := render.Functions(files)
	if live != nil && live.Spec.Pipeline != nil {
		fns = append(fns, live.Spec.Pipeline.Mutators...)
		fns = append(fns, live.Spec.Pipeline.Validators...)
	}
	for _, f := range fns {
		f.Image = render.ResolveImage(f.Image)
		h.allowed[functionName(f)] = true
	}
	return h
}

// functionName names a function by its image, or its exec path.
func functionName(f render.Function) string {
	if f.Exec != "" {
		return "exec " + f.Exec
	}
	return f.Image
}

// Runner implements render.Runtime.
func (h *heldRuntime) Runner(ctx context.Context, f render.Function) (render.Runner, error) {
	name := functionName(f)
	if !h.allowed[name] {
		h.mu.Lock()
		if !slices.Contains(h.refused, name) {
			h.refused = append(h.refused, name)
		}
		h.mu.Unlock()
		return nil, fmt.Errorf("%s: a rebuild runs only the functions the revision's own Kptfiles name", name)
	}
	if h.runtime == nil {
		return nil, fmt.Errorf("%s: no runtime", name)
	}
	return h.runtime.Runner(ctx, f)
}

// Refused are the functions a rebuild asked for and was refused, sorted.
func (h *heldRuntime) Refused() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.refused)
	sort.Strings(out)
	return out
}

// rebuildDraft runs the reconcilers on the recorded variant and the
// injected objects until they settle, and names the draft they wrote.
func rebuildDraft(ctx context.Context, o RebuildOptions, mem *memory.Store, rb *provenance.Rebuild, injected []map[string]any) (string, error) {
	scheme, err := Scheme()
	if err != nil {
		return "", err
	}
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: rb.Variant.Name, Namespace: o.Namespace, UID: types.UID(rb.Variant.UID)}, Spec: *rb.Parameters}
	objs := []client.Object{v}
	var kinds []string
	for _, m := range injected {
		u := &unstructured.Unstructured{Object: m}
		u.SetNamespace(o.Namespace)
		objs = append(objs, u)
		k := u.GetKind()
		if g := u.GroupVersionKind().Group; g != "" {
			k += "." + g
		}
		kinds = append(kinds, k)
	}
	readable, err := kit.ParseReadableKinds(append(append([]string(nil), kit.DefaultReadableKinds...), kinds...))
	if err != nil {
		return "", err
	}
	pr := newPruner(PruneNone)
	w := &world{pr: pr}
	w.j = &journal{Store: mem, pruner: pr}
	w.c = newCluster(scheme, pr, w.j.note, objs...)
	w.events = newEventLog(scheme, nil, nil)
	builder := rb.Builder
	if builder == "" {
		builder = "pvctl"
	}
	w.pv, w.pvs = reconcilers.New(reconcilers.Options{Client: w.c, Store: w.j, Recorder: w.events, Kinds: readable,
		Provenance: stamp.Provenance{Builder: builder}})
	rep, errs, err := w.loop(ctx, RunOptions{Namespace: o.Namespace, MaxPasses: defaultMaxPasses})
	if err != nil {
		return "", err
	}
	var drafts []string
	for _, r := range mem.All(o.Namespace) {
		if r.Repository == rb.Parameters.Downstream.Repo && r.Package == rb.Parameters.Downstream.Package && !r.Lifecycle.IsPublished() {
			drafts = append(drafts, r.Name)
		}
	}
	sort.Strings(drafts)
	if len(drafts) != 1 {
		why := rep.Unsettled
		for _, e := range errs {
			why = e.Error()
		}
		return "", fmt.Errorf("the rebuild wrote %d drafts of %s/%s, not one%s", len(drafts), rb.Parameters.Downstream.Repo, rb.Parameters.Downstream.Package, because(why, w, o.Namespace, rb.Variant.Name))
	}
	return drafts[0], nil
}

// because says why a rebuild made no draft: the reconcile's error, else
// the variant's conditions.
func because(err string, w *world, namespace, name string) string {
	if err != "" {
		return ": " + err
	}
	var v pvapi.PackageVariant
	if w.c.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, &v) != nil {
		return ""
	}
	var msgs []string
	for _, c := range v.Status.Conditions {
		msgs = append(msgs, fmt.Sprintf("%s %s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	if len(msgs) == 0 {
		return ""
	}
	return ": the variant's conditions: " + strings.Join(msgs, "; ")
}

func shortCommit(c string) string {
	if len(c) > 12 {
		return c[:12]
	}
	return c
}
