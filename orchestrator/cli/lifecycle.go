package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/validate"
	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

var (
	errNotReady    = errors.New("not every set and variant is Ready")
	errWouldChange = errors.New("the run would change something")
	errHeldBack    = errors.New("a removal was held back for want of --prune")
	errDiffers     = errors.New("the revisions differ")
	errStalled     = errors.New("a set or variant is stalled")
)

// lifecycleVerb is one of porchctl's lifecycle commands.
type lifecycleVerb struct {
	name, short, example string
	do                   func(ctx context.Context, s *gitstore.Store, rev store.Revision) (string, error)
}

var lifecycleVerbs = []lifecycleVerb{
	{"propose", "Propose draft package revisions for approval", "  pvctl propose edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *gitstore.Store, rev store.Revision) (string, error) {
			switch rev.Lifecycle {
			case store.Proposed:
				return rev.Name + " is already proposed", nil
			case store.Draft:
				return "proposed " + rev.Name, local.SetLifecycle(ctx, s, rev, store.Proposed)
			}
			return "", fmt.Errorf("package revision %s is %s; only a Draft can be proposed", rev.Name, rev.Lifecycle)
		}},
	{"approve", "Approve package revisions (proposing drafts first); refused while a readiness gate is not True",
		"  pvctl approve edge-useast1.app.packagevariant-1 edge-uswest1.app.packagevariant-1",
		func(ctx context.Context, s *gitstore.Store, rev store.Revision) (string, error) {
			if rev.Lifecycle.IsPublished() {
				return rev.Name + " is already published", nil
			}
			if err := local.CheckReady(ctx, s, rev); err != nil {
				return "", err
			}
			if rev.Lifecycle == store.Draft {
				if err := local.SetLifecycle(ctx, s, rev, store.Proposed); err != nil {
					return "", err
				}
			}
			pub, err := s.Approve(rev.Namespace, rev.Name)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("approved %s: package %s revision %d in %s", rev.Name, pub.Package, pub.Revision, pub.Repository), nil
		}},
	{"reject", "Reject proposed package revisions (back to Draft), or a proposed deletion (back to Published)",
		"  pvctl reject edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *gitstore.Store, rev store.Revision) (string, error) {
			switch rev.Lifecycle {
			case store.Proposed:
				return "rejected " + rev.Name + " (Draft again)", local.SetLifecycle(ctx, s, rev, store.Draft)
			case store.DeletionProposed:
				return "rejected the deletion of " + rev.Name + " (Published again)", local.SetLifecycle(ctx, s, rev, store.Published)
			}
			return "", fmt.Errorf("package revision %s is %s; only a Proposed revision or a proposed deletion can be rejected", rev.Name, rev.Lifecycle)
		}},
	{"del", "Delete Draft, Proposed or DeletionProposed package revisions", "  pvctl del edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *gitstore.Store, rev store.Revision) (string, error) {
			if rev.Lifecycle == store.Published {
				return "", fmt.Errorf("package revision %s is Published: propose its deletion first (pvctl propose-delete %s)", rev.Name, rev.Name)
			}
			return "deleted " + rev.Name, s.Delete(ctx, rev.Namespace, rev.Name)
		}},
	{"propose-delete", "Propose published package revisions for deletion", "  pvctl propose-delete edge-useast1.app.packagevariant-1",
		func(ctx context.Context, s *gitstore.Store, rev store.Revision) (string, error) {
			switch rev.Lifecycle {
			case store.DeletionProposed:
				return rev.Name + " is already proposed for deletion", nil
			case store.Published:
				return "proposed the deletion of " + rev.Name, local.SetLifecycle(ctx, s, rev, store.DeletionProposed)
			}
			return "", fmt.Errorf("package revision %s is %s; only a Published revision can be proposed for deletion", rev.Name, rev.Lifecycle)
		}},
}

