package cli

import (
	"fmt"
	"io"
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
}

func getCommand(o *Options) *cobra.Command {
	g := &getFlags{}
	c := &cobra.Command{
		Use:   "get [NAME...]",
		Short: "List the package revisions of the local repositories, as porchctl rpkg get does",
		Example: `  pvctl get
  pvctl get --repo edge-useast1 -o wide
  pvctl get -l env=prod
  pvctl get edge-useast1.app.packagevariant-1 -o yaml    # one name: the PackageRevision itself`,
		Args:              args(0, -1, ""),
		ValidArgsFunction: revisionNames(o),
		RunE:              func(_ *cobra.Command, a []string) error { return g.run(o, a) },
	}
	c.Flags().StringVarP(&g.selector, "selector", "l", "", "only revisions whose labels match this selector (env=prod,tier!=canary)")
	c.Flags().StringVar(&g.repo, "repo", "", "only this repository's revisions")
	c.Flags().StringVar(&g.pkg, "package", "", "only this package's revisions")
	c.Flags().StringVar(&g.workspace, "workspace", "", "only revisions of this workspace")
	c.Flags().StringVarP(&g.output, "output", "o", "table", "table, wide, yaml, json or name")
	return c
}

// run lists the revisions the names and flags select; each name not found
// is an error, as kubectl reports it, and the others are printed.
func (g *getFlags) run(o *Options, names []string) error {
	switch g.output {
	case "table", "wide", "yaml", "json", "name":
	default:
		return usageErr("-o must be table, wide, yaml, json or name, not %q", g.output)
	}
	sel, err := labels.Parse(g.selector)
	if err != nil {
		return usageErr("-l: %v", err)
	}
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		return err
	}
	for i := range names {
		names[i] = revisionArg(names[i])
	}
	revs, missing := g.selected(s, o.Namespace, names, sel)
	if len(revs) == 0 && len(names) == 0 && (g.output == "table" || g.output == "wide") {
		fmt.Fprintf(o.Stderr, "No resources found in %s namespace.\n", o.Namespace)
		return nil
	}
	if len(names) == 1 && len(revs) == 1 && (g.output == "yaml" || g.output == "json") {
		err = printRevision(o.Stdout, revs[0], s.All(o.Namespace), g.output)
	} else if len(revs) > 0 {
		err = printRevisions(o.Stdout, revs, s.All(o.Namespace), g.output)
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
	return nil
}

// selected are the revisions names and flags select, sorted, and the names
// not found. A revision whose ref cannot be read is listed too, as
// Unreadable (its error is a warning), so that it can be found and
// deleted; yaml and json hold PackageRevisions only.
func (g *getFlags) selected(s *local.Repos, namespace string, names []string, sel labels.Selector) (revs []store.Revision, missing []string) {
	named := map[string]bool{}
	for _, n := range names {
		named[n] = true
	}
	latest := latestRevisions(s.All(namespace))
	// The selector matches the labels as -o yaml shows them: Porch's
	// latest-revision label included (issue 31 #5).
	match := func(r store.Revision) bool {
		return (len(names) == 0 || named[r.Name]) && (g.repo == "" || r.Repository == g.repo) && (g.pkg == "" || r.Package == g.pkg) &&
			(g.workspace == "" || r.Workspace == g.workspace) && sel.Matches(labels.Set(toPorch(r, isLatest(r, latest)).Labels))
	}
	for _, r := range s.All(namespace) {
		if match(r) {
			revs = append(revs, r)
		}
	}
	if g.output == "table" || g.output == "wide" || g.output == "name" {
		for _, k := range s.Skipped() {
			r := k.Revision
			if r.Name != "" && match(r) {
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
// porch.kpt.dev/v1alpha1 PackageRevisionList.
func printRevisions(w io.Writer, revs, all []store.Revision, output string) error {
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
	fmt.Fprintln(tw, head)
	for _, r := range revs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%t\t%s\t%s", r.Name, r.Package, r.Workspace, r.Revision, isLatest(r, latest), r.Lifecycle, r.Repository)
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
