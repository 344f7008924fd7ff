package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/settled"
	ctrl "sigs.k8s.io/controller-runtime"
)

// What the settled store (orchestrator/store/settled) says of the drafts
// Porch does not show as they are, in the reconcile's words: a Waiting
// outcome, so that Reconcile runs again shortly, changing nothing
// meanwhile; a draft taken back, an Event.

// phantomRetry is how often a draft that reads NotFound is read again.
const phantomRetry = 2 * time.Second

// cacheBehind: Porch does not show the draft this variant just created.
func cacheBehind(name string) *kit.Waiting {
	return kit.Wait(cacheRetry, "waiting for Porch to show draft %s", name)
}

// settledOutcome is the reconcile's outcome for an error of the settled
// store that is a wait (the listing behind a create, a listed draft Porch
// does not find), else err itself.
func settledOutcome(ctx context.Context, err error) error {
	var nl *settled.NotListedError
	var ph *settled.PhantomError
	switch {
	case errors.As(err, &nl):
		return cacheBehind(nl.Name)
	case errors.As(err, &ph) && !ph.Lost:
		return kit.Wait(phantomRetry, "draft %s is listed but Porch does not find it (for %s): waiting up to %s for Porch to show it again before making the downstream without it",
			ph.Name, ph.Waited.Round(time.Second), settled.PhantomAfter)
	case errors.As(err, &ph):
		ctrl.LoggerFrom(ctx).Info("an owned draft the listing shows does not exist: left out", "revision", ph.Name)
		return kit.Wait(cacheRetry, "draft %s is listed but does not exist (Porch lost it): reconciling without it", ph.Name)
	}
	return err
}

// reclaimed records an Event for each draft the settled store took back
// for the variant (recorded by Porch without its owner reference).
func (r *Reconciler) reclaimed(ctx context.Context, v *pvapi.PackageVariant) {
	for _, name := range r.porch().Reclaimed(string(v.UID)) {
		ctrl.LoggerFrom(ctx).Info("reclaimed the draft it asked for, recorded without owner", "revision", name)
		r.events().Normal(v, EventDraftReclaimed, "took back draft %s: Porch recorded it before its owner reference landed", name)
	}
}

// emptyDraft deals with a draft that holds no file at all (store.
// ErrNoResources; e2e-porch TestShardsOnPorch: three controllers creating
// drafts in one repository at once, Porch v1.5.3 answered one create 500,
// its rollback could not delete the draft's branch, and it listed the
// draft with no resources for good; the variant retried reading it until
// the test gave up). Only the draft this variant asked for last (created,
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

// listOwned lists the variant's revisions as the settled store gives them
// (the draft it created last read directly when the listing, an informer
// cache, does not show it), in the reconcile's outcomes.
func (r *Reconciler) listOwned(ctx context.Context, v *pvapi.PackageVariant) ([]store.Revision, error) {
	owned, err := r.porch().ListOwned(ctx, v.Namespace, string(v.UID))
	r.reclaimed(ctx, v)
	return owned, settledOutcome(ctx, err)
}

// porch is the variant's store, settled (orchestrator/store/settled):
// Porch's write outcomes read back, the drafts this process made and
// Porch does not list yet, the listed drafts it cannot find. One per
// reconciler, over Store as it is now (a test that swaps Store keeps
// what the settled store remembers).
func (r *Reconciler) porch() *settled.Store {
	r.storeMu.Lock()
	defer r.storeMu.Unlock()
	if r.settled == nil {
		r.settled = settled.New(r.Store, r.now)
	} else if !sameStore(r.settled.Store, r.Store) {
		r.settled.Store = r.Store
	}
	return r.settled
}

// sameStore compares two stores, false where they cannot be compared.
func sameStore(a, b store.Store) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// forget drops everything remembered of a variant (deleted, gone).
func (r *Reconciler) forget(uid types.UID) {
	r.mem.Forget(uid)
	r.porch().Forget(string(uid))
}

// MemorySize is how many variants the reconciler remembers, and how many
// notes of drafts its settled store holds (bounded by the variants and
// their listed drafts; make soak checks it).
func (r *Reconciler) MemorySize() (variants, notes int) {
	_, notes = r.porch().Size()
	variants, _ = r.mem.Size()
	return variants, notes
}