func lifecycleCommand(ctx context.Context, o *Options, v lifecycleVerb) *cobra.Command {
	return &cobra.Command{
		Use:               v.name + " NAME...",
		Short:             v.short,
		Example:           v.example,
		Args:              args(1, -1, v.name+" needs the names of the package revisions"),
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, names []string) error {
			s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
			if err != nil {
				return err
			}
			// Each name is acted on and reported, as porchctl and kubectl
			// do: a failure is reported and the next name is still done.
			failed := 0
			for _, name := range names {
				msg, err := lifecycleOne(ctx, o, s, v, name)
				if err != nil {
					failed++
					fmt.Fprintf(o.Stderr, "pvctl %s: %v\n", v.name, err)
					continue
				}
				fmt.Fprintln(o.Stdout, msg)
			}
			if failed > 0 {
				return &reportedError{fmt.Sprintf("%d of %d failed", failed, len(names))}
			}
			return nil
		},
	}
}

// lifecycleOne applies a lifecycle verb to one named revision.
func lifecycleOne(ctx context.Context, o *Options, s *gitstore.Store, v lifecycleVerb, name string) (string, error) {
	rev, err := revision(s, o.Namespace, name)
	if err != nil && v.name == "del" {
		return deleteUnreadable(s, err)
	}
	if err != nil {
		return "", err
	}
	if (v.name == "approve" || v.name == "propose") && !rev.Lifecycle.IsPublished() {
		if err := variantDone(o, rev); err != nil {
			return "", err
		}
	}
	return v.do(ctx, s, rev)
}

// reportedError is a failure whose details were printed already; the
// command says only how many of its names failed.
type reportedError struct{ msg string }

func (e *reportedError) Error() string { return e.msg }

// openRevision opens the repositories and finds one revision by name.
func openRevision(o *Options, name string) (*gitstore.Store, store.Revision, error) {
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		return nil, store.Revision{}, err
	}
	rev, err := revision(s, o.Namespace, name)
	return s, rev, err
}

// variantDone refuses to propose or approve a draft whose PackageVariant
// (in the state file of pvctl run) is not Ready for a reason that means its
// mutation may not have run (MutationFailed, KindNotAllowed, an error): such
// a draft can look finished (cloned, but not specialised) and be published
// by mistake (nephio#615). A stale draft (StaleDraft: its upstream moved
// on) was mutated, and may be approved; a draft no variant of the state
// owns is the user's.
func variantDone(o *Options, rev store.Revision) error {
	st, err := state.Read(filepath.Join(o.Repos, state.File))
	if err != nil {
		return err
	}
	for _, owner := range rev.Owners {
		if owner.Kind != "PackageVariant" {
			continue
		}
		for _, v := range st.Variants {
			if string(v.UID) != owner.UID {
				continue
			}
			c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
			if c == nil || c.Status == metav1.ConditionTrue || c.Reason == pvapi.ReasonStaleDraft {
				return nil
			}
			return fmt.Errorf("package revision %s is not ready: its PackageVariant %s is not Ready (%s: %s), so its mutation may not have run; fix it and run pvctl run until it is Ready",
				rev.Name, v.Name, c.Reason, c.Message)
		}
	}
	return nil
}

// Unreadable is the lifecycle `get` shows for a revision whose ref cannot
// be read (gitstore.Store.Skipped).
const Unreadable store.Lifecycle = "Unreadable"

// revisionArg is a revision name as a command takes it: bare, or in the
// form `get -o name` and kubectl print it (packagerevision/NAME,
// packagerevisions.porch.kpt.dev/NAME), so that their output pipes into
// every verb.
func revisionArg(name string) string {
	if kind, rest, ok := strings.Cut(name, "/"); ok {
		switch kind {
		case "packagerevision", "packagerevisions", "packagerevision.porch.kpt.dev", "packagerevisions.porch.kpt.dev":
			return rest
		}
	}
	return name
}

func revision(s *gitstore.Store, namespace, name string) (store.Revision, error) {
	name = revisionArg(name)
	for _, r := range s.All(namespace) {
		if r.Name == name {
			return r, nil
		}
	}
	if k, ok := unreadable(s, name); ok {
		return store.Revision{}, &unreadableError{k}
	}
	return store.Revision{}, fmt.Errorf("package revision %s: not found (pvctl get lists them)", name)
}

