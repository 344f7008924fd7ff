package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	"github.com/pvkit/pvkit/pkg/variant"
	ctrl "sigs.k8s.io/controller-runtime"
)

// createDraft creates a draft of the downstream owned by the variant, with
// its labels and annotations, in workspace packagevariant-<N+1> (N the
// highest such number in the package). Idempotent (rule: idempotent-drafts)
// and never an ownerless draft (rule never-ownerless): the settled store
// (settled.Store.Create) reads a failed create back, takes back a draft
// Porch recorded without owner, moves past a workspace the listing did
// not show taken, and remembers a failed create so that its draft, if it
// shows up ownerless, is taken back instead of creating another. An
// ownerless draft in a pvkit workspace that this variant did not ask for
// (an earlier process's, say) is reported with a Warning Event,
// OwnerlessDraft, when the variant creates a draft next to it.
func (r *Reconciler) createDraft(ctx context.Context, v *pvapi.PackageVariant, task store.Task) (store.Revision, error) {
	return r.createDraftAnnotated(ctx, v, task, nil)
}

// createDraftAnnotated is createDraft with annotations of pvkit's own
// added to the draft's (a drift policy's DriftResolutionAnnotation).
func (r *Reconciler) createDraftAnnotated(ctx context.Context, v *pvapi.PackageVariant, task store.Task, extra map[string]string) (store.Revision, error) {
	key := downstreamKey(v)
	revs, err := r.porch().ListRevisions(ctx, key)
	if err != nil {
		return store.Revision{}, err
	}
	var ownerless []string
	for _, rev := range revs {
		if !rev.Lifecycle.IsPublished() && len(rev.Owners) == 0 && strings.HasPrefix(rev.Workspace, workspacePrefix) {
			ownerless = append(ownerless, rev.Name)
		}
	}
	now, _ := approval.Split(v.Spec.Annotations)
	spec := store.DraftSpec{Namespace: v.Namespace, Repository: key.Repository, Package: key.Package,
		Workspace: nextWorkspace(revs), Owners: []store.OwnerRef{ownerRef(v)},
		Labels: v.Spec.Labels, Annotations: store.Overlay(now, extra), Task: task, ReadinessGates: []string{variant.MutationGate}}
	if err := r.stillMine(ctx, v); err != nil {
		return store.Revision{}, err
	}
	if len(ownerless) > 0 {
		r.events().Warning(v, EventOwnerlessDraft, "%s in %s has no owner and a pvkit workspace: a draft left by an earlier failure? Delete it (kubectl delete packagerevision), or set adoptionPolicy: adoptExisting to take it", strings.Join(ownerless, ", "), key)
	}
	draft, reclaimed, err := r.porch().Create(ctx, spec, func(taken string) string {
		// The workspace is taken (rule: listing-lags), by someone else's
		// revision or one Porch cannot show, and the listing did not show it.
		ctrl.LoggerFrom(ctx).Info("the workspace is taken though the listing does not show it; trying the next", "workspace", taken)
		revs = append(revs, store.Revision{Workspace: taken})
		return nextWorkspace(revs)
	})
	if reclaimed {
		r.reclaimed(ctx, v)
		return draft, nil
	}
	if err != nil {
		ws := spec.Workspace
		var ce *settled.CreateError
		if errors.As(err, &ce) {
			ws = ce.Workspace
		}
		if task.Type == store.Clone && errors.Is(err, store.ErrNotFound) {
			// The upstream was just found, so what is missing is the
			// downstream repository: the user's to create (retried, so that
			// creating it heals the variant).
			return store.Revision{}, kit.Retry(pvapi.ReasonRepositoryNotFound, fmt.Errorf(
				"the downstream repository %q does not exist in namespace %q: register it (a Repository object) or fix `spec.downstream.repo` (%v)", key.Repository, v.Namespace, err))
		}
		return store.Revision{}, fmt.Errorf("creating %s %s draft of %s in workspace %q: %w", article(string(task.Type)), task.Type, key, ws, err)
	}
	ctrl.LoggerFrom(ctx).Info("created draft", "revision", draft.Name, "task", task.Type)
	switch task.Type {
	case store.Upgrade:
		r.events().Normal(v, EventDraftUpgraded, "created upgrade draft %s of %s from %s to %s", draft.Name, task.Local, task.OldUpstream, task.NewUpstream)
	case store.Edit:
		r.events().Normal(v, EventDraftEdited, "created edit draft %s of %s", draft.Name, task.Source)
	default:
		r.events().Normal(v, EventDraftCreated, "created draft %s (clone of %s)", draft.Name, task.Upstream)
	}
	return draft, nil
}

func nextWorkspace(revs []store.Revision) string {
	n := 0
	for _, rev := range revs {
		if s, ok := strings.CutPrefix(rev.Workspace, workspacePrefix); ok {
			if i, err := strconv.Atoi(s); err == nil && i > n {
				n = i
			}
		}
	}
	return workspacePrefix + strconv.Itoa(n+1)
}

// article is the indefinite article of a word ("an upgrade", "a clone").
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}
