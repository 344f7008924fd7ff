package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusCommand is `pvctl status [KIND/NAME]`, after kubectl describe and
// flux get: the sets and variants of the last run (the state file), or one
// of them in detail: its conditions, its downstream revisions with their
// lifecycle and readiness gates, the render status of its last write, a
// set's children and target failures, and its events. With --kubeconfig
// (or --context) it reads the same from a cluster: the PackageVariants,
// PackageVariantSets, PackageRevisions and Events of the namespace. It
// reads; it reconciles nothing.
func statusCommand(ctx context.Context, o *Options) *cobra.Command {
	var output string
	var cf clusterFlags
	c := &cobra.Command{
		Use:   "status [KIND/NAME]",
		Short: "Show the sets and variants of the last run (or of a cluster), or one of them in detail (packagevariant/NAME, packagevariantset/NAME)",
		Example: `  pvctl status
  pvctl status packagevariant/app-staging
  pvctl status pvs/app -o yaml
  pvctl status --kubeconfig ~/.kube/config -n fleet packagevariant/app-staging`,
		Args: args(0, 1, "status takes at most one KIND/NAME"),
		RunE: func(_ *cobra.Command, a []string) error {
			if err := checkDocOutput(output); err != nil {
				return err
			}
			kind, name := "", ""
			if len(a) == 1 {
				var err error
				if kind, name, err = parseKindName(a[0]); err != nil {
					return err
				}
			}
			f, err := o.loadFleet(ctx, cf)
			if err != nil {
				return err
			}
			paint := o.paint()
			switch kind {
			case "":
				if output != "" {
					return writeDoc(o.Stdout, RunOutput{Changes: []string{}, Sets: orNone(f.sets), Variants: orNoVariants(f.variants)}, output)
				}
				return statusTable(o.Stdout, o.Stderr, f, o.Namespace, paint)
			case "PackageVariant":
				for _, v := range f.variants {
					if v.Name == name {
						if output != "" {
							return writeDoc(o.Stdout, v, output)
						}
						return describeVariant(ctx, o.Stdout, f, &v, paint)
					}
				}
			case "PackageVariantSet":
				for _, s := range f.sets {
					if s.Name == name {
						if output != "" {
							return writeDoc(o.Stdout, s, output)
						}
						return describeSet(o.Stdout, f, &s, paint)
					}
				}
			}
			return fmt.Errorf("%s %s: not found in %s (pvctl status lists them)", strings.ToLower(kind), name, f.where)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "yaml or json: the object (or all of them) as the state file (or the cluster) has it")
	cf.add(c)
	return c
}

// eventsCommand is `pvctl events [KIND/NAME]`, after kubectl events: the
// Events recorded on sets and variants, oldest first, from the state file
// (every run's, the newest state.MaxEvents) or, with --kubeconfig, the cluster.
func eventsCommand(ctx context.Context, o *Options) *cobra.Command {
	var output string
	var cf clusterFlags
	c := &cobra.Command{
		Use:   "events [KIND/NAME]",
		Short: "Show the events of the sets and variants (of pvctl run, or of a cluster), or of one of them",
		Example: `  pvctl events
  pvctl events packagevariant/app-staging -o json
  pvctl events --kubeconfig ~/.kube/config -n fleet`,
		Args: args(0, 1, "events takes at most one KIND/NAME"),
		RunE: func(_ *cobra.Command, a []string) error {
			if err := checkDocOutput(output); err != nil {
				return err
			}
			f, err := o.loadFleet(ctx, cf)
			if err != nil {
				return err
			}
			ev := f.events
			if len(a) == 1 {
				kind, name, err := parseKindName(a[0])
				if err != nil {
					return err
				}
				ev = only(ev, kind, name)
			}
			if ev == nil {
				ev = []state.Event{}
			}
			if output != "" {
				return writeDoc(o.Stdout, ev, output)
			}
			if len(ev) == 0 {
				fmt.Fprintf(o.Stderr, "No events found in %s namespace.\n", o.Namespace)
				return nil
			}
			return eventsTable(o.Stdout, f.now, ev, true, o.paint())
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "yaml or json: the events as a list")
	cf.add(c)
	return c
}

// checkDocOutput checks -o for commands that print a document: yaml or
// json (or nothing, for the table).
func checkDocOutput(output string) error {
	if output != "" && output != "yaml" && output != "json" {
		return usageErr("-o must be yaml or json, not %q", output)
	}
	return nil
}

// parseKindName reads packagevariant/NAME or packagevariantset/NAME (pv,
// pvs and plurals too) into the kind's name.
func parseKindName(s string) (kind, name string, err error) {
	k, name, ok := strings.Cut(s, "/")
	if !ok || name == "" {
		return "", "", usageErr("want KIND/NAME (packagevariant/NAME or packagevariantset/NAME), not %q", s)
	}
	switch strings.ToLower(k) {
	case "packagevariant", "packagevariants", "pv":
		return "PackageVariant", name, nil
	case "packagevariantset", "packagevariantsets", "pvs":
		return "PackageVariantSet", name, nil
	}
	return "", "", usageErr("want packagevariant/NAME or packagevariantset/NAME, not kind %q", k)
}

func orNone(s []pvsapi.PackageVariantSet) []pvsapi.PackageVariantSet {
	if s == nil {
		return []pvsapi.PackageVariantSet{}
	}
	return s
}

func orNoVariants(v []pvapi.PackageVariant) []pvapi.PackageVariant {
	if v == nil {
		return []pvapi.PackageVariant{}
	}
	return v
}

// statusTable lists every set and variant with its Ready condition.
func statusTable(w, errw io.Writer, f *fleet, namespace string, paint painter) error {
	if len(f.sets)+len(f.variants) == 0 {
		fmt.Fprintf(errw, "No resources found in %s namespace.\n", namespace)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "KIND\tNAME\t%s\tREASON\tMESSAGE\n", paint.header("READY"))
	row := func(kind, name string, conds []metav1.Condition) {
		ready, reason, msg, _ := kit.Readiness(conds)
		if ready == metav1.ConditionTrue {
			msg = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", kind, name, paint.ready(string(ready)), reason, strings.ReplaceAll(msg, "\n", " "))
	}
	for _, s := range f.sets {
		row("PackageVariantSet", s.Name, s.Status.Conditions)
	}
	for _, v := range f.variants {
		row("PackageVariant", v.Name, v.Status.Conditions)
	}
	return tw.Flush()
}

func writeConditions(w io.Writer, conds []metav1.Condition, paint painter) {
	fmt.Fprintln(w, "Conditions:")
	if len(conds) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	sorted := append([]metav1.Condition(nil), conds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Type < sorted[j].Type })
	for _, c := range sorted {
		status := string(c.Status)
		if c.Type == kit.ConditionReady {
			status = paint.ready(status)
		}
		fmt.Fprintf(w, "  %s=%s  %s: %s\n", c.Type, status, c.Reason, c.Message)
	}
}

// describeVariant prints a variant: spec, conditions, each downstream
// revision with its lifecycle, readiness gates and last render, and its
// events.
func describeVariant(ctx context.Context, w io.Writer, f *fleet, v *pvapi.PackageVariant, paint painter) error {
	fmt.Fprintf(w, "PackageVariant %s (namespace %s, generation %d, observed %d)\n", v.Name, v.Namespace, v.Generation, v.Status.ObservedGeneration)
	if u := v.Spec.Upstream; u != nil {
		fmt.Fprintf(w, "Upstream:   repository %s, package %s", u.Repo, u.Package)
		if u.WorkspaceName != "" {
			fmt.Fprintf(w, ", workspace %s", u.WorkspaceName)
		}
		if u.Revision != 0 {
			fmt.Fprintf(w, ", revision %d", u.Revision)
		}
		fmt.Fprintln(w)
	}
	if d := v.Spec.Downstream; d != nil {
		fmt.Fprintf(w, "Downstream: repository %s, package %s\n", d.Repo, d.Package)
	}
	writeConditions(w, v.Status.Conditions, paint)
	fmt.Fprintln(w, "Downstream revisions:")
	if len(v.Status.DownstreamTargets) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, t := range v.Status.DownstreamTargets {
		state, err := f.revision(ctx, t.Name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s: %s\n", t.Name, state)
		if rs := t.RenderStatus; rs.Err != "" || len(rs.Result.Items) > 0 {
			fmt.Fprintf(w, "    last render: exit %d %s\n", rs.Result.ExitCode, rs.Err)
			for _, it := range rs.Result.Items {
				fmt.Fprintf(w, "      %s: exit %d\n", it.Image, it.ExitCode)
			}
		}
	}
	return writeEvents(w, f, "PackageVariant", v.Name, paint)
}

// describeSet prints a set: conditions, target failures, children and
// events.
func describeSet(w io.Writer, f *fleet, s *pvsapi.PackageVariantSet, paint painter) error {
	fmt.Fprintf(w, "PackageVariantSet %s (namespace %s, generation %d, observed %d)\n", s.Name, s.Namespace, s.Generation, s.Status.ObservedGeneration)
	writeConditions(w, s.Status.Conditions, paint)
	if len(s.Status.TargetFailures) > 0 {
		fmt.Fprintln(w, "Target failures:")
		for _, f := range s.Status.TargetFailures {
			fmt.Fprintf(w, "  %s: %s\n", f.Target, f.Message)
		}
	}
	fmt.Fprintln(w, "Children:")
	n := 0
	for _, v := range f.variants {
		if owner := metav1.GetControllerOf(&v); owner != nil && owner.UID == s.UID {
			ready, reason := "Unknown", ""
			for _, c := range v.Status.Conditions {
				if c.Type == kit.ConditionReady {
					ready, reason = string(c.Status), c.Reason
				}
			}
			fmt.Fprintf(w, "  PackageVariant %s: Ready %s %s\n", v.Name, paint.ready(ready), reason)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	return writeEvents(w, f, "PackageVariantSet", s.Name, paint)
}

func writeEvents(w io.Writer, f *fleet, kind, name string, paint painter) error {
	fmt.Fprintln(w, "Events:")
	ev := only(f.events, kind, name)
	if len(ev) == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	return eventsTable(w, f.now, ev, false, paint)
}
