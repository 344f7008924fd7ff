package local

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"maps"
	"os"
	"sort"
	"sync"
	"time"

	apirender "github.com/pvkit/pvkit/orchestrator/api/render"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/memory"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
	"github.com/pvkit/pvkit/pkg/render"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Progress hears of a run's repository changes as they happen (pvctl
// shows a live line, so that a killed run shows what it did).
type Progress interface {
	Change(line string)
	Done()
}

// RunOptions configure a run.
type RunOptions struct {
	// Repos is the directory of bare repositories (pvctl publish creates
	// them; so does a Repository object in the files).
	Repos string
	// realRepos, for a plan, is the repositories directory Repos is a
	// scratch copy of: below a directory of -f, it is not read either.
	realRepos string
	// Files are YAML files or directories: PackageVariants,
	// PackageVariantSets, Repositories, and the objects injected or
	// selected (ConfigMaps, custom resources).
	Files []string
	// Namespace is the namespace of the embedded cluster.
	Namespace string
	// State is the state file (default: Repos/state.File).
	State string
	// Clock stamps condition transitions (the real clock by default).
	Clock kit.Clock
	// MaxPasses bounds the reconcile passes (default 10).
	MaxPasses int
	// Prune says what the run may remove (default: nothing).
	Prune Prune
	// DryRun runs on a scratch copy and reports what the run would do,
	// writing nothing (not a git object, not the state file).
	DryRun bool
	// Diff, with DryRun, adds the unified diff of each revision.
	Diff bool
	// Stdin is what "-" in Files reads.
	Stdin []byte
	// Progress hears of the changes as they happen (nil: no one).
	Progress Progress
	// MaxChildren bounds the children of one set (0: the default).
	MaxChildren int
	// ReadableKinds adds kinds to those the run may inject and select
	// (the defaults and the kinds of the objects in Files).
	ReadableKinds []string
	// Render renders every draft the run creates or writes, as Porch does
	// (nil: no render, pvctl --no-render).
	Render *Render
	// Sync names the repositories whose published packages the run applies
	// to the embedded cluster, as ConfigSync would (sync.go): the
	// PackageVariants and sets they nest are reconciled in the same run.
	Sync []string
	// MaxSyncCreates bounds the objects --sync may create in one run (0:
	// DefaultMaxSyncCreates); past it the rest wait for the next run.
	MaxSyncCreates int
	// Provenance signs the provenance record of each draft the run writes
	// and checks records for pvkit.dev/require-provenance (pvctl run
	// --provenance-key, --provenance-allowed-signers); its Builder is
	// pvctl's.
	Provenance stamp.Provenance
	// Clusters are the kubeconfig contexts of other clusters a health
	// check names (pvctl run --cluster NAME=CONTEXT); Kubeconfig the file
	// they are in ("": kubectl's rules).
	Clusters   map[string]string
	Kubeconfig string
}

// DefaultMaxSyncCreates is how many objects --sync creates in one run at
// most: a package whose pipeline makes its nested variants clone it again
// would otherwise double the fleet every pass.
const DefaultMaxSyncCreates = 1000

// Render is how a run renders drafts: the runtime of their pipelines'
// functions, whether `exec` functions may run, and one deadline for each
// render over all its functions.
type Render struct {
	Runtime   render.Runtime
	AllowExec bool
	// Timeout bounds one render (0: DefaultRenderTimeout).
	Timeout time.Duration
	// KptStatus renders as kpt v1.0's in-place render (render.Options):
	// pvctl render only. A variant's draft never carries kpt v1.0's
	// render status: Porch v1.5.3 decodes the Kptfile strictly, with no
	// `status.renderStatus`, and renders every draft itself.
	KptStatus bool

	mu     sync.Mutex
	failed map[[sha256.Size]byte]store.RenderStatus // this run's failed renders, by input
}

