package packagevariant

import (
	"context"
	"errors"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
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
