package local

import (
	"context"
	"errors"
	"fmt"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/approve"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"
	"github.com/pvkit/pvkit/pkg/krm"
	"maps"
	"path/filepath"
	"slices"
	"sort"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A run is load (the files and the last run's state, checked: nothing is
// written before), open (the repositories, the embedded cluster and the
// controller's reconcilers on them), loop (reconcile passes until nothing
// changes) and save (the report and the state file).

// defaults fills in what the options leave out.
func (o *RunOptions) defaults() {
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.State == "" {
		o.State = filepath.Join(o.Repos, state.File)
	}
	if o.MaxPasses == 0 {
		o.MaxPasses = defaultMaxPasses
	}
	if o.MaxSyncCreates <= 0 {
		o.MaxSyncCreates = DefaultMaxSyncCreates
	}
}

// loaded is a run's input: the files, the kinds they may read, the last
// run's state, and the objects of the embedded cluster (to create, and to
// delete: the variants the files no longer give).
type loaded struct {
	in            *input
	kinds         kit.ReadableKinds
	st            *state.State
	objs, deleted []client.Object
	// peak is the files' baseline to save (state.FilesPeak).
	peak int
}

// load reads and checks a run's input. A problem is an input error, and
// nothing is written: more than half of the last run's variants leaving
// the files (an -f typo, an empty directory) is one.
func load(o RunOptions) (*loaded, error) {
	in, err := readInput(o.Files, o.Namespace, o.Stdin, o.Repos, o.realRepos)
	if err != nil {
		return nil, err
	}
	kinds, err := in.readableKinds(o.ReadableKinds)
	if err != nil {
		return nil, &inputError{[]string{"--readable-kinds: " + err.Error()}}
	}
	st, err := state.Read(o.State)
	if err != nil {
		return nil, err
	}
	objs, deleted := clusterObjects(in, st)
	peak, err := filesGuard(st, deleted, o.Prune)
	if err != nil {
		return nil, err
	}
	return &loaded{in: in, kinds: kinds, st: st, objs: objs, deleted: deleted, peak: peak}, nil
}

// filesGuard is the mass-deletion guard of a set's children, for the
// variants that leave the files: more than one, and more than half of the
// last run's, or a run that would leave less than half of the most
// variants the fleet had since the guard was last lifted (more than one
// lost: a few at a time, 5 then 2, 1, 1, 1 of 10, deleted all ten before).
// With or without --prune, the run then does nothing (the variants it
// keeps would be reconciled against half a world), naming what would go
// and the drafts that hold someone's edits; --prune=all lifts it and takes
// the fleet it leaves as the new baseline. The fleet is the state's
// PackageVariants but the synced ones (their repositories keep or remove
// them); a set's own removals, which its own guard holds, do not count
// (save lowers the baseline by them). It returns the baseline.
func filesGuard(st *state.State, deleted []client.Object, p Prune) (int, error) {
	fleet := fleetOf(st.Variants)
	if p == PruneAll {
		return fleet - len(deleted), nil
	}
	peak := max(st.FilesPeak, fleet)
	after := fleet - len(deleted)
	loss := peak - after
	once := massDeletion(len(deleted), len(st.Variants), p)
	if len(deleted) == 0 || (!once && !(loss > 1 && 2*loss > peak)) {
		return peak, nil
	}
	removed := make([]string, 0, len(deleted))
	var edited []string
	for _, d := range deleted {
		removed = append(removed, d.GetName())
		if v, ok := d.(*pvapi.PackageVariant); ok {
			for _, t := range v.Status.DownstreamTargets {
				if t.Edited {
					edited = append(edited, fmt.Sprintf("%s (%s's)", t.Name, v.Name))
				}
			}
		}
	}
	sort.Strings(removed)
	sort.Strings(edited)
	what := fmt.Sprintf("the files no longer give %d of the %d PackageVariants of the last run (more than half)", len(deleted), len(st.Variants))
	if !once {
		what = fmt.Sprintf("the run would leave %d of the %d PackageVariants the fleet had since the mass-deletion guard was last lifted (more than half lost)", after, peak)
	}
	msg := fmt.Sprintf("%s; this run would delete %s", what, krm.Listed(removed, 20))
	if len(edited) > 0 {
		msg += "; drafts that hold someone's edits and would go with them: " + krm.Listed(edited, 20)
	}
	return 0, &inputError{[]string{msg + "; nothing was done. Check -f; if that is intended, run with --prune=all"}}
}

// fleetOf counts the variants the files' guard watches: all but the synced
// ones.
func fleetOf(vs []pvapi.PackageVariant) int {
	n := 0
	for i := range vs {
		if !isSynced(vs[i].Annotations) {
			n++
		}
	}
	return n
}

// nextFilesPeak is the files' baseline to save after a run: the one load
// took, less the children sets removed in the run themselves (their own
// guard's business), and at least the fleet the run leaves.
func nextFilesPeak(peak int, before, after []pvapi.PackageVariant, deleted []client.Object) int {
	kept, gone := map[string]bool{}, map[string]bool{}
	for _, v := range after {
		kept[v.Name] = true
	}
	for _, d := range deleted {
		gone[d.GetName()] = true
	}
	for _, v := range before {
		if !kept[v.Name] && !gone[v.Name] && !isSynced(v.Annotations) {
			peak--
		}
	}
	return max(peak, fleetOf(after))
}

// world is an open run: the repositories (through the journal, which
// records every change), the embedded cluster and the controller's
// reconcilers on them, as the manager builds them.
type world struct {
	gs      *gitstore.Store
	j       *journal
	pr      *pruner
	c       *cluster
	sy      *syncer
	events  *eventLog
	pvs     *packagevariantset.Reconciler
	pv      *packagevariant.Reconciler
	cluster []map[string]any // the objects other than sets and variants, for the state
	// registered are the files' Repository objects, for the state: every
	// other verb serves the repositories as this run did (local.Served).
	registered []porchconfig.Repository
	warnings   []string
	// in is what the files give; controls are pvctl's controls
	// (state.Controls), kept for the objects that are still there.
	in       *input
	controls map[string]map[string]string
	// filesPeak is the files' mass-deletion baseline as load took it;
	// before the last run's variants and deleted the ones that left the
	// files (nextFilesPeak).
	filesPeak int
	before    []pvapi.PackageVariant
	deleted   []client.Object
}

// PolicyApprover is who pvctl run's approvals are made by: its approval by
// policy (store.Revision.PublishedBy).
const PolicyApprover = "pvctl run (approval by policy)"

// open opens a run's repositories (creating those the files' Repository
// objects name) and builds the embedded cluster and the reconcilers; fresh:
// the repositories directory did not exist before the run.
func open(ctx context.Context, o RunOptions, l *loaded, fresh bool) (*world, error) {
	w := &world{filesPeak: l.peak, before: l.st.Variants, deleted: l.deleted}
	if fresh {
		// Run from the wrong directory, a run would quietly start a second
		// fleet: say where it is.
		w.warnings = append(w.warnings, fmt.Sprintf("the repositories directory %s did not exist: this run creates it (--repos or $PVCTL_REPOS name another)", o.Repos))
	}
	for _, r := range l.in.repositories { // before repositories adds the unregistered ones
		w.registered = append(w.registered, *r.DeepCopy())
	}
	repos, missing, err := repositories(o.Repos, o.Namespace, l.in, syncedRepositories(l.st))
	if err != nil {
		return nil, err
	}
	if err := checkSyncRepos(o.Sync, append(slices.Clip(repos), missing...)); err != nil {
		return nil, err
	}
	if w.gs, err = gitstore.Open(o.Namespace, repos); err != nil {
		return nil, err
	}
	if o.Provenance.SignCommit != nil { // every commit the run writes, signed
		w.gs.SignCommits(o.Provenance.SignCommit)
	}
	w.gs.SetApprover(PolicyApprover)
	if o.Clock != nil { // one clock: the drafts' creation times too (approval delays)
		w.gs.SetClock(o.Clock.Now)
	}
	if o.Render != nil {
		w.gs.SetRenderer(o.Render.renderer(ctx))
	}
	var created []string
	for _, r := range missing { // deployment repositories only (repositories)
		// Repositories scoped to directories may share one git directory:
		// created once.
		if !gitstore.IsBare(r.GitDir) {
			if err := gitstore.Init(r.GitDir, r.Branch); err != nil {
				return nil, err
			}
		}
		if err := w.gs.Add(r); err != nil {
			return nil, err
		}
		created = append(created, r.Name)
	}
	for _, k := range w.gs.Skipped() {
		w.warnings = append(w.warnings, k.String())
	}
	w.pr = newPruner(o.Prune)
	w.j = &journal{Store: w.gs, pruner: w.pr, progress: o.Progress}
	if err := w.openCluster(ctx, o, l); err != nil {
		return nil, err
	}
	for _, r := range created {
		w.j.note("created repository %s", r)
	}
	return w, nil
}

// openCluster builds the embedded cluster, deletes the variants the files
// no longer give (held without --prune), and the reconcilers.
func (w *world) openCluster(ctx context.Context, o RunOptions, l *loaded) error {
	scheme, err := Scheme()
	if err != nil {
		return err
	}
	objs := w.keptObjects(o, l)
	w.c = newCluster(scheme, w.pr, w.j.note, objs...)
	for _, d := range l.deleted {
		if err := client.IgnoreNotFound(w.c.Delete(ctx, d)); err != nil && !errors.Is(err, errHeld) {
			return err
		}
	}
	w.sy = newSyncer(o.Sync, o.Namespace, w.gs, w.c, scheme, w.j, w.pr, givenKeys(l.in), l.st, o.Prune == PruneAll)
	w.sy.kinds = l.kinds
	w.sy.reposDir = o.Repos
	w.sy.maxCreates = o.MaxSyncCreates
	w.events = newEventLog(scheme, o.Clock, l.st.Events)
	w.in, w.controls = l.in, l.st.Controls
	w.sy.events = w.events
	// The controller's reconcilers, built as the manager builds them.
	// Approval by policy (--approve-by-policy) is always on in pvctl:
	// Nephio's approval controller is not there to do it.
	w.pv, w.pvs = reconcilers.New(reconcilers.Options{Client: w.c, Store: w.j, Clock: o.Clock, Recorder: w.events, Kinds: l.kinds,
		MaxChildren: o.MaxChildren, ApproveByPolicy: true, AllowMassDeletion: o.Prune == PruneAll, Provenance: withBuilder(o.Provenance),
		Clusters: newClusters(l.in.remote, o.Clusters, o.Kubeconfig)})
	return nil
}

// keptObjects are the cluster's objects: the files' and, of the last
// run's other objects, the synced ones and those held for want of
// --prune. The objects the files no longer give stay in the cluster until
// --prune, as variants do: an object left out of -f by mistake must not
// rewrite every draft that injected it. It sets w.cluster, what the state
// keeps of them.
func (w *world) keptObjects(o RunOptions, l *loaded) []client.Object {
	objs := l.objs
	given := map[string]bool{}
	for _, obj := range l.in.others {
		given[state.ObjectKey(obj.(*unstructured.Unstructured).Object)] = true
	}
	w.cluster = append([]map[string]any(nil), objectMaps(l.in.others)...)
	for _, old := range l.st.Objects {
		k := state.ObjectKey(old)
		if given[k] {
			continue
		}
		u := &unstructured.Unstructured{Object: old}
		if isSynced(u.GetAnnotations()) { // the --sync repositories' to keep or remove
			objs = append(objs, u)
			if !syncedFrom(u.GetAnnotations(), o.Sync) { // synced from a repository this run does not sync: kept as it is
				w.cluster = append(w.cluster, old)
			}
			continue
		}
		if err := w.pr.hold("%s %s", u.GetKind(), u.GetName()); err == nil {
			w.j.note("removed %s %s from the embedded cluster (no longer in the files)", u.GetKind(), u.GetName())
			continue
		}
		objs = append(objs, u)
		w.cluster = append(w.cluster, old)
	}
	return objs
}

// loop runs reconcile passes, as the controller's queue would, until a
// pass changes nothing (or the run's deadline, or MaxPasses: Unsettled).
// It returns the last pass's retried errors by object.
func (w *world) loop(ctx context.Context, o RunOptions) (*Report, map[string]error, error) {
	rep := &Report{Warnings: w.warnings}
	errs := map[string]error{}
	// What a person did since the last run (an edit pushed, a draft
	// rejected or approved) is read by each set's child before its set
	// decides on it: a set's wave approval, given on what the
	// last run saw, would publish a target's other members beside the
	// member a person holds back (rule package-groups).
	if err := w.refresh(ctx, o.Namespace); err != nil {
		return nil, nil, err
	}
	for settled := false; !settled; {
		if rep.Passes == o.MaxPasses {
			rep.Unsettled = fmt.Sprintf("the variants did not settle after %d reconcile passes", rep.Passes)
			break
		}
		if err := ctx.Err(); err != nil {
			rep.Unsettled = fmt.Sprintf("stopped after %d reconcile passes: %v", rep.Passes, context.Cause(ctx))
			break
		}
		rep.Passes++
		before := w.c.Writes() + len(w.j.Changes())
		var err error
		if errs, err = w.pass(ctx, o.Namespace); err != nil {
			return nil, nil, err
		}
		settled = w.c.Writes()+len(w.j.Changes()) == before
	}
	return rep, errs, nil
}

// refresh reconciles every set's child once, as the controller's watch on
// Porch's package revisions reconciles the variant whose draft a person
// changed before its set hears of it. A variant no set owns has no set
// deciding on it: the passes reconcile it.
func (w *world) refresh(ctx context.Context, namespace string) error {
	var variants pvapi.PackageVariantList
	if err := w.c.List(ctx, &variants, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, v := range variants.Items {
		if o := metav1.GetControllerOf(&v); o == nil || o.Kind != "PackageVariantSet" {
			continue
		}
		_, _ = w.pv.Reconcile(ctx, request(v.Namespace, v.Name)) // its errors are the passes' to report
	}
	return nil
}

// pass reconciles every set, then every variant, then syncs.
func (w *world) pass(ctx context.Context, namespace string) (map[string]error, error) {
	errs := map[string]error{}
	var sets pvsapi.PackageVariantSetList
	if err := w.c.List(ctx, &sets, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for _, s := range sets.Items {
		if _, err := w.pvs.Reconcile(ctx, request(s.Namespace, s.Name)); retried(err) {
			errs["PackageVariantSet/"+s.Name] = err
		}
	}
	var variants pvapi.PackageVariantList
	if err := w.c.List(ctx, &variants, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for _, v := range variants.Items {
		if _, err := w.pv.Reconcile(ctx, request(v.Namespace, v.Name)); retried(err) {
			errs["PackageVariant/"+v.Name] = err
		}
	}
	if w.sy == nil { // a plan against a cluster syncs nothing
		return errs, nil
	}
	return errs, w.sy.sync(ctx)
}

// save completes the report and writes the state file.
func (w *world) save(ctx context.Context, o RunOptions, rep *Report, errs map[string]error) (*Report, error) {
	rep.Changes = w.j.Changes()
	rep.Held = w.pr.Held()
	rep.Warnings = append(rep.Warnings, w.sy.warnings...)
	rep.Warnings = append(rep.Warnings, w.events.warnings(approve.EventApprovalRefused)...)
	rep.Warnings = append(rep.Warnings, w.events.warnings(packagevariant.EventBlueprintOverrides)...)
	synced, err := w.sy.objects(ctx)
	if err != nil {
		return nil, err
	}
	cluster := append(w.cluster, synced...)
	if err := rep.collect(ctx, w.c, w.gs, o.Namespace, errs); err != nil {
		return nil, err
	}
	for i, obj := range cluster {
		u := (&unstructured.Unstructured{Object: obj}).DeepCopy()
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
			unstructured.RemoveNestedField(u.Object, "metadata", f)
		}
		cluster[i] = u.Object
	}
	// pvctl's controls stay for the objects still there; the annotations
	// they gave are not saved, so that the state's annotations are the
	// files' (pvctl resume tells a file's suspension from its own).
	var controls map[string]map[string]string
	keep := func(o client.Object) {
		a, c := withoutControls(w.in, o, w.controls)
		o.SetAnnotations(a)
		if c != nil {
			if controls == nil {
				controls = map[string]map[string]string{}
			}
			kind, _ := controlKind(o)
			controls[state.ControlKey(kind, o.GetName())] = c
		}
	}
	variants := slices.Clone(rep.Variants)
	for i := range variants {
		variants[i].ObjectMeta = *variants[i].ObjectMeta.DeepCopy()
		keep(&variants[i])
	}
	sets := slices.Clone(rep.Sets)
	for i := range sets {
		sets[i].ObjectMeta = *sets[i].ObjectMeta.DeepCopy()
		keep(&sets[i])
	}
	applied := map[string]map[string]string{} // not nil: a run applied these, even none
	for k, c := range controls {
		applied[k] = maps.Clone(c)
	}
	st := &state.State{Variants: variants, Sets: sets, Objects: cluster, Events: w.events.Of(rep.Variants, rep.Sets), Controls: controls, Applied: applied,
		FilesPeak: nextFilesPeak(w.filesPeak, w.before, variants, w.deleted), Repositories: w.registered}
	if err := st.Write(o.State); err != nil {
		return nil, err
	}
	return rep, nil
}

// withBuilder is the run's provenance with pvctl as its builder.
func withBuilder(p stamp.Provenance) stamp.Provenance {
	p.Builder = "pvctl"
	return p
}