// DefaultRenderTimeout bounds one render, all its functions together (a
// function alone has 5 minutes, kpt's bound; a render of many had none).
const DefaultRenderTimeout = 2 * time.Minute

// renderer is the git store's renderer: a failed render is the status
// with its error, and the store refuses the write (store.ErrRenderFailed).
// An input that failed is not rendered again in the same run: the status
// of its first render is its answer (a clone's precheck and its create
// render the same files; a function stuck until the deadline held each
// variant twice as long).
func (r *Render) renderer(ctx context.Context) memory.Renderer {
	return func(files map[string]string) (map[string]string, store.RenderStatus) {
		key := FilesKey(files)
		r.mu.Lock()
		st, failedBefore := r.failed[key]
		r.mu.Unlock()
		if failedBefore {
			return nil, st
		}
		out, rst, _ := r.Render(ctx, files) // a failure: no files, st.Err
		st = apirender.FromStatus(rst)
		if out == nil && ctx.Err() == nil { // a run stopped is no verdict on the input
			r.mu.Lock()
			if r.failed == nil {
				r.failed = map[[sha256.Size]byte]store.RenderStatus{}
			}
			r.failed[key] = st
			r.mu.Unlock()
		}
		return out, st
	}
}

// FilesKey identifies a package's files (names and bytes).
func FilesKey(files map[string]string) [sha256.Size]byte {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%d:%s%d:", len(n), n, len(files[n]))
		h.Write([]byte(files[n]))
	}
	var k [sha256.Size]byte
	copy(k[:], h.Sum(nil))
	return k
}

const defaultMaxPasses = 10

// Run reconciles the files' PackageVariants and PackageVariantSets against
// the local repositories, with the controllers' own reconcilers, until
// nothing changes, and saves the embedded cluster. Input errors (an
// *inputError) come before anything is written.
func Run(ctx context.Context, o RunOptions) (*Report, error) {
	o.defaults()
	if o.DryRun {
		// Input errors first, from the real files, before any copying.
		if _, err := readInput(o.Files, o.Namespace, o.Stdin, o.Repos, o.realRepos); err != nil {
			return nil, err
		}
		return dryRun(ctx, o)
	}
	l, err := load(o)
	if err != nil {
		return nil, err
	}
	_, statErr := os.Stat(o.Repos)
	fresh := os.IsNotExist(statErr) // before the lock makes it
	if fresh {
		// A Repository that must be there already (a blueprints one) is
		// refused before the lock makes the directory: nothing is created.
		if _, _, err := repositories(o.Repos, o.Namespace, &input{repositories: l.in.repositories, files: l.in.files}, nil); err != nil {
			return nil, err
		}
	}
	release, err := Lock(o.Repos, "run")
	if err != nil {
		return nil, err
	}
	defer release()
	quietControllerRuntime()
	w, err := open(ctx, o, l, fresh)
	if err != nil {
		return nil, err
	}
	if o.Progress != nil {
		defer o.Progress.Done()
	}
	rep, errs, err := w.loop(ctx, o)
	if err != nil {
		return nil, err
	}
	// A run that stopped (its deadline) still records what it did.
	return w.save(context.WithoutCancel(ctx), o, rep, errs)
}

// objectMaps are the objects' contents, for the state file.
func objectMaps(objs []client.Object) []map[string]any {
	out := make([]map[string]any, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*unstructured.Unstructured).Object)
	}
	return out
}

// retried reports an error the controller would retry; a stalling
// (terminal) one is already in the object's conditions.
func retried(err error) bool { return err != nil && !errors.Is(err, reconcile.TerminalError(nil)) }