// unreadable finds a revision the store could not read, by name.
func unreadable(s *gitstore.Store, name string) (gitstore.Skip, bool) {
	for _, k := range s.Skipped() {
		if k.Revision.Name == name {
			return k, true
		}
	}
	return gitstore.Skip{}, false
}

// unreadableError: a command named a revision whose ref cannot be read.
type unreadableError struct{ skip gitstore.Skip }

func (e *unreadableError) Error() string {
	how := "pvctl del " + e.skip.Revision.Name + " removes it"
	if e.skip.Revision.Lifecycle.IsPublished() {
		how = "remove its tag with git (git tag -d " + strings.TrimPrefix(e.skip.Ref, "refs/tags/") + " in the repository)"
	}
	return fmt.Sprintf("package revision %s cannot be read (%s: %v); %s", e.skip.Revision.Name, e.skip.Ref, e.skip.Err, how)
}

// deleteUnreadable is `del` of a draft or proposed revision the store
// cannot read: its branch goes.
func deleteUnreadable(s *gitstore.Store, err error) (string, error) {
	var ue *unreadableError
	if !errors.As(err, &ue) || ue.skip.Revision.Lifecycle.IsPublished() {
		return "", err
	}
	k, derr := s.DeleteUnreadable(ue.skip.Revision.Name)
	if derr != nil {
		return "", derr
	}
	return fmt.Sprintf("deleted %s (it could not be read: %v)", k.Revision.Name, k.Err), nil
}

func getCommand(o *Options) *cobra.Command {
	var repo, pkg, workspace, output, selector string
	c := &cobra.Command{
		Use:   "get [NAME...]",
		Short: "List the package revisions of the local repositories, as porchctl rpkg get does",
		Example: `  pvctl get
  pvctl get --repo edge-useast1 -o wide
  pvctl get -l env=prod
  pvctl get edge-useast1.app.packagevariant-1 -o yaml    # one name: the PackageRevision itself`,
		Args:              args(0, -1, ""),
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			switch output {
			case "table", "wide", "yaml", "json", "name":
			default:
				return usageErr("-o must be table, wide, yaml, json or name, not %q", output)
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return usageErr("-l: %v", err)
			}
			s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
			if err != nil {
				return err
			}
			named := map[string]bool{}
			for i := range a {
				a[i] = revisionArg(a[i])
				named[a[i]] = true
			}
			match := func(r store.Revision) bool {
				return (len(a) == 0 || named[r.Name]) && (repo == "" || r.Repository == repo) && (pkg == "" || r.Package == pkg) &&
					(workspace == "" || r.Workspace == workspace) && sel.Matches(labels.Set(r.Labels))
			}
			var revs []store.Revision
			for _, r := range s.All(o.Namespace) {
				if match(r) {
					revs = append(revs, r)
				}
			}
			// A revision whose ref cannot be read is listed too, as
			// Unreadable (its error is the warning above), so that it can
			// be found and deleted; yaml and json hold PackageRevisions only.
			if output == "table" || output == "wide" || output == "name" {
				for _, k := range s.Skipped() {
					r := k.Revision
					if r.Name != "" && match(r) {
						r.Lifecycle = Unreadable
						revs = append(revs, r)
					}
				}
			}
			// Each name not found is an error, as kubectl reports it; the
			// others are printed.
			found := map[string]bool{}
			for _, r := range revs {
				found[r.Name] = true
			}
			var missing []string
			for _, n := range a {
				if !found[n] {
					missing = append(missing, n)
				}
			}
			sort.Slice(revs, func(i, j int) bool { return revs[i].Name < revs[j].Name })
			if len(revs) == 0 && len(a) == 0 && (output == "table" || output == "wide") {
				fmt.Fprintf(o.Stderr, "No resources found in %s namespace.\n", o.Namespace)
				return nil
			}
			if len(a) == 1 && len(revs) == 1 && (output == "yaml" || output == "json") {
				err = printRevision(o.Stdout, revs[0], s.All(o.Namespace), output)
			} else if len(revs) > 0 {
				err = printRevisions(o.Stdout, revs, s.All(o.Namespace), output)
			}
			if err != nil {
				return err
			}
			for _, n := range missing {
				fmt.Fprintf(o.Stderr, "pvctl get: package revision %s: not found\n", n)
			}
			if len(missing) > 0 {
				return &reportedError{fmt.Sprintf("%d of %d not found", len(missing), len(a))}
			}
			return nil
		},
	}
	c.Flags().StringVarP(&selector, "selector", "l", "", "only revisions whose labels match this selector (env=prod,tier!=canary)")
	c.Flags().StringVar(&repo, "repo", "", "only this repository's revisions")
	c.Flags().StringVar(&pkg, "package", "", "only this package's revisions")
	c.Flags().StringVar(&workspace, "workspace", "", "only revisions of this workspace")
	c.Flags().StringVarP(&output, "output", "o", "table", "table, wide, yaml, json or name")
	return c
}

