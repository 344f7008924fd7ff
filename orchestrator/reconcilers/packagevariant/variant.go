package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/approve"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/upstream"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// reconcileVariant runs the steps and returns their outcome (kit's error
// model) and, when they succeeded, the downstream's revisions as the
// downstream step listed them (listed); it sets status.downstreamTargets.
//
//   - an invalid spec stalls (ValidationError);
//   - no upstream revision matches spec.upstream: stalls (UpstreamNotFound);
//   - the downstream step: stalls on a stale draft, a package that cannot be
//     mutated, a locked upstream that is gone; a refused render is retried
//     with its render status in the targets; a Porch failure is retried.
func (r *Reconciler) reconcileVariant(ctx context.Context, v *pvapi.PackageVariant) (listed []store.Revision, err error) {
	if invalid := krm.InvalidFrom(variant.Validate(v.Core())); invalid != nil {
		return nil, &kit.Stalling{Reason: pvapi.ReasonValidationError, Err: invalid,
			ReadyReason: pvapi.ReasonError, ReadyMessage: "invalid packagevariant object"}
	}
	r.sayDeprecated(v)
	for i, inj := range v.Spec.Injectors {
		if inj.Kind != nil && !r.Kinds.AllowsKind(inj.Group, *inj.Kind) {
			return nil, r.Kinds.Refuse(pvapi.ReasonKindNotAllowed, fmt.Sprintf("`spec.injectors[%d]` names kind %q", i, *inj.Kind))
		}
	}
	up, err := r.findUpstream(ctx, v)
	if err != nil {
		return nil, err
	}
	if up == nil {
		return nil, kit.Stallf(pvapi.ReasonUpstreamNotFound, "upstream package revision not found: %s", upstream.Describe(*v.Spec.Upstream))
	}
	unlock := r.pkgs.Lock(downstreamKey(v).String())
	targets, listed, err := r.reconcileDownstream(ctx, v, up)
	unlock()
	if err != nil && ctx.Err() != nil {
		// Stopped, not failed (a Ctrl-C read RenderFailed).
		return nil, kit.Retry(pvapi.ReasonInterrupted, fmt.Errorf("stopped before it finished (%v); the next reconcile goes on", context.Cause(ctx)))
	}
	var rf *renderFailure
	if errors.As(err, &rf) {
		v.Status.DownstreamTargets = recordRender(v.Status.DownstreamTargets, rf.target)
		return nil, kit.Retry(pvapi.ReasonRenderFailed, err)
	}
	if errors.Is(err, store.ErrRenderFailed) { // a draft Porch would not create: its render failed
		if key := missingContextKey(err.Error()); key != "" && setsContextKey(v, key) {
			// Retrying cannot help: every clone renders before the variant
			// writes its context (rule blueprint-renders-alone).
			return nil, kit.Stall(pvapi.ReasonRenderFailed, fmt.Errorf("%w; the blueprint must render on its own: Porch renders every clone with a package context of name and package-path only, "+
				"before the variant writes `%s` into it, so the blueprint's pipeline must not need `data.%s` (take it from an object of the package that has a default, which the variant can inject, "+
				"or read it in a function the variant prepends, spec.pipeline)", err, key, key))
		}
		return nil, kit.Retry(pvapi.ReasonRenderFailed, err)
	}
	var st *kit.Stalling
	if errors.As(err, &st) && st.Reason == pvapi.ReasonRenderConflict && wrote(targets) {
		// The write happened: its draft and render status are the variant's.
		// A reconcile that found the conflict in its memo records the same
		// write's targets again (memo.unchanged): the list is replaced by
		// that write's values whatever status it read, and where the writing
		// reconcile's patch landed this changes nothing.
		v.Status.DownstreamTargets = mergeTargets(v.Status.DownstreamTargets, targets)
	}
	var p *kit.Partial
	if err != nil && !(errors.As(err, &p) && p.Reason == pvapi.ReasonRemovalHeld) {
		// What was written before the failure is the variant's all the
		// same (a status write loses nothing): those targets are recorded,
		// the others kept as they were.
		v.Status.DownstreamTargets = upsertTargets(v.Status.DownstreamTargets, targets)
		return nil, err
	}
	v.Status.DownstreamTargets = mergeTargets(v.Status.DownstreamTargets, targets)
	r.setOverridden(v, targets)
	return listed, err
}

// wrote reports whether targets carry the render status of a write.
func wrote(targets []target) bool {
	for _, t := range targets {
		if t.render != nil {
			return true
		}
	}
	return false
}

