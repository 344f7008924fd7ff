package local

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SyncedFromAnnotation is on every object pvctl run --sync applied from a
// published package: the repository, the package and its revision
// (REPO/PACKAGE@vN), as ConfigSync marks what it applied.
const SyncedFromAnnotation = "pvkit.dev/synced-from"

// syncer (rule: sync-like-configsync) plays ConfigSync for the --sync
// repositories: the objects of
// their published packages (the latest published revision of each; local
// config and Kptfiles left out) are applied to the embedded cluster, so
// that the PackageVariants and PackageVariantSets a package nests are
// reconciled in the same run. An object the files give wins over a synced
// one (a warning says so); a synced object no published package holds any
// longer is removed, with --prune.
type syncer struct {
	repos     []string
	namespace string
	gs        *gitstore.Store
	c         client.Client
	scheme    *runtime.Scheme
	j         *journal
	kinds     kit.ReadableKinds    // what the reconcilers may read: synced kinds are added
	events    record.EventRecorder // a refused object's Warning Event
	reposDir  string               // where a synced Repository's git directory is
	pr        *pruner
	given     map[string]bool                    // keys of the objects the files give
	allowMass bool                               // --prune=all: no mass-deletion guard
	known     map[string]schema.GroupVersionKind // keys of the synced objects in the cluster
	warned    map[string]bool
	warnings  []string
	parsed    map[string][]*unstructured.Unstructured // objectsOf, by revision and version
	pending   map[string]string                       // this pass's objects by key: their source
	// maxCreates bounds the objects one run creates (RunOptions.MaxSyncCreates).
	maxCreates, creates int
}

// newSyncer is the syncer of a run. It keeps (updates, and removes with
// --prune) only the objects synced from the repositories it syncs: an
// object synced from a repository this run does not name stays as it is,
// as every synced object does in a run without --sync.
func newSyncer(repos []string, namespace string, gs *gitstore.Store, c client.Client, scheme *runtime.Scheme, j *journal, pr *pruner,
	given map[string]bool, st *state.State, allowMass bool) *syncer {
	s := &syncer{repos: repos, namespace: namespace, gs: gs, c: c, scheme: scheme, j: j, pr: pr, given: given, allowMass: allowMass,
		known: map[string]schema.GroupVersionKind{}, warned: map[string]bool{}, parsed: map[string][]*unstructured.Unstructured{}}
	for _, v := range st.Variants {
		if s.owns(v.Annotations) {
			s.known[objKey(pvapi.GroupVersion.String(), "PackageVariant", v.Name)] = pvapi.GroupVersion.WithKind("PackageVariant")
		}
	}
	for _, v := range st.Sets {
		if s.owns(v.Annotations) {
			s.known[objKey(pvsapi.GroupVersion.String(), "PackageVariantSet", v.Name)] = pvsapi.GroupVersion.WithKind("PackageVariantSet")
		}
	}
	for _, o := range st.Objects {
		u := &unstructured.Unstructured{Object: o}
		if s.owns(u.GetAnnotations()) {
			s.known[state.ObjectKey(o)] = u.GroupVersionKind()
		}
	}
	return s
}

// owns reports whether an object was synced from one of the syncer's
// repositories (its annotation is REPO/PACKAGE@vN).
func (s *syncer) owns(annotations map[string]string) bool { return syncedFrom(annotations, s.repos) }

// syncedFrom reports whether an object was synced from one of repos.
func syncedFrom(annotations map[string]string, repos []string) bool {
	repo, _, ok := strings.Cut(annotations[SyncedFromAnnotation], "/")
	return ok && slices.Contains(repos, repo)
}

