package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/variant"
	ctrl "sigs.k8s.io/controller-runtime"
)

// EventDraftAbandoned: a draft made towards an upstream the variant no
// longer asks for, holding only pvkit's own write, deleted (rule
// undone-drafts).
const EventDraftAbandoned = "DraftAbandoned"

// abandonUndone (rule undone-drafts) deletes the drafts the variant made
// towards an upstream it no longer asks for, when its newest published
// revision is at the upstream it asks for again (a rollout's undo, a pin
// moved back): upgraded in place back, such a draft would only publish
// the published content again, and a group's held members would wait
// with it. Only a Draft (a Proposed one was asked for), not rejected,
// holding nothing but pvkit's own last write (its digest the status's
// lastWrite: a person's edit keeps it, upgraded in place as before), and
// not when the variant asks for Porch's stall (pvkit.dev/draft-upgrade).
// A host that holds removals (pvctl run without --prune) keeps the draft
// and it is upgraded in place back as before, its content the published
// revision's again (approved, it publishes that content): a Normal Event
// says pvctl run --prune deletes it. It returns the drafts left.
func (r *Reconciler) abandonUndone(ctx context.Context, v *pvapi.PackageVariant, up *store.Revision, drafts []store.Revision, published *store.Revision) ([]store.Revision, error) {
	if published == nil || published.Lock == nil || !published.Lock.Matches(*up) || r.draftUpgradePolicy(ctx, v) != "" {
		return drafts, nil
	}
	kept := drafts[:0:0]
	for _, d := range drafts {
		last := v.Target(d.Name).LastWrite
		if d.Lifecycle != store.Draft || d.Lock == nil || d.Lock.Matches(*up) || v.Target(d.Name).Rejected() || last == "" || strings.HasPrefix(last, pvapi.LegacyCreated) {
			kept = append(kept, d)
			continue
		}
		res, err := r.porch().GetResources(ctx, d.Namespace, d.Name)
		if err != nil {
			return nil, settledOutcome(ctx, err)
		}
		if variant.Fingerprint(res.Files) != last {
			kept = append(kept, d)
			continue
		}
		err = r.porch().Delete(ctx, d.Namespace, d.Name)
		if errors.Is(err, kit.ErrRemovalHeld) {
			r.events().Normal(v, EventDraftAbandoned, "draft %s, made towards %s %s, which the variant no longer asks for, is upgraded back in place instead of deleted: %v", d.Name, d.Lock.Package, d.Lock.Ref, err)
			kept = append(kept, d)
			continue
		} else if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("deleting draft %s, made towards %s %s, which the variant no longer asks for: %w", d.Name, d.Lock.Package, d.Lock.Ref, err)
		}
		r.porch().ForgetDraft(string(v.UID), d.Name)
		ctrl.LoggerFrom(ctx).Info("deleted a draft made towards an upstream the variant no longer asks for", "revision", d.Name)
		r.events().Normal(v, EventDraftAbandoned, "deleted draft %s, made towards %s %s, which the variant no longer asks for: %s is at %s already, and the draft held nothing but pvkit's own write",
			d.Name, d.Lock.Package, d.Lock.Ref, published.Name, store.LockFor(*up).Ref)
	}
	return kept, nil
}