// ConditionBlueprintOverrides (rule blueprint-runs-last) is True while the
// blueprint's own pipeline runs, after a function the variant prepends, a
// function of the same kind that sets what it sets: the package ends with
// the blueprint's values although the variant is Ready. Set from the
// reconciles that ran the variant's chain on a draft (a draft the memo
// vouches for keeps what was set), removed when none warns; a new warning
// is also a Warning Event.
const (
	ConditionBlueprintOverrides = pvapi.ConditionBlueprintOverrides
	ReasonFunctionRunsAgain     = pvapi.ReasonFunctionRunsAgain
	EventBlueprintOverrides     = "BlueprintOverrides"
)

func (r *Reconciler) setOverridden(v *pvapi.PackageVariant, targets []target) {
	checked := false
	var msgs []string
	for _, t := range targets {
		if !t.checked {
			continue
		}
		checked = true
		for _, m := range t.overridden {
			msgs = append(msgs, t.name+": "+m)
		}
	}
	if !checked {
		return
	}
	if len(msgs) == 0 {
		apimeta.RemoveStatusCondition(&v.Status.Conditions, ConditionBlueprintOverrides)
		return
	}
	msg := strings.Join(msgs, "; ")
	if prev := apimeta.FindStatusCondition(v.Status.Conditions, ConditionBlueprintOverrides); prev == nil || prev.Message != msg {
		r.events().Warning(v, EventBlueprintOverrides, "%s", msg)
	}
	kit.Set(&v.Status.Conditions, v.Generation, r.Clock, ConditionBlueprintOverrides, metav1.ConditionTrue, ReasonFunctionRunsAgain, msg)
}

// contextKeyMissing matches apply-replacements' error for a source field
// the package context (ConfigMap kptfile.kpt.dev) does not have.
var contextKeyMissing = regexp.MustCompile("fieldPath `data\\.([A-Za-z0-9_.-]+)` is missing for replacement source ConfigMap[^ ]*kptfile\\.kpt\\.dev")

