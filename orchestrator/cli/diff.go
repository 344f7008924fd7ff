package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/spf13/cobra"
)

func diffCommand(ctx context.Context, o *Options) *cobra.Command {
	var against string
	c := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show a package revision's diff against its upstream, its package's latest published revision, or any revision",
		Example: `  pvctl diff edge-useast1.app.packagevariant-1                     # what the variant changed in the upstream
  pvctl diff edge-useast1.app.packagevariant-2 --against published  # what approving it would change
  pvctl diff blueprints.app.v2 --against blueprints.app.v1          # what changed between two revisions`,
		Args:              args(1, 1, "diff needs one package revision name"),
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			s, rev, err := openRevision(o, a[0])
			if err != nil {
				return err
			}
			var base store.Revision
			switch against {
			case "upstream":
				if rev.Lock == nil {
					return fmt.Errorf("package revision %s has no upstream", rev.Name)
				}
				if base, err = lockedRevision(s, o.Namespace, rev); err != nil {
					return err
				}
			case "published":
				found := false
				for _, r := range s.All(o.Namespace) {
					if r.Key() == rev.Key() && r.Lifecycle.IsPublished() && r.Name != rev.Name && (!found || r.Revision > base.Revision) {
						base, found = r, true
					}
				}
				if !found {
					return fmt.Errorf("package %s of %s has no other published revision", rev.Package, rev.Repository)
				}
			default:
				if base, err = revision(s, o.Namespace, against); err != nil {
					return usageErr("--against must be upstream, published or a package revision: %v", err)
				}
			}
			from, err := s.GetResources(ctx, o.Namespace, base.Name)
			if err != nil {
				return err
			}
			to, err := s.GetResources(ctx, o.Namespace, rev.Name)
			if err != nil {
				return err
			}
			tmp, err := os.MkdirTemp("", "pvctl-diff-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			d, err := local.UnifiedDiff(tmp, base.Name, rev.Name, from.Files, to.Files)
			if err != nil {
				return err
			}
			if d == "" {
				fmt.Fprintf(o.Stdout, "%s and %s have the same files\n", base.Name, rev.Name)
				return nil
			}
			fmt.Fprintf(o.Stdout, "# %s -> %s\n%s", base.Name, rev.Name, d)
			return errDiffers // exit 1, as kubectl diff and diff(1) do
		},
	}
	c.Flags().StringVar(&against, "against", "upstream", "upstream (the revision its lock names), published (its package's latest other published revision), or the name of any package revision")
	completeFlag(c, "against", func() []string {
		out := []string{"upstream", "published"}
		if s, err := openRepos(o.Repos, o.Namespace, false, nil); err == nil {
			for _, r := range s.All(o.Namespace) {
				out = append(out, r.Name)
			}
		}
		return out
	})
	return c
}

// lockedRevision is the upstream revision a revision's lock names.
func lockedRevision(s *local.Repos, namespace string, rev store.Revision) (store.Revision, error) {
	for _, r := range s.All(namespace) {
		if rev.Lock.Matches(r) {
			return r, nil
		}
	}
	return store.Revision{}, fmt.Errorf("package revision %s: its upstream %s %s is not in the repositories", rev.Name, rev.Lock.Package, rev.Lock.Ref)
}
