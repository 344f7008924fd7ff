package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/stamp"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/variant"
	ctrl "sigs.k8s.io/controller-runtime"
)

// mutation is what mutate did to a draft.
type mutation struct {
	target target
	wrote  bool
	in     *inputs // the inputs of the chain run that found the draft as it is
	// asCreated: the draft was as its creation left it (createdAt), so
	// the variant's own as a fresh one is.
	asCreated bool
	// settled, after a write, is the draft's new version when the store
	// answered with the result (UpdateResourcesRendered: Porch's rendered files) and
	// the chain leaves that result unchanged; "" when not known. The memo
	// can then vouch for the draft at that version, and the next reconcile
	// need not read it again.
	settled string
	// conflict: Porch's render of the write undid part of the mutation (the
	// chain, run on the rendered answer, would change it again): a stall
	// (RenderConflict), remembered with the draft's new version so that the
	// variant does not write again for the same inputs.
	conflict error
	// files are the draft's files afterwards, as far as pvkit knows them
	// (Porch's rendered answer when it gave one).
	files map[string]string
}

// work is what a reconcile does to a draft besides running the chain.
type work struct {
	// fresh: the variant created the draft in this reconcile, so its
	// content is the variant's own even when the chain has nothing to add.
	fresh bool
	// prepare maps the draft's files before the chain runs (an upgrade in
	// place, a drift policy's content, an upgrade's dropped files); the
	// result of both is one write. nil: nothing.
	prepare func(map[string]string) (map[string]string, error)
	// origins are the files of the draft, as read, that pvkit did not
	// build (a person's edits, an adoption), which the record pvkit writes
	// names so (provenance.Inputs.Origins). nil: for a draft the variant
	// has, what its record says when it is the variant's
	// (provenance.PersonsFiles: the edits since pvkit last wrote it), else
	// none; for a fresh draft, none (a clone). A draft made from another
	// revision (an edit, an upgrade) holds that revision's record, which
	// does not describe it (the store wrote the mutation gate into its
	// Kptfile, an upgrade merged): its origins are its source's
	// (sourceOrigins).
	origins func(files map[string]string) provenance.Origins
}

// originsOf are the files of a draft that pvkit did not build (work.origins).
// The edits a draft's own files show since its record were made in the
// draft, which nobody has approved yet.
func (r *Reconciler) originsOf(v *pvapi.PackageVariant, d store.Revision, w work, files map[string]string) provenance.Origins {
	switch {
	case w.origins != nil:
		return w.origins(files)
	case w.fresh:
		return nil
	}
	origins, _ := r.personsOrigins(v, files, provenance.Found{Revision: d.Name})
	return origins
}

// sourceOrigins are the origins of a draft made from src (an edit): the
// files of src that pvkit did not build, read when first needed.
func (r *Reconciler) sourceOrigins(ctx context.Context, v *pvapi.PackageVariant, src store.Revision) func(map[string]string) provenance.Origins {
	return func(map[string]string) provenance.Origins {
		res, err := r.porch().GetResources(ctx, v.Namespace, src.Name)
		if err != nil {
			// Unread, the files are taken for pvkit's: said in the log; the
			// draft's own record then shows an edit as a difference.
			ctrl.LoggerFrom(ctx).Info("reading the source of a draft for its origins failed", "revision", src.Name, "error", err.Error())
			return nil
		}
		origins, _ := r.personsOrigins(v, res.Files, found(src))
		return origins
	}
}

// found names a revision for the edits found in it: its name, and who
// approved it where the store knows it.
func found(rev store.Revision) provenance.Found {
	return provenance.Found{Revision: rev.Name, ApprovedBy: rev.PublishedBy}
}

// personsOrigins are the files of a package of the variant that pvkit did
// not build, as its record says (provenance.PersonsOrigins), the edits
// since it found in in; known is false when it has no record of the
// variant's (none, or another's: a clone of a blueprint pvkit made).
func (r *Reconciler) personsOrigins(v *pvapi.PackageVariant, files map[string]string, in provenance.Found) (provenance.Origins, bool) {
	if rec, err := provenance.Read(files); err != nil || rec.Statement.Predicate.BuildDefinition.ExternalParameters.Variant.UID != string(v.UID) {
		return nil, false
	}
	return provenance.PersonsOrigins(files, in)
}

