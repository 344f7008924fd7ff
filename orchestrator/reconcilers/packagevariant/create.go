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
	"github.com/pvkit/pvkit/pkg/variant"
	ctrl "sigs.k8s.io/controller-runtime"
)

// createDraft creates a draft of the downstream owned by the variant, with
// its labels and annotations, in workspace packagevariant-<N+1> (N the
// highest such number in the package). Idempotent (rule: idempotent-drafts): a create that
// failed after succeeding leaves an owned draft the next reconcile finds;
// a workspace that exists already is retried.
//
// Never an ownerless draft: Porch's background repository refresh can
// record a new draft before its owner references land, and the create then
// fails although the draft exists, with no owner. So when a create fails,
// the package is listed again at once and a draft in the workspace asked
// for, with no owner, is taken back (reclaimed: rule never-ownerless); when
// it is not there yet,
// the workspace is remembered and the next reconcile takes it back when it
// shows up, instead of creating another draft. An ownerless draft in a
// pvkit workspace that this variant did not ask for (an earlier process's,
// say) is reported with a Warning Event, OwnerlessDraft, when the variant
// creates a draft next to it.
func (r *Reconciler) createDraft(ctx context.Context, v *pvapi.PackageVariant, task store.Task) (store.Revision, error) {
	return r.createDraftAnnotated(ctx, v, task, nil)
}

// createDraftAnnotated is createDraft with annotations of pvkit's own
// added to the draft's (a drift policy's DriftResolutionAnnotation).
func (r *Reconciler) createDraftAnnotated(ctx context.Context, v *pvapi.PackageVariant, task store.Task, extra map[string]string) (store.Revision, error) {
	key := downstreamKey(v)
	revs, err := r.Store.ListRevisions(ctx, key)
	if err != nil {
		return store.Revision{}, err
	}
	if asked, ok := r.mem.askedFor(v.UID); ok {
		for _, rev := range revs {
			if rev.Name == asked && !rev.Lifecycle.IsPublished() && len(rev.Owners) == 0 {
				return r.reclaim(ctx, v, rev)
			}
		}
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
	draft, err := r.Store.CreateDraft(ctx, spec)
	for taken := 0; err != nil; taken++ {
		name := store.RevisionName(key.Repository, key.Package, spec.Workspace)
		rev, rerr := r.Store.Read(ctx, v.Namespace, name) // past the cache, which may not have it
		if rerr == nil && !rev.Lifecycle.IsPublished() {
			if rev.OwnedBy(string(v.UID)) {
				draft, err = rev, nil // the create succeeded after all (rule: idempotent-drafts)
				break
			} else if len(rev.Owners) == 0 {
				return r.reclaim(ctx, v, rev)
			}
		}
		if (rerr != nil && !errors.Is(rerr, store.ErrNotFound)) || !errors.Is(err, store.ErrAlreadyExists) || taken == maxTakenWorkspaces {
			break
		}
		// The workspace is taken (rule: listing-lags), by someone else's revision or one Porch
		// cannot show (its repository has the branch), and the listing
		// did not show it: the next one.
		ctrl.LoggerFrom(ctx).Info("the workspace is taken though the listing does not show it; trying the next", "revision", name, "reason", err.Error())
		revs = append(revs, store.Revision{Name: name, Workspace: spec.Workspace})
		spec.Workspace = nextWorkspace(revs)
		draft, err = r.Store.CreateDraft(ctx, spec)
	}
	if err != nil {
		name := store.RevisionName(key.Repository, key.Package, spec.Workspace)
		if task.Type == store.Clone && errors.Is(err, store.ErrNotFound) {
			// The upstream was just found, so what is missing is the
			// downstream repository: the user's to create (retried, so that
			// creating it heals the variant).
			return store.Revision{}, kit.Retry(pvapi.ReasonRepositoryNotFound, fmt.Errorf(
				"the downstream repository %q does not exist in namespace %q: register it (a Repository object) or fix `spec.downstream.repo` (%v)", key.Repository, v.Namespace, err))
		}
		r.mem.didAsk(v.UID, name)
		return store.Revision{}, fmt.Errorf("creating %s %s draft of %s in workspace %q: %w", article(string(task.Type)), task.Type, key, spec.Workspace, err)
	}
	r.mem.didCreate(v.UID, key, draft.Name, r.now())
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

// reclaim makes the variant the owner of the ownerless draft it asked for,
// with its labels and annotations, as the create would have.
func (r *Reconciler) reclaim(ctx context.Context, v *pvapi.PackageVariant, rev store.Revision) (store.Revision, error) {
	now, _ := approval.Split(v.Spec.Annotations)
	rev.Owners = []store.OwnerRef{ownerRef(v)}
	rev.Labels = store.Overlay(rev.Labels, v.Spec.Labels)
	rev.Annotations = store.Overlay(rev.Annotations, now)
	if err := r.Store.Update(ctx, rev); err != nil {
		r.mem.didAsk(v.UID, rev.Name)
		return store.Revision{}, fmt.Errorf("taking back the ownerless draft %s: %w", rev.Name, err)
	}
	r.mem.didCreate(v.UID, rev.Key(), rev.Name, r.now())
	ctrl.LoggerFrom(ctx).Info("reclaimed the draft it asked for, recorded without owner", "revision", rev.Name)
	r.events().Normal(v, EventDraftReclaimed, "took back draft %s: Porch recorded it before its owner reference landed", rev.Name)
	rev.ResourceVersion = "" // changed by the update
	return rev, nil
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