// printRevision prints one revision as a PackageRevision (get NAME -o
// yaml|json, as kubectl prints one object).
func printRevision(w io.Writer, r store.Revision, all []store.Revision, output string) error {
	latest := r.Lifecycle.IsPublished() && r.Revision > 0
	for _, o := range all {
		if o.Key() == r.Key() && o.Lifecycle.IsPublished() && o.Revision > r.Revision {
			latest = false
		}
	}
	pr := toPorch(r, latest)
	pr.APIVersion, pr.Kind = porchapi.SchemeGroupVersion.String(), "PackageRevision"
	return writeDoc(w, pr, output)
}

// printRevisions prints revisions as porchctl does; yaml and json are a
// porch.kpt.dev/v1alpha1 PackageRevisionList.
func printRevisions(w io.Writer, revs, all []store.Revision, output string) error {
	latest := map[store.PackageKey]int{}
	for _, r := range all {
		if r.Lifecycle.IsPublished() && r.Revision > latest[r.Key()] {
			latest[r.Key()] = r.Revision
		}
	}
	switch output {
	case "name":
		for _, r := range revs {
			fmt.Fprintf(w, "packagerevision/%s\n", r.Name)
		}
		return nil
	case "yaml", "json":
		list := porchapi.PackageRevisionList{TypeMeta: metav1.TypeMeta{APIVersion: porchapi.SchemeGroupVersion.String(), Kind: "PackageRevisionList"}}
		for _, r := range revs {
			list.Items = append(list.Items, toPorch(r, r.Lifecycle.IsPublished() && r.Revision == latest[r.Key()]))
		}
		return writeDoc(w, list, output)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "NAME\tPACKAGE\tWORKSPACE\tREVISION\tLATEST\tLIFECYCLE\tREPOSITORY"
	if output == "wide" {
		head += "\tUPSTREAM\tOWNER\tLABELS"
	}
	fmt.Fprintln(tw, head)
	for _, r := range revs {
		isLatest := r.Lifecycle.IsPublished() && r.Revision == latest[r.Key()]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\t%s", r.Name, r.Package, r.Workspace, r.Revision, isLatest, r.Lifecycle, r.Repository)
		if output == "wide" {
			up, owner := "-", "-"
			if r.Lock != nil {
				up = r.Lock.Repository + ":" + r.Lock.Ref
			}
			var owners, labels []string
			for _, o := range r.Owners {
				owners = append(owners, o.Kind+"/"+o.Name)
			}
			if len(owners) > 0 {
				owner = strings.Join(owners, ",")
			}
			for _, k := range krm.SortedKeys(r.Labels) {
				labels = append(labels, k+"="+r.Labels[k])
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s", up, owner, strings.Join(labels, ","))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// toPorch is a revision as Porch's API shows it (porch.ToAPI), with
// Porch's latest-revision label on the latest published one.
func toPorch(r store.Revision, latest bool) porchapi.PackageRevision {
	pr := porch.ToAPI(r)
	pr.ResourceVersion = ""
	if latest {
		pr.Labels = overlay(pr.Labels, map[string]string{porchapi.LatestPackageRevisionKey: porchapi.LatestPackageRevisionValue})
	}
	return pr
}

func overlay(base, add map[string]string) map[string]string {
	out := make(map[string]string, len(base)+len(add))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// pushCommand writes a directory's files into a draft, as porchctl rpkg
// push does: the way to make a local edit (pull, edit, push) that later
// upgrades keep.
func pushCommand(ctx context.Context, o *Options) *cobra.Command {
	return &cobra.Command{
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
			s, rev, err := openRevision(o, a[0])
			if err != nil {
				return err
			}
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
}

func diffCommand(ctx context.Context, o *Options) *cobra.Command {
	var against string
	c := &cobra.Command{
		Use:   "diff NAME",
		Short: "Show a package revision's diff against its upstream, or against its package's latest published revision",
		Example: `  pvctl diff edge-useast1.app.packagevariant-1                     # what the variant changed in the upstream
  pvctl diff edge-useast1.app.packagevariant-2 --against published  # what approving it would change`,
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
				return usageErr("--against must be upstream or published, not %q", against)
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
			d, err := local.UnifiedDiff(tmp, "package", from.Files, to.Files)
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
	c.Flags().StringVar(&against, "against", "upstream", "upstream (the revision its lock names) or published (its package's latest other published revision)")
	return c
}

// lockedRevision is the upstream revision a revision's lock names.
func lockedRevision(s *gitstore.Store, namespace string, rev store.Revision) (store.Revision, error) {
	for _, r := range s.All(namespace) {
		if rev.Lock.Matches(r) {
			return r, nil
		}
	}
	return store.Revision{}, fmt.Errorf("package revision %s: its upstream %s %s is not in the repositories", rev.Name, rev.Lock.Package, rev.Lock.Ref)
}

func pullCommand(ctx context.Context, o *Options) *cobra.Command {
	return &cobra.Command{
		Use:               "pull NAME DIR|-",
		Short:             "Write a package revision's files into a new or empty directory, or as a ResourceList to standard output (-)",
		Example:           "  pvctl pull edge-useast1.app.packagevariant-1 ./app && kpt fn render ./app",
		Args:              args(2, 2, "pull needs a package revision name and a directory"),
		ValidArgsFunction: revisionNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			s, rev, err := openRevision(o, a[0])
			if err != nil {
				return err
			}
			if a[1] == "-" { // as porchctl rpkg pull without a directory
				res, err := s.GetResources(ctx, o.Namespace, rev.Name)
				if err != nil {
					return err
				}
				return writeResourceList(o.Stdout, res.Files)
			}
			if entries, err := os.ReadDir(a[1]); err == nil && len(entries) > 0 {
				return usageErr("%s is not empty", a[1])
			}
			res, err := s.GetResources(ctx, o.Namespace, rev.Name)
			if err != nil {
				return err
			}
			// Every name is checked before anything is written: a file
			// under ".git" would make the directory a repository whose
			// configuration runs commands on `git status`.
			names := make([]string, 0, len(res.Files))
			for name := range res.Files {
				if msg := validate.FilePath(name); msg != "" {
					return fmt.Errorf("package revision %s: file path %s; nothing was written", rev.Name, msg)
				}
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				content := res.Files[name]
				p := filepath.Join(a[1], filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					return err
				}
			}
			fmt.Fprintf(o.Stdout, "pulled %s into %s (%d files)\n", rev.Name, a[1], len(res.Files))
			return nil
		},
	}
}

// sameFiles reports whether two packages hold the same files with the same
// content.
func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// writeResourceList writes a package's resource files as a ResourceList, as
// porchctl rpkg pull does without a directory: every object annotated with
// its file and index (the input kpt fn eval and source/sink functions read).
func writeResourceList(w io.Writer, files map[string]string) error {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return err
	}
	return kio.ByteWriter{Writer: w, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind,
		WrappingAPIVersion: kio.ResourceListAPIVersion}.Write(items)
}
