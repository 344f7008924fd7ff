package local

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/pvkit/pvkit/orchestrator/approval"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariant/observe"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/tasks"
)

// journal is a store that records every change it passes on, as lines for
// the report: what pvctl run did to the repositories.
type journal struct {
	store.Store
	pruner   *pruner
	progress Progress
	mu       sync.Mutex
	changes  []string
}

func (j *journal) note(format string, a ...any) {
	line := fmt.Sprintf(format, a...)
	j.mu.Lock()
	if n := len(j.changes); n > 0 && j.changes[n-1] == line && strings.HasPrefix(line, "updated the resources of ") {
		// The same draft written again at once: the provenance record
		// rewritten for the rendered files (rule provenance-record). One change.
		j.mu.Unlock()
		return
	}
	j.changes = append(j.changes, line)
	j.mu.Unlock()
	if j.progress != nil {
		j.progress.Change(line)
	}
}

// Changes returns the changes so far.
func (j *journal) Changes() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.changes...)
}

func (j *journal) CreateDraft(ctx context.Context, spec store.DraftSpec) (store.Revision, error) {
	rev, err := j.Store.CreateDraft(ctx, spec)
	if err == nil {
		what := map[store.TaskType]string{store.Clone: "clone of " + spec.Task.Upstream, store.Edit: "edit of " + spec.Task.Source,
			store.Upgrade: "upgrade of " + spec.Task.Local + " to " + spec.Task.NewUpstream}[spec.Task.Type]
		if why := spec.Annotations[observe.DriftResolutionAnnotation]; why != "" {
			what += "; the drift policy's " + why
		}
		j.note("created draft %s (%s)", rev.Name, what)
	}
	return rev, err
}

func (j *journal) Update(ctx context.Context, rev store.Revision) error {
	if rev.Lifecycle == store.DeletionProposed {
		if err := j.pruner.hold("package revision %s (proposing its deletion)", rev.Name); err != nil {
			return err
		}
	}
	what := fmt.Sprintf("updated %s (%s)", rev.Name, rev.Lifecycle)
	if gs, ok := j.Store.(allLister); ok {
		// A revision proposed for deletion and then released by its
		// variant is two updates of the same lifecycle: say what the
		// second one does.
		cur, err := find(gs, rev.Namespace, rev.Name)
		switch {
		case err != nil:
		case cur.Lifecycle == rev.Lifecycle && len(rev.Owners) < len(cur.Owners):
			what = fmt.Sprintf("released %s (%s; no longer owned)", rev.Name, rev.Lifecycle)
		case cur.Lifecycle == store.Draft && rev.Lifecycle == store.Proposed:
			what = fmt.Sprintf("proposed %s", rev.Name) // approval by policy's first step
		}
	}
	err := j.Store.Update(ctx, rev)
	if err == nil {
		j.note("%s", what)
	}
	return err
}

func (j *journal) Delete(ctx context.Context, namespace, name string) error {
	if err := j.pruner.hold("package revision %s", name); err != nil {
		return err
	}
	err := j.Store.Delete(ctx, namespace, name)
	if err == nil {
		j.note("deleted %s", name)
	}
	return err
}

func (j *journal) UpdateResourcesRendered(ctx context.Context, namespace, name string, res store.Resources) (store.RenderStatus, store.Resources, error) {
	what := j.resourcesChange(namespace, name, res.Files)
	rs, after, err := j.Store.UpdateResourcesRendered(ctx, namespace, name, res)
	if err == nil {
		j.note("%s", what)
	}
	return rs, after, err
}

// ApproveRevision records an approval by policy, naming the policy the
// revision asked for, or the wave's approval when it asked for none.
func (j *journal) ApproveRevision(ctx context.Context, namespace, name string) (store.Revision, error) {
	pub, err := j.Store.ApproveRevision(ctx, namespace, name)
	if err == nil {
		if policy := pub.Annotations[approval.PolicyAnnotation]; policy != "" {
			j.note("approved %s: revision %d of %s (%s: %s)", name, pub.Revision, pub.Package, approval.PolicyAnnotation, policy)
		} else {
			j.note("approved %s: revision %d of %s (a wave's approval, spec.approval)", name, pub.Revision, pub.Package)
		}
	}
	return pub, err
}

// resourcesChange says what a write of a revision's files does: an update,
// or an in-place upgrade when it moves the Kptfile's upstream lock (rule:
// draft-upgrade).
func (j *journal) resourcesChange(namespace, name string, files map[string]string) string {
	if gs, ok := j.Store.(allLister); ok {
		if cur, err := find(gs, namespace, name); err == nil && cur.Lock != nil {
			if next, err := tasks.LockOf(files); err == nil && next != nil && next.Ref != cur.Lock.Ref {
				return fmt.Sprintf("upgraded %s in place from %s to %s", name, cur.Lock.Ref, next.Ref)
			}
		}
	}
	return fmt.Sprintf("updated the resources of %s", name)
}
