package soak

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// churn is what happens between two rounds: the controller's faults and
// restarts, new upstream revisions, a person's approvals, rejections and
// edits, commits on branches and their undoing, variants deleted; and the
// store's hygiene (old revisions removed, as a long-lived Porch's
// repositories are pruned), so that memory measures pvkit, not the store.
// Every draw is made in an order sorted by name: a seed replays.
func (s *soak) churn() {
	ctx := context.Background()
	s.store.lose = s.round > 3 // the fleet is made before the faults start
	if s.round%25 == 0 {
		s.start() // a restart: nothing remembered
		s.restarts++
	}
	if s.round%15 == 0 {
		s.upstreams++
		s.store.Publish(ns, "blueprints", "app", storetest.Release(s.upstreams))
	}
	owner := s.owners()
	revs := s.store.All(ns)
	sort.Slice(revs, func(i, j int) bool { return revs[i].Name < revs[j].Name })
	s.forgetGone(revs)
	for _, r := range revs {
		if r.Repository == "blueprints" || r.Placeholder {
			continue
		}
		if _, ok := s.seen[r.Name]; !ok && !r.Lifecycle.IsPublished() {
			s.seen[r.Name] = s.round
		} else if r.Lifecycle.IsPublished() { // a name a later draft may have again
			delete(s.seen, r.Name)
			delete(s.edited, r.Name)
		}
		manual := strings.HasPrefix(owner[r.Name], "manual-")
		switch r.Lifecycle {
		case store.Draft:
			files := s.store.Files(ns, r.Name)
			switch {
			case !manual && s.edited[r.Name] == 0 && s.rng.Intn(25) == 0: // a person's edit
				files["person.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: person\n"
				s.store.SetFiles(ns, r.Name, files)
				s.edited[r.Name] = s.round
			case (manual || s.edited[r.Name] > 0) && gateTrue(files) && s.rng.Intn(3) == 0: // a person proposes
				s.setLifecycle(ctx, r, store.Proposed)
			}
		case store.Proposed:
			switch n := s.rng.Intn(10); {
			case n < 5: // a person approves
				if rev, err := s.store.Approve(ns, r.Name); err == nil {
					s.store.placeholder(rev)
				}
			case n == 5: // a person rejects
				s.setLifecycle(ctx, r, store.Draft)
			}
		}
	}
	s.branches(revs)
	s.deleteSome(ctx)
	s.prune(ctx, revs)
}

// forgetGone forgets the drafts no longer listed (their variant deleted
// them, or the store was pruned): a later draft may have the name again,
// and is new (seed 3 over 100 variants took a draft made in round 180 for
// its namesake of round 120, deleted with its variant, and reported it
// unapproved for 60 rounds).
func (s *soak) forgetGone(revs []store.Revision) {
	listed := map[string]bool{}
	for _, r := range revs {
		listed[r.Name] = true
	}
	for _, m := range []map[string]int{s.seen, s.edited} {
		maps.DeleteFunc(m, func(name string, _ int) bool { return !listed[name] })
	}
}

// setLifecycle moves a revision as a person does (porchctl propose,
// reject).
func (s *soak) setLifecycle(ctx context.Context, r store.Revision, lc store.Lifecycle) {
	r.Lifecycle, r.ResourceVersion = lc, ""
	if err := s.store.Update(ctx, r); err != nil {
		s.t.Fatalf("round %d: moving %s to %s: %v", s.round, r.Name, lc, err)
	}
}

// branches commits behind Porch's back to a fiftieth of the branches, and
// undoes a fifth of the commits made.
func (s *soak) branches(revs []store.Revision) {
	newest := map[string]store.Revision{}
	for _, r := range revs {
		if r.Repository != "blueprints" && !r.Placeholder && r.Lifecycle == store.Published {
			if n, ok := newest[r.Repository]; !ok || r.Revision > n.Revision {
				newest[r.Repository] = r
			}
		}
	}
	for _, repo := range slices.Sorted(maps.Keys(newest)) {
		pub := newest[repo]
		switch n := s.rng.Intn(50); {
		case n == 0: // a commit on the branch
			files := s.store.Files(ns, pub.Name)
			files["hotfix.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hotfix\n"
			s.store.SetPlaceholder(store.Revision{Namespace: ns, Repository: repo, Package: pub.Package, Workspace: "main", Revision: -1,
				Lifecycle: store.Published, Lock: pub.Lock, Name: store.RevisionName(repo, pub.Package, "main")}, files)
		case n < 10: // undone (or a no-op where nothing was committed)
			s.store.placeholder(pub)
		}
	}
}

// deleteSome deletes a hundredth of the variants (their set makes them
// again) and, once one is gone, removes its package from the store (its
// cluster decommissioned and made again: the new variant clones afresh).
func (s *soak) deleteSome(ctx context.Context) {
	for _, v := range s.variants() {
		if !v.DeletionTimestamp.IsZero() || s.rng.Intn(100) != 0 {
			continue
		}
		if err := client.IgnoreNotFound(s.client.Delete(ctx, &v)); err != nil {
			s.t.Fatalf("round %d: deleting %s: %v", s.round, v.Name, err)
		}
		s.gone = append(s.gone, v.Spec.Downstream.Repo)
		s.made++
	}
}

// prune removes what a long-lived Porch's repositories would have pruned:
// published revisions but the newest two of each package, upstream
// revisions but the newest three, and the packages of deleted variants.
func (s *soak) prune(ctx context.Context, revs []store.Revision) {
	live := map[string]bool{}
	for _, v := range s.variants() {
		live[v.Spec.Downstream.Repo] = true
	}
	var keep []string
	for _, repo := range s.gone {
		if live[repo] {
			keep = append(keep, repo) // still deleting: next round
			continue
		}
		for _, r := range revs {
			if r.Repository == repo {
				s.remove(ctx, r)
			}
		}
	}
	s.gone = keep
	byPkg := map[string][]store.Revision{}
	for _, r := range revs {
		if r.Lifecycle.IsPublished() && !r.Placeholder {
			byPkg[r.Repository] = append(byPkg[r.Repository], r)
		}
	}
	keepN := map[bool]int{true: 3, false: 2}
	for _, pkg := range slices.Sorted(maps.Keys(byPkg)) {
		rs := byPkg[pkg]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Revision > rs[j].Revision })
		for i, r := range rs {
			if i >= keepN[pkg == "blueprints"] {
				s.remove(ctx, r)
			}
		}
	}
}

// remove deletes a revision as Porch does (a published one's deletion
// proposed first).
func (s *soak) remove(ctx context.Context, r store.Revision) {
	if r.Lifecycle == store.Published {
		r.Lifecycle, r.ResourceVersion = store.DeletionProposed, ""
		_ = s.store.Update(ctx, r)
	}
	_ = s.store.Delete(ctx, ns, r.Name)
	delete(s.seen, r.Name)
	delete(s.edited, r.Name)
}

// owners is the set each revision's owning variant belongs to, by
// revision name.
func (s *soak) owners() map[string]string {
	bySet := map[string]string{}
	for _, v := range s.variants() {
		for _, o := range v.OwnerReferences {
			if o.Kind == "PackageVariantSet" {
				bySet[string(v.UID)] = o.Name
			}
		}
	}
	out := map[string]string{}
	for _, r := range s.store.All(ns) {
		for _, o := range r.Owners {
			if set, ok := bySet[o.UID]; ok {
				out[r.Name] = set
			}
		}
	}
	return out
}
