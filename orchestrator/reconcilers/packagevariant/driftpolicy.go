package packagevariant

import (
	"context"
	"fmt"
	"maps"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/variant"
	ctrl "sigs.k8s.io/controller-runtime"
)

// driftPolicy is the drift policy the variant asks for (its
// spec.policy.drift, else its annotation: policyOf) and, for a value that
// is none of them, why it is read as report.
func (r *Reconciler) driftPolicy(ctx context.Context, v *pvapi.PackageVariant) (policy, problem string) {
	what, val, ok := policyOf(v, DriftPolicyAnnotation)
	switch {
	case !ok || val == DriftReport:
		return DriftReport, ""
	case val == DriftAdopt || val == DriftRevert:
		return val, ""
	}
	return DriftReport, fmt.Sprintf("%s has %s: %q, none of %q, %q and %q (read as %q until fixed)",
		what, DriftPolicyAnnotation, val, DriftReport, DriftAdopt, DriftRevert, DriftReport)
}

// driftPolicyProblem is driftPolicy's problem alone.
func (r *Reconciler) driftPolicyProblem(ctx context.Context, v *pvapi.PackageVariant) string {
	_, why := r.driftPolicy(ctx, v)
	return why
}

// resolveDrift (rule drift-policy) acts on the drift of pub, the
// variant's newest published revision, when its policy is adopt or
// revert; ok is false when it has nothing to do (report, or no drift),
// and the reconcile goes on as before. Either policy makes one draft (an
// edit of pub, with DriftResolutionAnnotation and an Event), approved like
// any other; the drift stays reported until it is published. Adopting a
// newer revision writes nothing to the package: the variant owns it and
// goes on from it.
func (r *Reconciler) resolveDrift(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, pub store.Revision) (targets []target, ok bool, err error) {
	policy, _ := r.driftPolicy(ctx, v)
	if policy == DriftReport {
		return nil, false, nil
	}
	revs, err := r.porch().ListRevisions(ctx, downstreamKey(v))
	if err != nil {
		return nil, false, err
	}
	d, _, err := r.driftOf(ctx, v, pub, revs)
	if err != nil || d == nil || (policy == DriftAdopt && d.reason == pvapi.ReasonBranchUnreadable) {
		return nil, false, err // an unreadable branch has nothing to adopt: reported (its message says so)
	}
	if policy == DriftAdopt && d.reason == pvapi.ReasonNewerRevision {
		rev := d.rev
		rev.Owners = append(rev.Owners, ownerRef(v))
		rev.Labels = store.Overlay(rev.Labels, v.Spec.Labels)
		rev.Annotations = store.Overlay(rev.Annotations, v.Spec.Annotations)
		if err := r.porch().Update(ctx, rev); err != nil {
			return nil, false, fmt.Errorf("adopting %s (%s: %s): %w", rev.Name, DriftPolicyAnnotation, DriftAdopt, err)
		}
		ctrl.LoggerFrom(ctx).Info("adopted a newer revision made outside the variant", "revision", rev.Name)
		r.events().Normal(v, EventDriftAdopted, "adopted %s, newer than the variant's %s (%s: %s): the variant goes on from it", rev.Name, pub.Name, DriftPolicyAnnotation, DriftAdopt)
		targets, err = r.reconcilePublished(ctx, v, up, rev)
		return targets, true, err
	}
	w := work{origins: r.sourceOrigins(ctx, v, pub)}
	if policy == DriftAdopt {
		branch, of := d.branch, w.origins
		w.prepare = func(map[string]string) (map[string]string, error) { return maps.Clone(branch), nil }
		w.origins = func(files map[string]string) provenance.Origins { return adoptedOrigins(d, of(files)) }
	}
	resolution := policy + " of " + d.rev.Name
	draft, err := r.createDraftAnnotated(ctx, v, store.Task{Type: store.Edit, Source: pub.Name}, map[string]string{DriftResolutionAnnotation: resolution})
	if err != nil {
		return nil, false, err
	}
	event, said := EventDriftReverted, "reverts"
	if policy == DriftAdopt {
		event, said = EventDriftAdopted, "adopts"
	}
	r.events().Normal(v, event, "made draft %s, which %s the drift of %s from %s (%s: %s); approve it like any draft", draft.Name, said, d.rev.Name, pub.Name, DriftPolicyAnnotation, policy)
	targets, err = r.mutateNewWith(ctx, v, up, draft, pub.Lock, w)
	return targets, true, err
}

// adoptedOrigins are the origins of an adoption's draft: the
// files of the revision it starts from that pvkit did not build (origins)
// and the files the adopted commit changed or added,
// each said adopted, from where, at which commit: the record never vouches
// for them as pvkit's build, and approval by policy leaves the draft to a
// person when provenance is required (provenanceProblem).
func adoptedOrigins(d *drift, origins provenance.Origins) provenance.Origins {
	at := d.rev.Commit
	if at == "" {
		at = "version " + d.rev.ResourceVersion
	} else {
		at = "commit " + at
	}
	for _, f := range d.files {
		if f.Change == variant.FileRemoved {
			continue
		}
		if origins == nil {
			origins = provenance.Origins{}
		}
		origins[f.Path] = provenance.Origin{Words: fmt.Sprintf("adopted from %s at %s (%s: %s); not built by pvkit, approved by a person when provenance is required", d.rev.Name, at, DriftPolicyAnnotation, DriftAdopt),
			Digest: strings.TrimPrefix(variant.Fingerprint(map[string]string{f.Path: d.branch[f.Path]}), "sha256:")}
	}
	return origins
}
