package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// getFlags are pvctl get's options.
type getFlags struct {
	repo, pkg, workspace, output, selector string
	lifecycles                             []string
	watch                                  bool
}

// lifecycles are the lifecycles --lifecycle takes (and Unreadable, a
// revision whose ref cannot be read).
var lifecycles = []store.Lifecycle{store.Draft, store.Proposed, store.Published, store.DeletionProposed, Unreadable}

func getCommand(ctx context.Context, o *Options) *cobra.Command {
	g := &getFlags{}
	c := &cobra.Command{
		Use:   "get [NAME...]",
		Short: "List the package revisions of the local repositories, as porchctl rpkg get does",
		Example: `  pvctl get
  pvctl get --repo edge-useast1 -o wide
  pvctl get -l env=prod
  pvctl get --lifecycle Draft,Proposed -o name          # what waits for a person
  pvctl get -w                                          # then each revision again when it changes
  pvctl get edge-useast1.app.packagevariant-1 -o yaml    # one name: the PackageRevision itself`,
		Args:              args(0, -1, ""),
		ValidArgsFunction: revisionNames(o),
		RunE:              func(_ *cobra.Command, a []string) error { return g.run(ctx, o, a) },
	}
	c.Flags().StringVarP(&g.selector, "selector", "l", "", "only revisions whose labels match this selector (env=prod,tier!=canary)")
	c.Flags().StringVar(&g.repo, "repo", "", "only this repository's revisions")
	c.Flags().StringVar(&g.pkg, "package", "", "only this package's revisions")
	c.Flags().StringVar(&g.workspace, "workspace", "", "only revisions of this workspace")
	c.Flags().StringSliceVar(&g.lifecycles, "lifecycle", nil, "only revisions in these lifecycles (Draft, Proposed, Published, DeletionProposed, Unreadable; comma-separated or repeated)")
	c.Flags().BoolVarP(&g.watch, "watch", "w", false, "after the list, print each revision again when it is new or changes, until interrupted")
	outputFlag(c, &g.output, listOutputs, "the revisions (json and yaml: a PackageRevisionList; one name: the PackageRevision)")
	completeFlag(c, "lifecycle", func() []string {
		out := make([]string, len(lifecycles))
		for i, l := range lifecycles {
			out[i] = string(l)
		}
		return out
	})
	completeFlag(c, "repo", func() []string { return repoNames(o) })
	completeFlag(c, "package", func() []string { return packageNames(o) })
	return c
}

// lifecycleSet reads --lifecycle: each value one of lifecycles, in any
// case.
func lifecycleSet(values []string) (map[store.Lifecycle]bool, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[store.Lifecycle]bool{}
	for _, v := range values {
		i := slices.IndexFunc(lifecycles, func(l store.Lifecycle) bool { return strings.EqualFold(string(l), strings.TrimSpace(v)) })
		if i < 0 {
			names := make([]string, len(lifecycles))
			for j, l := range lifecycles {
				names[j] = string(l)
			}
			return nil, usageErr("--lifecycle %q: want %s", v, strings.Join(names, ", "))
		}
		out[lifecycles[i]] = true
	}
	return out, nil
}

// run lists the revisions the names and flags select; each name not found
// is an error, as kubectl reports it, and the others are printed. With
// -w it then prints each revision that is new or changed, until ctx ends.
func (g *getFlags) run(ctx context.Context, o *Options, names []string) error {
	if err := checkOutput(g.output, listOutputs); err != nil {
		return err
	}
	sel, err := labels.Parse(g.selector)
	if err != nil {
		return usageErr("-l: %v", err)
	}
	only, err := lifecycleSet(g.lifecycles)
	if err != nil {
		return err
	}
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		return err
	}
	for i := range names {
		names[i] = revisionArg(names[i])
	}
	revs, missing := g.selected(s, o.Namespace, names, sel, only)
	if len(revs) == 0 && len(names) == 0 && (g.output == "table" || g.output == "wide") && !g.watch {
		fmt.Fprintf(o.Stderr, "No resources found in %s namespace.\n", o.Namespace)
		return nil
	}
	if len(names) == 1 && len(revs) == 1 && (g.output == "yaml" || g.output == "json") {
		err = printRevision(o.Stdout, revs[0], s.All(o.Namespace), g.output)
	} else if len(revs) > 0 || document(g.output) {
		err = printRevisions(o.Stdout, revs, s.All(o.Namespace), g.output, true)
	}
	if err != nil {
		return err
	}
	for _, n := range missing {
		fmt.Fprintf(o.Stderr, "pvctl get: package revision %s: not found\n", n)
	}
	if len(missing) > 0 {
		return &reportedError{fmt.Sprintf("%d of %d not found", len(missing), len(names))}
	}
	if !g.watch {
		return nil
	}
	return watch(ctx, revs, func(r store.Revision) string { return r.Name }, func(r store.Revision) string { return asJSON(r) }, func() ([]store.Revision, error) {
		if s, err = openRepos(o.Repos, o.Namespace, false, nil); err != nil {
			return nil, err
		}
		revs, _ := g.selected(s, o.Namespace, names, sel, only)
		return revs, nil
	}, func(changed []store.Revision) error {
		if document(g.output) {
			for i, r := range changed {
				if i > 0 && g.output == outYAML {
					fmt.Fprintln(o.Stdout, "---")
				}
				if err := printRevision(o.Stdout, r, s.All(o.Namespace), g.output); err != nil {
					return err
				}
			}
			return nil
		}
		return printRevisions(o.Stdout, changed, s.All(o.Namespace), g.output, false)
	})
}

