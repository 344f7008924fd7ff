package cli

import (
	"context"
	"fmt"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/spf13/cobra"
)

// pushCommand writes a directory's files into a draft, as porchctl rpkg
// push does: the way to make a local edit (pull, edit, push) that later
// upgrades keep.
func pushCommand(ctx context.Context, o *Options) *cobra.Command {
	var rf renderFlags
	c := &cobra.Command{
		Use:               "push NAME DIR",
		Short:             "Replace a draft package revision's files with a directory's (pull, edit, push)",
		Example:           "  pvctl pull edge-useast1.app.packagevariant-1 app && $EDITOR app/deployment.yaml && pvctl push edge-useast1.app.packagevariant-1 app",
		Args:              args(2, 2, "push needs a package revision name and a directory"),
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			files, err := readDir(a[1])
			if err != nil {
				return err
			}
			if _, ok := files[kptfile.FileName]; !ok {
				return usageErr("%s holds no Kptfile: a package needs one", a[1])
			}
			release, err := lockRepos(o.Repos, "push", false)
			if err != nil {
				return err
			}
			defer release()
			s, rev, err := openRevision(o, a[0])
			if err != nil {
				return err
			}
			// Porch renders every push: the draft holds the rendered
			// package, and one that does not render is refused.
			rd, err := rf.options()
			if err != nil {
				return err
			}
			s.RenderWith(ctx, rd)
			if rev.Lifecycle != store.Draft {
				return fmt.Errorf("package revision %s is %s; only a Draft can be pushed to (porchctl's rule)", rev.Name, rev.Lifecycle)
			}
			res, err := s.GetResources(ctx, o.Namespace, rev.Name)
			if err != nil {
				return err
			}
			if sameFiles(res.Files, files) {
				fmt.Fprintf(o.Stdout, "%s is unchanged: %s holds its files\n", rev.Name, a[1])
				return nil
			}
			if err := s.PushFiles(ctx, o.Namespace, rev.Name, store.Resources{Files: files, ResourceVersion: res.ResourceVersion}); err != nil {
				return err
			}
			fmt.Fprintf(o.Stdout, "pushed %s into %s (%d files)\n", a[1], rev.Name, len(files))
			return nil
		},
	}
	rf.add(c)
	c.Flags().Lookup("no-render").Usage = "push the files as they are, unrendered (Porch renders every push)"
	return c
}
