package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/packagevariantset"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/upstream"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// upstreamNow is the revision a set's upstream (its group's, for a grouped
// set) resolves to now, read fresh: from the local repositories, or from
// Porch's PackageRevisions on the cluster. A wave's approval names the
// rollout it approves (rule wave-approval): this is what tells a rollout
// that has not started yet from the one the status shows. "" when no
// revision is selected.
func (o *Options) upstreamNow(ctx context.Context, cf clusterFlags, set *pvsapi.PackageVariantSet) (string, error) {
	base := set.Spec.Upstream
	if set.Spec.Group != nil {
		base = set.Spec.Group
	}
	if base == nil {
		return "", nil
	}
	var revs []store.Revision
	if cf.set() {
		c, err := ClusterClient(cf.kubeconfig, cf.context)
		if err != nil {
			return "", err
		}
		var l porchapi.PackageRevisionList
		if err := c.List(ctx, &l, client.InNamespace(o.Namespace)); err != nil {
			return "", fmt.Errorf("listing the package revisions of %s/%s: %w", base.Repo, base.Package, err)
		}
		for i := range l.Items {
			if r := local.RevisionOf(&l.Items[i]); r.Repository == base.Repo && r.Package == base.Package {
				revs = append(revs, r)
			}
		}
	} else {
		s, err := openRepos(o.Repos, o.Namespace, false, io.Discard)
		if err != nil {
			return "", err
		}
		for _, r := range s.All(o.Namespace) {
			if r.Repository == base.Repo && r.Package == base.Package {
				revs = append(revs, r)
			}
		}
	}
	cands := make([]upstream.Candidate, len(revs))
	for i, r := range revs {
		cands[i] = upstream.Candidate{Workspace: r.Workspace, Revision: r.Revision, Lifecycle: r.Lifecycle}
	}
	if i := upstream.Select(*base, cands); i >= 0 {
		return revs[i].Name, nil
	}
	return "", nil
}

// approveWaveChange is rollout approve (rule: wave-approval): the wave
// named, or the open one, approved for the rollout's target, added to the
// annotation's list (entries of other targets dropped); what it says
// names the wave's moved children. It approves the rollout the status
// shows, and only when that is the one the set's upstream resolves to now
// (latest, read fresh; lerr: it could not be read) or WAVE@TARGET names
// it; never while an undo stands, a person's or the rollout's own.
func approveWaveChange(cur map[string]string, a []string, set *pvsapi.PackageVariantSet, latest string, lerr error) (map[string]string, string, error) {
	r := set.Status.Rollout
	named, target := "", ""
	if len(a) > 0 {
		named, target, _ = strings.Cut(a[0], "@")
		a = []string{named}
		if named == "" {
			a = nil
		}
	}
	if t := cur[packagevariantset.RolloutUndoAnnotation]; t != "" {
		return nil, "", fmt.Errorf("packagevariantset %s: the rollout of %s is undone (%s): a wave's approval is never given to an undone release; approve the undo's drafts with pvctl approve, or pvctl rollout resume first and approve its waves then",
			set.Name, t, packagevariantset.RolloutUndoAnnotation)
	}
	if r != nil && r.UndoneOnFailure {
		return nil, "", fmt.Errorf("packagevariantset %s: the rollout of %s undid itself on failure (spec.rollout.onFailure: undo): a wave's approval is never given to an undone release; pvctl rollout resume retries it from wave one, then approve its waves",
			set.Name, r.Target.Name)
	}
	shown := ""
	if r != nil && r.From != nil {
		shown = r.Target.Name
	}
	switch {
	case target != "" && target != shown && target == latest:
		return nil, "", fmt.Errorf("packagevariantset %s: the rollout of %s has not started (the status shows %s): pvctl run first, then approve its waves", set.Name, target, orNone(shown))
	case target != "" && target != shown:
		return nil, "", fmt.Errorf("packagevariantset %s has no rollout of %s (the status shows %s; its upstream resolves to %s)", set.Name, target, orNone(shown), orNone(latest))
	case target == "" && lerr != nil:
		return nil, "", fmt.Errorf("packagevariantset %s: what its upstream resolves to could not be read (%v), so the rollout to approve is not known; name it: pvctl rollout approve %s WAVE@%s", set.Name, lerr, set.Name, orNone(shown))
	case target == "" && latest != "" && latest != shown:
		how := "pvctl run first, then approve its waves"
		if shown != "" {
			how += fmt.Sprintf("; or approve %s's explicitly: pvctl rollout approve %s WAVE@%s", shown, set.Name, shown)
		}
		return nil, "", fmt.Errorf("packagevariantset %s: its upstream resolves to %s, whose rollout has not started (the status shows %s): %s", set.Name, latest, orNone(shown), how)
	case shown == "":
		return nil, "", fmt.Errorf("packagevariantset %s has no rollout to approve a wave of (a set's first revision is not rolled out)", set.Name)
	}
	var wave *v1alpha2.WaveStatus
	var names []string
	for i := range r.Waves {
		names = append(names, r.Waves[i].Name)
		if (len(a) == 0 && r.Waves[i].State == v1alpha2.WaveOpen) || (len(a) > 0 && r.Waves[i].Name == a[0]) {
			wave = &r.Waves[i]
		}
	}
	switch {
	case wave == nil && len(a) > 0:
		return nil, "", fmt.Errorf("packagevariantset %s has no wave %q (its waves: %s)", set.Name, a[0], strings.Join(names, ", "))
	case wave == nil:
		return nil, "", fmt.Errorf("packagevariantset %s has no open wave (%s: %s); name the wave to approve", set.Name, r.Phase, r.Message)
	}
	entries := []string{wave.Name + "@" + r.Target.Name}
	for _, e := range strings.Split(cur[packagevariantset.RolloutApproveAnnotation], ",") {
		if e = strings.TrimSpace(e); strings.HasSuffix(e, "@"+r.Target.Name) && !slices.Contains(entries, e) {
			entries = append(entries, e)
		}
	}
	slices.Sort(entries)
	return map[string]string{packagevariantset.RolloutApproveAnnotation: strings.Join(entries, ",")},
		fmt.Sprintf("approve of wave %s at %s: the finished drafts of its %d children (%d moved so far, and those that move later) are approved, gates True and unedited",
			wave.Name, r.Target.Name, len(wave.Members), wave.Moved), nil
}

// orNone is a revision's name, or "none".
func orNone(name string) string {
	if name == "" {
		return "none"
	}
	return name
}