// selected are the revisions names and flags select, sorted, and the names
// not found. A revision whose ref cannot be read is listed too, as
// Unreadable (its error is a warning), so that it can be found and
// deleted; yaml and json hold PackageRevisions only.
func (g *getFlags) selected(s *local.Repos, namespace string, names []string, sel labels.Selector, only map[store.Lifecycle]bool) (revs []store.Revision, missing []string) {
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	latest := latestRevisions(s.All(namespace))
	// The selector matches the labels as -o yaml shows them: Porch's
	// latest-revision label included.
	match := func(r store.Revision) bool {
		return (len(names) == 0 || named[r.Name]) && (g.repo == "" || r.Repository == g.repo) && (g.pkg == "" || r.Package == g.pkg) &&
			(g.workspace == "" || r.Workspace == g.workspace) && sel.Matches(labels.Set(toPorch(r, isLatest(r, latest)).Labels))
	}
	for _, r := range s.All(namespace) {
		if match(r) && (only == nil || only[r.Lifecycle]) {
			revs = append(revs, r)
		}
	}
	if g.output == "table" || g.output == "wide" || g.output == "name" {
		for _, k := range s.Skipped() {
			r := k.Revision
			if r.Name != "" && match(r) && (only == nil || only[Unreadable]) {
				r.Lifecycle = Unreadable
				revs = append(revs, r)
			}
		}
	}
	found := map[string]bool{}
	for _, r := range revs {
		found[r.Name] = true
	}
	for _, n := range names {
		if !found[n] {
			missing = append(missing, n)
		}
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].Name < revs[j].Name })
	return revs, missing
}

// printRevision prints one revision as a PackageRevision (get NAME -o
// yaml|json, as kubectl prints one object).
func printRevision(w io.Writer, r store.Revision, all []store.Revision, output string) error {
	pr := toPorch(r, isLatest(r, latestRevisions(all)))
	pr.APIVersion, pr.Kind = porchapi.SchemeGroupVersion.String(), "PackageRevision"
	return writeDoc(w, pr, output)
}

// printRevisions prints revisions as porchctl does; yaml and json are a
// porch.kpt.dev/v1alpha1 PackageRevisionList; header: the table's header
// line (a watch's later rows have none).
func printRevisions(w io.Writer, revs, all []store.Revision, output string, header bool) error {
	latest := latestRevisions(all)
	switch output {
	case "name":
		for _, r := range revs {
			fmt.Fprintf(w, "packagerevision/%s\n", r.Name)
		}
		return nil
	case "yaml", "json":
		list := porchapi.PackageRevisionList{TypeMeta: metav1.TypeMeta{APIVersion: porchapi.SchemeGroupVersion.String(), Kind: "PackageRevisionList"}}
		for _, r := range revs {
			list.Items = append(list.Items, toPorch(r, isLatest(r, latest)))
		}
		return writeDoc(w, list, output)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "NAME\tPACKAGE\tWORKSPACE\tREVISION\tLATEST\tLIFECYCLE\tREPOSITORY"
	if output == "wide" {
		head += "\tUPSTREAM\tOWNER\tLABELS"
	}
	if header {
		fmt.Fprintln(tw, head)
	}
	for _, r := range revs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\t%s", r.Name, r.Package, r.Workspace, r.Revision, isLatest(r, latest), r.Lifecycle, r.Repository)
		if output == "wide" {
			up, owner := "-", "-"
			if r.Lock != nil {
				up = lockWhere(r.Lock) + ":" + r.Lock.Ref
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

// toPorch is a revision as Porch's API shows it (local.PackageRevision), with
// Porch's latest-revision label on the latest published one.
func toPorch(r store.Revision, latest bool) porchapi.PackageRevision {
	pr := local.PackageRevision(r)
	pr.ResourceVersion = ""
	if latest {
		pr.Labels = store.Overlay(pr.Labels, map[string]string{porchapi.LatestPackageRevisionKey: porchapi.LatestPackageRevisionValue})
	}
	return pr
}

// latestRevisions is each package's highest published revision number.
func latestRevisions(all []store.Revision) map[store.PackageKey]int {
	latest := map[store.PackageKey]int{}
	for _, r := range all {
		if r.Lifecycle.IsPublished() && r.Revision > latest[r.Key()] {
			latest[r.Key()] = r.Revision
		}
	}
	return latest
}

// isLatest: r is its package's latest published revision (Porch's
// kpt.dev/latest-revision label).
func isLatest(r store.Revision, latest map[store.PackageKey]int) bool {
	return r.Lifecycle.IsPublished() && r.Revision > 0 && r.Revision == latest[r.Key()]
}

// lockWhere names a lock's upstream repository: the Repository registered
// for it, else its git URL (no Repository of the files names it: renamed
// or removed), else "(unregistered)".
func lockWhere(l *store.Lock) string {
	switch {
	case l.Repository != "":
		return l.Repository
	case l.URL != "":
		return l.URL
	}
	return "(unregistered)"
}