// checkSyncRepos refuses a --sync that names no repository of the run (a
// typo would otherwise make every object synced before look unpublished).
func checkSyncRepos(sync []string, repos []gitstore.Repository) error {
	names := make([]string, 0, len(repos))
	for _, r := range repos {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	var msgs []string
	for _, want := range sync {
		if !slices.Contains(names, want) {
			msgs = append(msgs, fmt.Sprintf("--sync %q: no repository of that name (the run's repositories: %s)", want, strings.Join(names, ", ")))
		}
	}
	if msgs != nil {
		return &inputError{msgs}
	}
	return nil
}

func objKey(apiVersion, kind, name string) string { return apiVersion + " " + kind + " " + name }

// isSynced reports whether an object was applied by --sync.
func isSynced(annotations map[string]string) bool { return annotations[SyncedFromAnnotation] != "" }

func (s *syncer) warn(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if !s.warned[msg] {
		s.warned[msg] = true
		s.warnings = append(s.warnings, msg)
	}
}

// sync applies the published packages once; the caller's pass counts its
// writes.
func (s *syncer) sync(ctx context.Context) error {
	if len(s.repos) == 0 {
		return nil
	}
	desired, err := s.desired()
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(desired))
	s.pending = map[string]string{}
	for k, u := range desired {
		keys = append(keys, k)
		s.pending[k] = u.GetAnnotations()[SyncedFromAnnotation]
	}
	sort.Strings(keys)
	for _, k := range keys {
		applied, err := s.apply(ctx, desired[k])
		if err != nil {
			return err
		}
		gvk := desired[k].GroupVersionKind()
		s.known[k] = gvk
		if applied && gvk == porchconfig.GroupVersion.WithKind("Repository") { // only what is in the cluster is served
			if err := s.register(desired[k]); err != nil {
				return err
			}
		}
		// A kind that arrives by sync is readable as one in -f is (the
		// user's own material; a Secret stays opt-in); pvkit's and Porch's
		// own kinds are not injection material.
		if gvk.Group != pvapi.GroupVersion.Group {
			s.kinds.Allow(gvk.GroupKind())
		}
	}
	var gone []string
	for k := range s.known {
		if _, ok := desired[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	if massDeletion(len(gone), len(s.known), pruneFor(s.allowMass)) {
		// The mass-deletion guard, as for a set's children: more than half
		// of what the --sync repositories synced would go (packages
		// deleted or emptied by mistake). Nothing is removed, even with
		// --prune; --prune=all removes them.
		s.warn("--sync: %d of the %d objects synced from %s are in no published package any longer (more than half): none was removed; check the repositories' published packages, or run with --prune=all",
			len(gone), len(s.known), strings.Join(s.repos, ", "))
		for _, k := range gone {
			_, name := splitKey(k)
			s.pr.guard("%s %s (no synced package holds it; the mass-deletion guard holds it: --prune=all)", s.known[k].Kind, name)
		}
		return nil
	}
	for _, k := range gone {
		if err := s.remove(ctx, k, s.known[k]); err != nil {
			return err
		}
	}
	return nil
}

// pruneFor is the Prune the mass-deletion guard compares with.
func pruneFor(allowMass bool) Prune {
	if allowMass {
		return PruneAll
	}
	return PruneSafe
}

// desired are the objects of the --sync repositories' published packages,
// by key.
func (s *syncer) desired() (map[string]*unstructured.Unstructured, error) {
	out := map[string]*unstructured.Unstructured{}
	for _, repo := range s.repos {
		latest := map[string]store.Revision{}
		for _, r := range s.gs.All(s.namespace) {
			if r.Repository != repo || r.Lifecycle != store.Published || r.Revision < 1 {
				continue
			}
			if cur, ok := latest[r.Package]; !ok || r.Revision > cur.Revision {
				latest[r.Package] = r
			}
		}
		pkgs := make([]string, 0, len(latest))
		for p := range latest {
			pkgs = append(pkgs, p)
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			objs, err := s.objectsOf(repo, latest[p])
			if err != nil {
				return nil, err
			}
			for _, u := range objs {
				u = u.DeepCopy()
				k, source := state.ObjectKey(u.Object), u.GetAnnotations()[SyncedFromAnnotation]
				switch {
				case s.given[k]:
					s.warn("--sync: %s %s of %s is not applied: the files give an object of that name", u.GetKind(), u.GetName(), source)
				case out[k] != nil:
					s.warn("--sync: %s %s of %s is not applied: %s holds one of that name", u.GetKind(), u.GetName(), source, out[k].GetAnnotations()[SyncedFromAnnotation])
				default:
					out[k] = u
				}
			}
		}
	}
	return out, nil
}

// apply creates or updates one synced object: PackageVariants and sets as
// their types (so that the cluster moves their generation), the rest as
// they are; applied: the cluster holds it as synced afterwards.
func (s *syncer) apply(ctx context.Context, u *unstructured.Unstructured) (applied bool, err error) {
	if err := s.owners(ctx, u); err != nil {
		return false, err
	}
	obj, err := s.typed(u)
	if err != nil { // refused alone: one object never stops the sync
		s.refuse(u, fmt.Sprintf("%s: %s %q: %v", u.GetAnnotations()[SyncedFromAnnotation], u.GetKind(), u.GetName(), err))
		return false, nil
	}
	cur := obj.DeepCopyObject().(client.Object)
	err = s.c.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	if apierrors.IsNotFound(err) {
		if s.creates >= s.maxCreates {
			s.warn("--sync: this run created %d objects, its bound: the rest wait for the next run", s.maxCreates)
			return false, nil
		}
		s.creates++
		if err := s.c.Create(ctx, obj); apierrors.IsInvalid(err) {
			// Refused as the API server would refuse it (the CRD's schema):
			// this object alone, as ConfigSync does.
			s.warn("--sync: %s: %s %s is not applied: %v", u.GetAnnotations()[SyncedFromAnnotation], u.GetKind(), u.GetName(), err)
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("--sync: creating %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if u.GetKind() != "PackageVariant" { // the cluster notes those
			s.j.note("synced %s %s from %s", u.GetKind(), u.GetName(), u.GetAnnotations()[SyncedFromAnnotation])
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if !isSynced(cur.GetAnnotations()) {
		s.warn("--sync: %s %s of %s is not applied: an object of that name is in the cluster, not synced", u.GetKind(), u.GetName(), u.GetAnnotations()[SyncedFromAnnotation])
		return false, nil
	}
	if sameContent(cur, obj) {
		return true, nil
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	obj.SetUID(cur.GetUID())
	obj.SetGeneration(cur.GetGeneration())
	obj.SetFinalizers(cur.GetFinalizers())
	copyStatus(cur, obj)
	if err := s.c.Update(ctx, obj); apierrors.IsInvalid(err) {
		s.warn("--sync: %s: %s %s is not applied: %v", u.GetAnnotations()[SyncedFromAnnotation], u.GetKind(), u.GetName(), err)
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("--sync: updating %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	s.j.note("synced %s %s from %s", u.GetKind(), u.GetName(), u.GetAnnotations()[SyncedFromAnnotation])
	return true, nil
}

// remove deletes a synced object no published package holds any longer
// (with --prune; held back otherwise, as every removal is).
func (s *syncer) remove(ctx context.Context, k string, gvk schema.GroupVersionKind) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	_, name := splitKey(k)
	u.SetNamespace(s.namespace)
	u.SetName(name)
	obj, err := s.typed(u)
	if err != nil {
		return err
	}
	kind := gvk.Kind
	if kind != "PackageVariant" && kind != "PackageVariantSet" { // the cluster holds those itself
		if err := s.pr.hold("%s %s (no synced package holds it)", kind, name); err != nil {
			return nil
		}
	}
	err = s.c.Delete(ctx, obj)
	switch {
	case apierrors.IsNotFound(err):
	case errors.Is(err, errHeld):
		return nil
	case err != nil:
		return fmt.Errorf("--sync: removing %s %s: %w", kind, name, err)
	default:
		if kind != "PackageVariant" && kind != "PackageVariantSet" {
			s.j.note("removed synced %s %s (no published package holds it)", kind, name)
		}
	}
	delete(s.known, k)
	return nil
}

func splitKey(k string) (string, string) {
	for i := len(k) - 1; i >= 0; i-- {
		if k[i] == ' ' {
			return k[:i], k[i+1:]
		}
	}
	return "", k
}

// typed is u as the scheme's type when it has one.
func (s *syncer) typed(u *unstructured.Unstructured) (client.Object, error) {
	gvk := u.GroupVersionKind()
	if !s.scheme.Recognizes(gvk) {
		return u, nil
	}
	o, err := s.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
		return nil, err
	}
	o.GetObjectKind().SetGroupVersionKind(gvk)
	return o.(client.Object), nil
}

// sameContent compares what a sync sets: labels, annotations, owner
// references and the rest of the object but metadata and status.
func sameContent(cur, want client.Object) bool {
	a, errA := runtime.DefaultUnstructuredConverter.ToUnstructured(cur.DeepCopyObject())
	b, errB := runtime.DefaultUnstructuredConverter.ToUnstructured(want.DeepCopyObject())
	if errA != nil || errB != nil {
		return false
	}
	if !equality.Semantic.DeepEqual(cur.GetLabels(), want.GetLabels()) || !equality.Semantic.DeepEqual(cur.GetAnnotations(), want.GetAnnotations()) ||
		!equality.Semantic.DeepEqual(cur.GetOwnerReferences(), want.GetOwnerReferences()) {
		return false
	}
	for _, m := range []map[string]any{a, b} {
		delete(m, "metadata")
		delete(m, "status")
		delete(m, "apiVersion")
		delete(m, "kind")
	}
	return equality.Semantic.DeepEqual(a, b)
}

// copyStatus keeps a typed object's status across a sync's update.
func copyStatus(from, to client.Object) {
	switch t := to.(type) {
	case *pvapi.PackageVariant:
		t.Status = from.(*pvapi.PackageVariant).Status
	case *pvsapi.PackageVariantSet:
		t.Status = from.(*pvsapi.PackageVariantSet).Status
	}
}

// objects are the synced objects other than variants and sets, as the
// state file keeps them.
func (s *syncer) objects(ctx context.Context) ([]map[string]any, error) {
	var out []map[string]any
	keys := make([]string, 0, len(s.known))
	for k := range s.known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		gvk := s.known[k]
		if gvk.Kind == "PackageVariant" || gvk.Kind == "PackageVariantSet" {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		_, name := splitKey(k)
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, u); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		out = append(out, u.Object)
	}
	return out, nil
}
