package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// statusCommand is `pvctl status [KIND/NAME]`, after kubectl describe and
// flux get: the sets and variants of the last run (the state file), or one
// of them in detail: its conditions, its downstream revisions with their
// lifecycle and readiness gates, the render status of its last write, a
// set's children and target failures. It reads; it reconciles nothing.
func statusCommand(ctx context.Context, o *Options) *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "status [KIND/NAME]",
		Short: "Show the sets and variants of the last run, or one of them in detail (packagevariant/NAME, packagevariantset/NAME)",
		Example: `  pvctl status
  pvctl status packagevariant/app-staging
  pvctl status pvs/app -o yaml`,
		Args: args(0, 1, "status takes at most one KIND/NAME"),
		RunE: func(_ *cobra.Command, a []string) error {
			switch output {
			case "", "yaml", "json":
			default:
				return usageErr("-o must be yaml or json, not %q", output)
			}
			st, err := readState(filepath.Join(o.Repos, StateFile))
			if err != nil {
				return err
			}
			if len(a) == 0 {
				if output != "" {
					return writeDoc(o.Stdout, RunOutput{Changes: []string{}, Sets: orNone(st.Sets), Variants: orNoVariants(st.Variants)}, output)
				}
				return statusTable(o.Stdout, o.Stderr, st, o.Namespace)
			}
			kind, name, ok := strings.Cut(a[0], "/")
			if !ok {
				return usageErr("status takes KIND/NAME (packagevariant/NAME or packagevariantset/NAME), not %q", a[0])
			}
			switch strings.ToLower(kind) {
			case "packagevariant", "packagevariants", "pv":
				for _, v := range st.Variants {
					if v.Name == name {
						if output != "" {
							return writeDoc(o.Stdout, v, output)
						}
						return describeVariant(ctx, o, &v)
					}
				}
			case "packagevariantset", "packagevariantsets", "pvs":
				for _, s := range st.Sets {
					if s.Name == name {
						if output != "" {
							return writeDoc(o.Stdout, s, output)
						}
						return describeSet(o.Stdout, &s, st.Variants)
					}
				}
			default:
				return usageErr("status shows packagevariant/NAME or packagevariantset/NAME, not kind %q", kind)
			}
			return fmt.Errorf("%s %s: not found in the last run's state (pvctl status lists them)", kind, name)
		},
	}
	c.Flags().StringVarP(&output, "output", "o", "", "yaml or json: the object (or all of them) as the state file keeps it")
	return c
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
func statusTable(w, errw io.Writer, st *state, namespace string) error {
	if len(st.Sets)+len(st.Variants) == 0 {
		fmt.Fprintf(errw, "No resources found in %s namespace.\n", namespace)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tNAME\tREADY\tREASON\tMESSAGE")
	row := func(kind, name string, conds []metav1.Condition) {
		ready, reason, msg := "Unknown", "", ""
		for _, c := range conds {
			if c.Type == "Ready" {
				ready, reason, msg = string(c.Status), c.Reason, c.Message
			}
		}
		for _, c := range conds {
			if c.Type == "Stalled" && c.Status == metav1.ConditionTrue {
				reason, msg = c.Reason, c.Message
			}
		}
		if ready == "True" {
			msg = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", kind, name, ready, reason, strings.ReplaceAll(msg, "\n", " "))
	}
	for _, s := range st.Sets {
		row("PackageVariantSet", s.Name, s.Status.Conditions)
	}
	for _, v := range st.Variants {
		row("PackageVariant", v.Name, v.Status.Conditions)
	}
	return tw.Flush()
}

func writeConditions(w io.Writer, conds []metav1.Condition) {
	fmt.Fprintln(w, "Conditions:")
	if len(conds) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	sorted := append([]metav1.Condition(nil), conds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Type < sorted[j].Type })
	for _, c := range sorted {
		fmt.Fprintf(w, "  %s=%s  %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
}

// describeVariant prints a variant: spec, conditions, and each downstream
// revision with its lifecycle, readiness gates and last render.
func describeVariant(ctx context.Context, o *Options, v *pvapi.PackageVariant) error {
	w := o.Stdout
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
	writeConditions(w, v.Status.Conditions)
	fmt.Fprintln(w, "Downstream revisions:")
	if len(v.Status.DownstreamTargets) == 0 {
		fmt.Fprintln(w, "  (none)")
		return nil
	}
	s, err := openRepos(o.Repos, o.Namespace, false, o.Stderr)
	if err != nil {
		return err
	}
	all := s.All(o.Namespace)
	for _, t := range v.Status.DownstreamTargets {
		lifecycle := "gone"
		for _, r := range all {
			if r.Name == t.Name {
				lifecycle = string(r.Lifecycle)
				gates := "every readiness gate True"
				if err := readinessGates(ctx, s, r); err != nil {
					gates = err.Error()
				}
				lifecycle += "; " + gates
			}
		}
		fmt.Fprintf(w, "  %s: %s\n", t.Name, lifecycle)
		if rs := t.RenderStatus; rs.Err != "" || len(rs.Result.Items) > 0 {
			fmt.Fprintf(w, "    last render: exit %d %s\n", rs.Result.ExitCode, rs.Err)
			for _, it := range rs.Result.Items {
				fmt.Fprintf(w, "      %s: exit %d\n", it.Image, it.ExitCode)
			}
		}
	}
	return nil
}

// describeSet prints a set: conditions, target failures and children.
func describeSet(w io.Writer, s *pvsapi.PackageVariantSet, variants []pvapi.PackageVariant) error {
	fmt.Fprintf(w, "PackageVariantSet %s (namespace %s, generation %d, observed %d)\n", s.Name, s.Namespace, s.Generation, s.Status.ObservedGeneration)
	writeConditions(w, s.Status.Conditions)
	if len(s.Status.TargetFailures) > 0 {
		fmt.Fprintln(w, "Target failures:")
		for _, f := range s.Status.TargetFailures {
			fmt.Fprintf(w, "  %s: %s\n", f.Target, f.Message)
		}
	}
	fmt.Fprintln(w, "Children:")
	n := 0
	for _, v := range variants {
		if owner := metav1.GetControllerOf(&v); owner != nil && owner.UID == s.UID {
			ready := "Unknown"
			for _, c := range v.Status.Conditions {
				if c.Type == "Ready" {
					ready = string(c.Status) + " " + c.Reason
				}
			}
			fmt.Fprintf(w, "  PackageVariant %s: Ready %s\n", v.Name, ready)
			n++
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	return nil
}