// missingContextKey is the package-context key a render failed for want
// of, or "".
func missingContextKey(msg string) string {
	if m := contextKeyMissing.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// setsContextKey reports whether the variant writes key into the package
// context.
func setsContextKey(v *pvapi.PackageVariant, key string) bool {
	if pc := v.Spec.PackageContext; pc != nil {
		_, ok := pc.Data[key]
		return ok
	}
	return false
}

// blocked is what keeps target dt (as mergeTargets made it from t) from
// being published: nothing once published; a person's rejection; a gate
// other than the mutation's that is not True (what the chain saw this
// reconcile, or what the status said when it did not run: the memo vouched
// for the draft); else the wait for approval, with the message approval by
// policy gave it, if any.
func blocked(dt pvapi.DownstreamTarget, t target) (pvapi.Blocked, bool) {
	if dt.Lifecycle == "" || store.Lifecycle(dt.Lifecycle).IsPublished() {
		return pvapi.Blocked{}, false
	}
	rejected := dt.Rejected() // what the status said, unless this reconcile read the lifecycle
	if t.lifecycle != "" {
		rejected = t.rejected
	}
	gate := ""
	switch {
	case t.checked:
		gate = t.gate
	case dt.Blocked != nil && dt.Blocked.Reason == pvapi.ReasonGateClosed:
		gate = dt.Blocked.Message
	}
	switch {
	case rejected:
		return pvapi.Blocked{Reason: pvapi.ReasonRejected, Message: "a person rejected it (Proposed, then Draft again): propose it again when it is fixed"}, true
	case gate != "":
		return pvapi.Blocked{Reason: pvapi.ReasonGateClosed, Message: gate}, true
	case dt.Blocked != nil && dt.Blocked.Reason == pvapi.ReasonAwaitingApproval:
		return *dt.Blocked, true // approval by policy's word on it, until it speaks again
	}
	return pvapi.Blocked{Reason: pvapi.ReasonAwaitingApproval, Message: approve.Awaiting(dt.Lifecycle, "")}, true
}

// sameUpstream reports whether a target's recorded lock and a lock read
// or made now name the same upstream revision: the same package and ref
// (a directory-scoped repository's ref may carry the directory), the
// repository and commit compared only when both have them. The lock a
// clone or an upgrade makes has the repository and no commit, the one
// Porch then lists the commit and no repository: the status keeps the
// first, so that the next reconcile does not patch it again (the release
// bench counted a second status patch per variant before).
func sameUpstream(u *pvapi.UpstreamLock, l *store.Lock) bool { return kit.StoreLock(u).Same(l) }

// mergeTargets keeps the render status of targets not updated this time.
func mergeTargets(prev []pvapi.DownstreamTarget, targets []target) []pvapi.DownstreamTarget {
	out := make([]pvapi.DownstreamTarget, 0, len(targets))
	for _, t := range targets {
		dt := pvapi.DownstreamTarget{Name: t.name}
		for i := range prev {
			if prev[i].Name == t.name {
				dt = prev[i]
				break
			}
		}
		if t.render != nil {
			dt.RenderStatus = *t.render.DeepCopy()
		}
		if t.lastWrite != "" || t.checked { // a write confirmed, or the draft read at another digest
			dt.UnconfirmedWrite = ""
		}
		if t.lastWrite != "" {
			dt.LastWrite, dt.CreatedAt = t.lastWrite, ""
		}
		if t.createdAt != "" {
			dt.CreatedAt = t.createdAt
		}
		if t.unconfirmed != "" {
			dt.UnconfirmedWrite = t.unconfirmed
		}
		if t.lifecycle != "" {
			dt.Lifecycle = t.lifecycle
		}
		if t.revision > 0 {
			dt.Revision = t.revision
		}
		if t.commit != "" {
			dt.Commit = t.commit
		}
		dt.Edited = dt.Edited || t.edited
		if t.kept != nil {
			dt.Kept = t.kept
		}
		if l := t.lock; l != nil && !sameUpstream(dt.UpstreamLock, l) {
			dt.UpstreamLock = kit.StatusLock(l)
		}
		switch b, ok := blocked(dt, t); {
		case !ok:
			dt.Blocked = nil
		case dt.Blocked == nil || *dt.Blocked != b: // else kept: a steady resync allocates nothing
			dt.Blocked = &b
		}
		out = append(out, dt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// upsertTargets records targets of a reconcile that failed after writing
// them (mergeTargets' merge of each), keeping every other entry as it is.
func upsertTargets(prev []pvapi.DownstreamTarget, targets []target) []pvapi.DownstreamTarget {
	var named []target
	for _, t := range targets {
		if t.name != "" {
			named = append(named, t)
		}
	}
	if len(named) == 0 {
		return prev
	}
	out := mergeTargets(prev, named)
	for _, p := range prev {
		if !slices.ContainsFunc(named, func(t target) bool { return t.name == p.Name }) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// recordRender sets one target's render status and keeps every other entry
// (a failed reconcile reports the render that failed and nothing else).
func recordRender(prev []pvapi.DownstreamTarget, t target) []pvapi.DownstreamTarget {
	out := append([]pvapi.DownstreamTarget(nil), prev...)
	for i := range out {
		if out[i].Name == t.name {
			out[i].RenderStatus = *t.render.DeepCopy()
			return out
		}
	}
	out = append(out, pvapi.DownstreamTarget{Name: t.name, RenderStatus: *t.render.DeepCopy()})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func downstreamKey(v *pvapi.PackageVariant) store.PackageKey {
	if v.Spec.Downstream == nil { // an invalid spec: no package
		return store.PackageKey{Namespace: v.Namespace}
	}
	return store.PackageKey{Namespace: v.Namespace, Repository: v.Spec.Downstream.Repo, Package: v.Spec.Downstream.Package}
}

// EventDeprecatedAnnotation: the variant gives a policy by an annotation
// that spec.policy replaces (once for each generation that does).
const EventDeprecatedAnnotation = "DeprecatedAnnotation"

// sayDeprecated records, once a generation (the first reconcile of a new
// one), a Normal Event for each policy the variant gives by its deprecated
// annotation rather than spec.policy (rule policy-flows-down).
func (r *Reconciler) sayDeprecated(v *pvapi.PackageVariant) {
	if v.Status.ObservedGeneration == v.Generation {
		return
	}
	for _, a := range pv.PolicyAnnotations {
		if _, ok := v.Annotations[a.Annotation]; !ok {
			continue
		}
		if _, val := v.Spec.Policy.Get(a.Annotation); val == "" {
			r.events().Normal(v, EventDeprecatedAnnotation, "the annotation %s is deprecated on a PackageVariant: set spec.policy.%s instead (the annotation is read while the field is absent)", a.Annotation, a.Field)
		}
	}
}
