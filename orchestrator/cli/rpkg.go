package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/validate"
	"github.com/spf13/cobra"
)

// porchctl rpkg's verbs that make a new draft from a published revision, as
// Nephio's scripts and exercises chain them (copy, pull, edit, push,
// propose, approve):
//   - copy: an edit draft of a published revision, in the same repository
//     and package, in a new workspace (Porch's edit task: the source must be
//     published); the draft has no owner, as porchctl's has none.
//   - clone: a new package in another repository, cloned from a published
//     revision (Porch's clone task; a package that already exists there
//     is refused: its next revisions are copies).
// Both print porchctl's "<name> created".

func copyCommand(ctx context.Context, o *Options) *cobra.Command {
	var workspace string
	c := &cobra.Command{
		Use:               "copy SOURCE_PACKAGE --workspace NAME",
		Short:             "Create a new draft of a package from one of its published revisions (porchctl rpkg copy)",
		Example:           "  pvctl copy edge-useast1.app.packagevariant-1 --workspace edit-1",
		Args:              args(1, 1, "copy needs SOURCE_PACKAGE, the published revision to copy, and --workspace"),
		ValidArgsFunction: revisionNamesIn(o, store.Published),
		RunE: func(_ *cobra.Command, a []string) error {
			return newDraft(ctx, o, "copy", a[0], func(src store.Revision) (store.DraftSpec, error) {
				if workspace == "" {
					return store.DraftSpec{}, usageErr("--workspace is required to specify workspace name")
				}
				return store.DraftSpec{Repository: src.Repository, Package: src.Package, Workspace: workspace,
					Task: store.Task{Type: store.Edit, Source: src.Name}}, nil
			})
		},
	}
	c.Flags().StringVar(&workspace, "workspace", "", "the new draft's workspace (required)")
	return c
}

func cloneCommand(ctx context.Context, o *Options) *cobra.Command {
	var repo, workspace string
	c := &cobra.Command{
		Use:               "clone SOURCE_PACKAGE NAME --repository REPO",
		Short:             "Clone a published revision into a new package of another repository (porchctl rpkg clone)",
		Example:           "  pvctl clone blueprints.app.v1 app-dev --repository edge-useast1",
		Args:              args(2, 2, "clone needs SOURCE_PACKAGE and NAME, and --repository"),
		ValidArgsFunction: revisionNamesIn(o, store.Published),
		RunE: func(_ *cobra.Command, a []string) error {
			pkg := a[1]
			return newDraft(ctx, o, "clone", a[0], func(src store.Revision) (store.DraftSpec, error) {
				switch {
				case repo == "":
					return store.DraftSpec{}, usageErr("--repository is required to specify downstream repository")
				case workspace == "":
					return store.DraftSpec{}, usageErr("--workspace is required to specify downstream workspace name")
				}
				if msg := validate.PackagePath(pkg); msg != "" {
					return store.DraftSpec{}, usageErr("NAME %s", msg)
				}
				return store.DraftSpec{Repository: repo, Package: pkg, Workspace: workspace,
					Task: store.Task{Type: store.Clone, Upstream: src.Name}}, nil
			})
		},
	}
	c.Flags().StringVar(&repo, "repository", "", "the repository to clone into (required)")
	c.Flags().StringVar(&workspace, "workspace", "v1", "the new package's workspace")
	return c
}

// newDraft makes a draft from a published revision: the verb's spec of
// it, checked as Porch checks it, under the writers' lock.
func newDraft(ctx context.Context, o *Options, verb, source string, spec func(store.Revision) (store.DraftSpec, error)) error {
	s, release, err := openLocked(o, verb)
	if err != nil {
		return err
	}
	defer release()
	src, err := revision(s, o.Namespace, source)
	if err != nil {
		return err
	}
	if !src.Lifecycle.IsPublished() {
		return fmt.Errorf("package revision %s is %s: source revision must be published", src.Name, src.Lifecycle)
	}
	ds, err := spec(src)
	if err != nil {
		return err
	}
	if msg := validate.DNS1123Label(ds.Workspace); msg != "" {
		return usageErr("--workspace %s", msg)
	}
	if !s.HasRepository(ds.Repository) {
		return fmt.Errorf("repository %q: not found (pvctl get lists the repositories' revisions)", ds.Repository)
	}
	if verb == "clone" {
		revs, err := s.ListRevisions(ctx, store.PackageKey{Namespace: o.Namespace, Repository: ds.Repository, Package: ds.Package})
		if err != nil {
			return err
		}
		if len(revs) > 0 {
			return fmt.Errorf("`clone` cannot create a new revision for package %q that already exists in repo %q; make subsequent revisions using `copy`", ds.Package, ds.Repository)
		}
	}
	ds.Namespace = o.Namespace
	draft, err := s.CreateDraft(ctx, ds)
	if errors.Is(err, store.ErrAlreadyExists) {
		return fmt.Errorf("package revision %s already exists: choose another --workspace", store.RevisionName(ds.Repository, ds.Package, ds.Workspace))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "%s created\n", draft.Name)
	return nil
}