// mutate runs the chain on a draft and writes the result when it changed;
// once the draft is finished (its mutation gate True, no render conflict),
// it gets the annotations that ask for its approval, held back until then
// (approval.Later).
func (r *Reconciler) mutate(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, w work) (mutation, error) {
	m, err := r.mutateFiles(ctx, v, d, w)
	if errors.Is(err, store.ErrNoResources) {
		return m, r.emptyDraft(ctx, v, d, err)
	}
	fresh := w.fresh || m.asCreated
	if err != nil || m.conflict != nil {
		return m, err
	}
	// The digest of the draft as pvkit left it, in the variant's status
	// (DownstreamTarget.LastWrite): approval by policy approves only a
	// draft nobody changed since, and a draft read otherwise is Edited. It
	// moves only with pvkit's own writes: a draft pvkit found changed but
	// had nothing to rewrite in keeps the digest it had (none, if pvkit
	// never wrote it).
	// The status loses nothing (kit.PatchStatus), and records it even when
	// a later step fails (reconcileVariant): nothing else remembers it.
	if m.wrote || fresh {
		m.target.lastWrite = variant.Fingerprint(m.files)
	}
	_, later := approval.Split(v.Spec.Annotations)
	if len(later) == 0 {
		return m, nil
	}
	missing := false
	for k, val := range later {
		missing = missing || d.Annotations[k] != val
	}
	if !missing {
		return m, nil
	}
	d.Annotations, d.ResourceVersion = store.Overlay(d.Annotations, later), ""
	if err := r.porch().Update(ctx, d); err != nil {
		return m, fmt.Errorf("annotating the finished draft %s for approval: %w", d.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("annotated the finished draft for approval", "revision", d.Name)
	m.settled = "" // the update moved the draft on
	return m, nil
}

// mutateFiles runs the chain on a draft and writes the result, with the
// variant's provenance record for it, when it changed; a draft the variant
// just made (fresh) gets the record even when the chain changes nothing.
func (r *Reconciler) mutateFiles(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, w work) (mutation, error) {
	res, asCreated, err := r.readDraft(ctx, v, d, &w)
	if err != nil {
		if w.fresh && d.ResourceVersion != "" {
			return mutation{target: target{name: d.Name, createdAt: d.ResourceVersion}}, err
		}
		return mutation{}, err
	}
	// The draft's digest, taken once (a YAML parse of the whole package:
	// a third of a cold resync when it was taken three times).
	fp := variant.Fingerprint(res.Files)
	// failed: a step before the write failed. A fresh draft keeps its
	// digest as the variant's last write: the next reconcile takes it for
	// the variant's and writes it (unstamped), not for a person's
	// (e2e-porch: an upgrade's upstream unread, "ref file is empty").
	failed := func(err error) (mutation, error) {
		if w.fresh {
			return mutation{target: target{name: d.Name, lastWrite: fp}}, err
		}
		return mutation{}, err
	}
	edited := editedSince(v, d.Name, fp) || !w.fresh && writtenBeforeRead(v, d.Name)
	files := res.Files
	if w.prepare != nil {
		if files, err = w.prepare(res.Files); err != nil {
			return failed(err)
		}
	}
	var origins provenance.Origins // taken when the draft is written: reading the record's digests costs a parse
	out, in, err := r.runChain(ctx, v, files)
	if err != nil {
		return failed(err)
	}
	if w.prepare != nil && !out.Changed {
		out.Files, out.Changed = files, !maps.Equal(files, res.Files) // the preparation itself is the change
	}
	if out.Changed || w.fresh && !stamp.RecordedBy(v, d, out.Files) || stamp.Unstamped(v, d, res.Files, fp) {
		origins = r.originsOf(v, d, w, res.Files) // after the preparation, which may know them
		if out.Files, err = r.Provenance.Stamp(v, d, out.Files, origins); err != nil {
			return failed(err)
		}
		out.Changed = !maps.Equal(res.Files, out.Files)
	}
	if !out.Changed {
		t := target{name: d.Name, checked: true, overridden: out.Overridden, edited: edited, gate: out.OpenGate}
		if v.Target(d.Name).LastLeft(fp) == fp {
			t.lastWrite = fp // (an unconfirmed write, confirmed)
		}
		return mutation{target: t, in: in, files: res.Files, asCreated: asCreated}, nil
	}
	if err := r.intend(ctx, v, d.Name, variant.Fingerprint(out.Files)); err != nil {
		return failed(err)
	}
	update := store.Resources{Files: out.Files, ResourceVersion: res.ResourceVersion, Origin: res.Origin}
	render, after, err := r.porch().UpdateResourcesRendered(ctx, v.Namespace, d.Name, update)
	if errors.Is(err, store.ErrRenderFailed) {
		t := target{name: d.Name, render: &render}
		return mutation{target: t}, &renderFailure{target: t, err: fmt.Errorf("updating %s: %w", d.Name, err)}
	}
	if err != nil {
		t := target{name: d.Name}
		t.lastWrite, t.unconfirmed = writeOutcome(ctx, err)
		if w.fresh && t.lastWrite == "" {
			// The draft as this reconcile created it is the variant's own:
			// its last write, so that the next reconcile writes it again
			// (unstamped) rather than read a person's edit in it (e2e-porch,
			// loaded: an upgrade draft's first write refused, "the server
			// is currently unable to handle the request").
			t.lastWrite = fp
		}
		return mutation{target: t}, fmt.Errorf("updating %s: %w", d.Name, err)
	}
	m := mutation{target: target{name: d.Name, render: &render, checked: true, overridden: out.Overridden, edited: edited, gate: out.OpenGate}, wrote: true, files: out.Files, asCreated: asCreated}
	if after.ResourceVersion != "" {
		return r.checkWrite(ctx, v, d, m, in, after, origins)
	}
	return m, nil
}

// readDraft reads a draft to mutate it. Unread, a draft this reconcile
// created is recorded by its version as created (the caller records
// its createdAt; e2e-porch-release-bench, N=500: Porch failed to read a new
// upgrade draft, "error cloning git repository", and the draft, recorded
// nowhere, waited for a person). Read at that version, the draft is as its
// creation left it: the variant's own, fresh (asCreated).
func (r *Reconciler) readDraft(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, w *work) (store.Resources, bool, error) {
	res, err := r.porch().GetResources(ctx, v.Namespace, d.Name)
	if err != nil {
		return res, false, err
	}
	asCreated := !w.fresh && res.ResourceVersion != "" && v.Target(d.Name).Created() == res.ResourceVersion
	if asCreated {
		w.fresh = true
	}
	return res, asCreated, nil
}

// checkWrite checks a write as the store answered it (Porch's rendered
// files): the chain run again on them, the record written again when
// Porch's render changed the package, a render conflict told from an
// input that changed meanwhile; m is the write's mutation, in its chain's
// inputs.
func (r *Reconciler) checkWrite(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, m mutation, in *inputs, after store.Resources, origins provenance.Origins) (mutation, error) {
	m.files = after.Files
	again, in2, err := r.runChain(ctx, v, after.Files)
	if err == nil {
		m.target.gate = again.OpenGate // as Porch's render left the draft
	}
	if err == nil && !again.Changed && stamp.Stale(after.Files) {
		// Porch's render changed the package: the record follows it
		// (not after a render conflict, which stalls the draft).
		written := after.Files
		var render store.RenderStatus
		if render, after, err = r.restamp(ctx, v, d, after, origins); err != nil {
			// The write before stands (e2e-porch: "ref file is empty" on
			// the restamp left an upgrade draft with no recorded write,
			// and approval by policy waited for a person): its digest,
			// or the restamp's if that landed despite the error, is
			// the variant's last write, recorded with the error.
			last, unconfirmed := writeOutcome(ctx, err)
			if last == "" {
				last = variant.Fingerprint(written)
			}
			return mutation{target: target{name: d.Name, render: &render, lastWrite: last, unconfirmed: unconfirmed}}, err
		}
		m.files, m.target.render = after.Files, &render
	}
	switch {
	case err == nil && !again.Changed:
		m.in, m.settled = in2, after.ResourceVersion
	case err == nil && !in.same(in2):
		// The injected objects changed between the write and its
		// check (a ConfigMap updated while the draft was written):
		// the difference is theirs, not Porch's render. Not a
		// conflict and not vouched for: their change's reconcile
		// writes again (rule render-fight-stops; seen in e2e-porch,
		// where a stall here left the draft behind its ConfigMap).
		ctrl.LoggerFrom(ctx).Info("the injected objects changed while the draft was written; writing again on their change", "revision", d.Name)
	case err == nil:
		m.in, m.settled = in2, after.ResourceVersion
		m.conflict = renderConflict(d.Name, after.Files, again.Files)
	default:
		// The write stands; the draft is not vouched for (no memo), so
		// the next reconcile reads it and runs the chain again, which
		// reports this error if it persists.
		ctrl.LoggerFrom(ctx).Info("checking the written draft as the store answered failed", "revision", d.Name, "error", err.Error())
	}
	return m, nil
}

// writeOutcome is what a failed write of a draft leaves known
// (settled.WriteError; rule porch-failure-modes): the digest of the draft
// as it now is when the write landed despite the error (the variant's
// last write, recorded by the failing reconcile: reconcileVariant), or
// the digest of what was sent when nothing is known of it, for the next
// reconcile to confirm (UnconfirmedWrite); neither for a refusal. Else a
// write that landed as Porch's "remote not found" answered was recorded
// nowhere, and approval by policy waited for a person forever (CI,
// TestWaveApprovalOnPorch). A person's edit made in the same second as a
// failed write would be taken for pvkit's: the window is the failed
// request's.
func writeOutcome(ctx context.Context, err error) (last, unconfirmed string) {
	var we *settled.WriteError
	if !errors.As(err, &we) {
		return "", ""
	}
	if we.Landed {
		ctrl.LoggerFrom(ctx).Info("the write was answered with an error but landed: the draft as it now is counts as the variant's write", "revision", we.Name, "error", err.Error())
		return we.Digest, ""
	}
	ctrl.LoggerFrom(ctx).Info("the write was answered with an error and the draft does not read as moved on: the next reconcile confirms it", "revision", we.Name, "error", err.Error())
	return "", we.Digest
}

// restamp writes the record again for a draft as Porch's render of the
// write left it (staleRecord), once: a render that changes the package
// again leaves the record stale, which `pvctl verify` and
// pvkit.dev/require-provenance then report.
func (r *Reconciler) restamp(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, after store.Resources, origins provenance.Origins) (store.RenderStatus, store.Resources, error) {
	name := d.Name
	files, err := r.Provenance.Stamp(v, d, after.Files, origins)
	if err != nil {
		return store.RenderStatus{}, store.Resources{}, err
	}
	if err := r.intend(ctx, v, name, variant.Fingerprint(files)); err != nil {
		return store.RenderStatus{}, store.Resources{}, err
	}
	render, again, err := r.porch().UpdateResourcesRendered(ctx, v.Namespace, name, store.Resources{Files: files, ResourceVersion: after.ResourceVersion, Origin: after.Origin})
	if err != nil {
		return render, store.Resources{}, fmt.Errorf("updating %s with its provenance record as rendered: %w", name, err)
	}
	if again.ResourceVersion != "" && stamp.Stale(again.Files) {
		// Said, not retried: a render that changes the package each time
		// would write forever. pvctl verify names the files.
		ctrl.LoggerFrom(ctx).Info("the provenance record does not hold: Porch's render changed the package again", "revision", name)
	}
	return render, again, nil
}

// writtenBeforeRead: a draft recorded as created (createdAt) with no
// digest known, found at another version: someone wrote it before the
// variant ever read it (named Edited; a later write of the variant keeps
// what they wrote).
func writtenBeforeRead(v *pvapi.PackageVariant, draft string) bool {
	t := v.Target(draft)
	return t.Created() != "" && (t.LastWrite == "" || strings.HasPrefix(t.LastWrite, pvapi.LegacyCreated))
}

// editedSince reports whether a draft read at digest fp differs from the variant's
// last write of it (someone else edited it); false when the variant knows
// no last write.
func editedSince(v *pvapi.PackageVariant, draft, fp string) bool {
	last := v.Target(draft).LastLeft(fp)
	return last != "" && approval.EditedSince(last, fp)
}

// renderConflict (rule: render-fight-stops) names what Porch's render
// undid: the files the chain
// would change again, and the package pipeline's functions that ran.
func renderConflict(name string, rendered, wanted map[string]string) error {
	var files []string
	for f, content := range wanted {
		if rendered[f] != content {
			files = append(files, f)
		}
	}
	for f := range rendered {
		if _, ok := wanted[f]; !ok {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	fns := "its Kptfile pipeline"
	if kf, err := kptfile.FromFiles(rendered); err == nil && kf != nil {
		if names, err := kf.FunctionNames(kptfile.Mutators); err == nil && len(names) > 0 {
			fns = "its Kptfile pipeline (" + strings.Join(names, ", ") + ")"
		}
	}
	return kit.Stall(pvapi.ReasonRenderConflict, fmt.Errorf(
		"Porch's render of %s undid the variant's mutation of %s: %s sets what the variant sets otherwise; pvkit does not write again until the variant, its upstream, its injected objects or the package change (make the variant and the package's pipeline agree)",
		name, strings.Join(files, ", "), fns))
}

// renderFailure is an update Porch refused because the package's pipeline
// failed to render. The render status goes into the variant's
// status.downstreamTargets; the error is retried like any Porch failure (a
// function runner outage heals; a broken pipeline needs a package change,
// which the revision watch brings).
type renderFailure struct {
	target target
	err    error
}

func (e *renderFailure) Error() string { return e.err.Error() }
func (e *renderFailure) Unwrap() error { return e.err }

// emptyDraft deals with a draft that holds no file at all (store.
// ErrNoResources; e2e-porch TestShardsOnPorch: three controllers creating
// drafts in one repository at once, Porch v1.5.3 answered one create 500,
// its rollback could not delete the draft's branch, and it listed the
// draft with no resources for good; the variant retried reading it until
// the test gave up). (The draft of a create Porch refused for its render
// reads as that render failure: settled.Store.GetResources.) Only the
// draft this variant asked for last (created,
// or taken back after a failed create: settled.Store.Made) is its to
// delete: it holds nothing of anyone's, so it is deleted, said in a
// Warning Event, forgotten, and the next reconcile makes the downstream
// again. Any other is an error that names it, for a person.
func (r *Reconciler) emptyDraft(ctx context.Context, v *pvapi.PackageVariant, d store.Revision, cause error) error {
	mine := d.Lifecycle == store.Draft && (len(d.Owners) == 0 || d.OwnedBy(string(v.UID))) && r.porch().Made(string(v.UID), d.Name)
	if !mine {
		return fmt.Errorf("%w: it is not the draft this variant made last, so it is left for a person to delete (porchctl rpkg del %s)", cause, d.Name)
	}
	if err := r.porch().Delete(ctx, d.Namespace, d.Name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w; deleting it to make it again: %v", cause, err)
	}
	r.porch().ForgetDraft(string(v.UID), d.Name)
	r.events().Warning(v, EventEmptyDraftDeleted, "draft %s holds no file (Porch's create of it failed half-way): deleted; the downstream is made again", d.Name)
	ctrl.LoggerFrom(ctx).Info("deleted an empty draft the variant asked for", "revision", d.Name)
	return kit.Wait(cacheRetry, "draft %s held no file (Porch's create of it failed half-way): deleted, made again", d.Name)
}

// intend records, before a write to Porch, the digest the write sends as
// the draft's unconfirmed write (DownstreamTarget.UnconfirmedWrite), in a
// status patch of its own: whatever becomes of the reconcile's status
// write after it (conflicts past its rebases, the process killed), the
// next reconcile finds the draft at that digest and takes it for the
// variant's write (lastLeft), as it does a write whose answer was lost.
// Already recorded (a retry of the same write): no patch. A patch that
// fails stops the write: nothing is sent to Porch that the status could
// not name (a patch lost to conflicts past its rebases is a short wait).
func (r *Reconciler) intend(ctx context.Context, v *pvapi.PackageVariant, draft, digest string) error {
	i := slices.IndexFunc(v.Status.DownstreamTargets, func(t pvapi.DownstreamTarget) bool { return t.Name == draft })
	if i >= 0 && v.Status.DownstreamTargets[i].UnconfirmedWrite == digest {
		return nil
	}
	base, next := v.DeepCopy(), v.DeepCopy()
	record := func(o *pvapi.PackageVariant) {
		ts := slices.Clone(o.Status.DownstreamTargets)
		if j := slices.IndexFunc(ts, func(t pvapi.DownstreamTarget) bool { return t.Name == draft }); j >= 0 {
			ts[j].UnconfirmedWrite = digest
		} else {
			ts = append(ts, pvapi.DownstreamTarget{Name: draft, Lifecycle: string(store.Draft), UnconfirmedWrite: digest})
		}
		o.Status.DownstreamTargets = ts
	}
	record(next)
	if err := r.patchStatus(ctx, base, next); kit.StatusLost(err) {
		// Rewritten as fast as it is read: nothing sent, run again afresh.
		return kit.Wait(kit.StatusLostRetry, "recording the write of %s before sending it lost to other writes of the variant; trying again", draft)
	} else if err != nil {
		return fmt.Errorf("recording the write of %s before sending it: %w", draft, err)
	}
	record(v)
	v.ResourceVersion = next.ResourceVersion
	return nil
}