func request(namespace, name string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// massDeletion is the rule of a set's mass-deletion guard applied to the
// variants that leave the files: more than one, and more than half of those
// the last run knew, go only with --prune=all.
func massDeletion(removals, known int, p Prune) bool {
	return removals > 1 && 2*removals > known && p != PruneAll
}

// clusterObjects builds the embedded cluster: the files' objects, carrying
// over from the state each variant's and set's UID, generation (moved on
// when the spec changed), finalizers and status; the state's children of
// sets still given; and, to delete, the state's variants the files no
// longer give (with the children of sets no longer given).
func clusterObjects(in *input, st *state.State) (objs, deleted []client.Object) {
	oldV := map[string]*pvapi.PackageVariant{}
	for i := range st.Variants {
		oldV[st.Variants[i].Name] = &st.Variants[i]
	}
	oldS := map[string]*pvsapi.PackageVariantSet{}
	for i := range st.Sets {
		oldS[st.Sets[i].Name] = &st.Sets[i]
	}
	given := map[string]bool{}
	sets := map[types.UID]bool{}
	for _, s := range in.sets {
		s.UID, s.Generation = UID("PackageVariantSet", s.Namespace, s.Name), 1
		if old, ok := oldS[s.Name]; ok {
			s.UID, s.Generation, s.Status, s.Finalizers = old.UID, old.Generation, old.Status, old.Finalizers
			if !equality.Semantic.DeepEqual(old.Spec, s.Spec) {
				s.Generation++
			}
		}
		sets[s.UID] = true
		objs = append(objs, s)
	}
	for i := range st.Sets { // a synced set stays for the --sync repositories to keep or remove
		if old := &st.Sets[i]; isSynced(old.Annotations) && !givenSet(in, old.Name) {
			objs = append(objs, old)
		}
	}
	for _, v := range in.variants {
		given[v.Name] = true
		v.UID, v.Generation = UID("PackageVariant", v.Namespace, v.Name), 1
		if old, ok := oldV[v.Name]; ok {
			v.UID, v.Generation, v.Finalizers, v.Status, v.DeletionTimestamp = old.UID, old.Generation, old.Finalizers, old.Status, old.DeletionTimestamp
			if !equality.Semantic.DeepEqual(old.Spec, v.Spec) {
				v.Generation++
			}
		}
		objs = append(objs, v)
	}
	for i := range st.Variants {
		v := &st.Variants[i]
		if given[v.Name] {
			continue
		}
		objs = append(objs, v)
		if isSynced(v.Annotations) { // the --sync repositories' to keep or remove
			continue
		}
		if owner := metav1.GetControllerOf(v); owner == nil || !sets[owner.UID] {
			deleted = append(deleted, v)
		}
	}
	applyControls(objs, in, st.Controls)
	for _, r := range in.repositories {
		objs = append(objs, r)
	}
	objs = append(objs, in.others...)
	return objs, deleted
}

// applyControls gives the sets and variants the annotations pvctl's
// control verbs recorded (state.Controls: pvctl suspend, pvctl rollout),
// as a cluster's objects carry them, so that the reconcilers (the
// controller's) see a control as in a cluster; and takes a control's key
// from the others. A key an object's own file sets wins: pvctl changes
// only keys its file does not set. A synced object's own suspension is
// its repository's to set.
func applyControls(objs []client.Object, in *input, controls map[string]map[string]string) {
	for _, o := range objs {
		kind, keys := controlKind(o)
		if kind == "" {
			continue
		}
		file := fileAnnotations(in, kind, o.GetName())
		a := o.GetAnnotations()
		for _, k := range keys {
			if _, set := file[k]; set {
				continue
			}
			if v, ok := controls[state.ControlKey(kind, o.GetName())][k]; ok {
				if a == nil {
					a = map[string]string{}
				}
				a[k] = v
			} else if k != kit.SuspendAnnotation || !isSynced(a) {
				delete(a, k)
			}
		}
		o.SetAnnotations(a)
	}
}

// controlKind is the kind of a set or variant ("" for anything else) and
// the annotations pvctl's controls may lay on it.
func controlKind(o client.Object) (string, []string) {
	switch o.(type) {
	case *pvapi.PackageVariant:
		return "PackageVariant", []string{kit.SuspendAnnotation}
	case *pvsapi.PackageVariantSet:
		return "PackageVariantSet", append([]string{kit.SuspendAnnotation}, RolloutControlKeys...)
	}
	return "", nil
}

// fileAnnotations are the annotations the files give a set or variant
// (nil when no file gives it), as the files give them: the first call
// takes them all, before applyControls lays pvctl's on the same objects.
func fileAnnotations(in *input, kind, name string) map[string]string {
	if in.annotations == nil {
		in.annotations = map[string]map[string]string{}
		for _, v := range in.variants {
			in.annotations[state.ControlKey("PackageVariant", v.Name)] = maps.Clone(v.Annotations)
		}
		for _, s := range in.sets {
			in.annotations[state.ControlKey("PackageVariantSet", s.Name)] = maps.Clone(s.Annotations)
		}
	}
	return in.annotations[state.ControlKey(kind, name)]
}

// withoutControls is what a run saves of a set's or variant's annotations
// (o as the run leaves it): without the controls it laid (those its file
// does not set), and the controls still there (for the objects still
// there: nil when none).
func withoutControls(in *input, o client.Object, controls map[string]map[string]string) (map[string]string, map[string]string) {
	kind, _ := controlKind(o)
	c := controls[state.ControlKey(kind, o.GetName())]
	if len(c) == 0 {
		return o.GetAnnotations(), nil
	}
	file := fileAnnotations(in, kind, o.GetName())
	a := maps.Clone(o.GetAnnotations())
	for k := range c {
		if _, set := file[k]; !set {
			delete(a, k)
		}
	}
	return a, c
}

// RolloutControlKeys are the annotations pvctl rollout records locally.
var RolloutControlKeys = []string{packagevariantset.RolloutPauseAnnotation, packagevariantset.RolloutHoldAnnotation, packagevariantset.RolloutSkipAnnotation, packagevariantset.RolloutUndoAnnotation, packagevariantset.RolloutApproveAnnotation, packagevariantset.RolloutRetryAnnotation}

func givenSet(in *input, name string) bool {
	for _, s := range in.sets {
		if s.Name == name {
			return true
		}
	}
	return false
}

// givenKeys are the keys (state.ObjectKey) of every object the files give.
func givenKeys(in *input) map[string]bool {
	out := map[string]bool{}
	for _, v := range in.variants {
		out[objKey(pvapi.GroupVersion.String(), "PackageVariant", v.Name)] = true
	}
	for _, s := range in.sets {
		out[objKey(pvsapi.GroupVersion.String(), "PackageVariantSet", s.Name)] = true
	}
	for _, o := range in.others {
		out[state.ObjectKey(o.(*unstructured.Unstructured).Object)] = true
	}
	return out
}

// IsInputError reports whether err is a problem with the input files
// (nothing was written).
func IsInputError(err error) bool {
	var ie *inputError
	return errors.As(err, &ie)
}

// CloneRenders renders what a clone of a package would hold (store/tasks'
// clone into a deployment repository: the package context Porch generates,
// the merge keys), as Porch renders every clone: pvctl publish's check that
// a blueprint will render for its variants. The render's status, and an
// error when it fails.
func CloneRenders(ctx context.Context, r *Render, pkg string, files map[string]string) (*render.Status, error) {
	clone, err := tasks.Clone(files, &store.Lock{Repository: "blueprint", Package: pkg, Ref: pkg + "/v1"}, pkg, true)
	if err != nil {
		return &render.Status{}, err
	}
	_, st, err := r.Render(ctx, clone)
	return st, err
}

// Render renders a package once, within one deadline for all its
// functions (Timeout; DefaultRenderTimeout when unset): what pvctl run,
// render, publish and push all do.
func (r *Render) Render(ctx context.Context, files map[string]string) (map[string]string, *render.Status, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultRenderTimeout
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return render.Render(rctx, files, render.Options{Runtime: r.Runtime, AllowExec: r.AllowExec, KptStatus: r.KptStatus})
}
