package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// statusCommand is `pvctl status [KIND/NAME]`, after kubectl get and
// describe and flux get: the sets and variants of the last run (the state
// file), or one of them in detail: its conditions, its downstream revisions
// with their lifecycle and readiness gates, the render status of its last
// write, a set's children and target failures, and its events. With
// --kubeconfig (or --context) it reads the same from a cluster: the
// PackageVariants, PackageVariantSets, PackageRevisions and Events of the
// namespace. It reads; it reconciles nothing. -w watches: after the list,
// each set or variant that changes is printed again, until interrupted.
func statusCommand(ctx context.Context, o *Options) *cobra.Command {
	var output, selector string
	var watchIt bool
	var cf clusterFlags
	c := &cobra.Command{
		Use:   "status [KIND/NAME]",
		Short: "Show the sets and variants of the last run (or of a cluster), or one of them in detail (packagevariant/NAME, packagevariantset/NAME)",
		Example: `  pvctl status
  pvctl status -o wide -l team=payments       # whole messages; only the sets and variants labelled so
  pvctl status packagevariant/app-staging
  pvctl status pvs/app -o yaml
  pvctl status -w                             # then each set or variant again when it changes
  pvctl status --kubeconfig ~/.kube/config -n fleet packagevariant/app-staging`,
		Args:              args(0, 1, "status takes at most one KIND/NAME"),
		ValidArgsFunction: fleetNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			if err := checkOutput(output, listOutputs); err != nil {
				return err
			}
			sel, err := labels.Parse(selector)
			if err != nil {
				return usageErr("-l: %v", err)
			}
			kind, name := "", ""
			if len(a) == 1 {
				if kind, name, err = parseKindName(a[0]); err != nil {
					return err
				}
			}
			f, err := o.loadFleet(ctx, cf)
			if err != nil {
				return err
			}
			if kind != "" && output != outName && !document(output) && !watchIt {
				return describe(ctx, o, f, kind, name)
			}
			objs := f.objects(kind, name, sel)
			if kind != "" && len(objs) == 0 {
				return fmt.Errorf("%s %s: not found in %s (pvctl status lists them)", strings.ToLower(kind), name, f.where)
			}
			if err := printObjects(o, objs, output, kind != "" && document(output)); err != nil {
				return err
			}
			if !watchIt {
				return nil
			}
			return watch(ctx, objs, fleetObject.key, func(f fleetObject) string { return asJSON(f.obj) }, func() ([]fleetObject, error) {
				f, err := o.loadFleet(ctx, cf)
				if err != nil {
					return nil, err
				}
				return f.objects(kind, name, sel), nil
			}, func(changed []fleetObject) error { return printObjects(o, changed, output, true) })
		},
	}
	outputFlag(c, &output, listOutputs, "the sets and variants (a List); with KIND/NAME, table and wide describe it and json and yaml are the object")
	c.Flags().StringVarP(&selector, "selector", "l", "", "only the sets and variants whose labels match this selector (team=payments,tier!=canary)")
	c.Flags().BoolVarP(&watchIt, "watch", "w", false, "after the list, print each set or variant again when it changes, until interrupted")
	cf.add(c)
	return c
}

// describe prints one set or variant in detail.
func describe(ctx context.Context, o *Options, f *fleet, kind, name string) error {
	for _, obj := range f.objects(kind, name, labels.Everything()) {
		switch v := obj.obj.(type) {
		case *pvapi.PackageVariant:
			return describeVariant(ctx, o.Stdout, f, v, o.paint())
		case *pvsapi.PackageVariantSet:
			return describeSet(o.Stdout, f, v, o.paint())
		}
	}
	return fmt.Errorf("%s %s: not found in %s (pvctl status lists them)", strings.ToLower(kind), name, f.where)
}

// fleetObject is a set or a variant, as status lists it.
type fleetObject struct {
	kind, name string
	conds      []metav1.Condition
	obj        any // *pvsapi.PackageVariantSet or *pvapi.PackageVariant, with its apiVersion and kind
	// generation and observed generation
	gen, observed int64
}

// key is the object's kind/name, as -o name prints it.
func (f fleetObject) key() string { return strings.ToLower(f.kind) + "/" + f.name }

// objects are the fleet's sets, then variants, that kind and name (when
// given) and the selector select.
func (f *fleet) objects(kind, name string, sel labels.Selector) []fleetObject {
	var out []fleetObject
	for i := range f.sets {
		s := f.sets[i].DeepCopy()
		if (kind == "" || (kind == "PackageVariantSet" && s.Name == name)) && sel.Matches(labels.Set(s.Labels)) {
			s.APIVersion, s.Kind = pvsapi.GroupVersion.String(), "PackageVariantSet"
			out = append(out, fleetObject{kind: "PackageVariantSet", name: s.Name, conds: s.Status.Conditions, obj: s, gen: s.Generation, observed: s.Status.ObservedGeneration})
		}
	}
	for i := range f.variants {
		v := f.variants[i].DeepCopy()
		if (kind == "" || (kind == "PackageVariant" && v.Name == name)) && sel.Matches(labels.Set(v.Labels)) {
			v.APIVersion, v.Kind = pvapi.GroupVersion.String(), "PackageVariant"
			out = append(out, fleetObject{kind: "PackageVariant", name: v.Name, conds: v.Status.Conditions, obj: v, gen: v.Generation, observed: v.Status.ObservedGeneration})
		}
	}
	return out
}

// printObjects prints sets and variants in a format; one, with single,
// is printed alone in json and yaml (and watch prints each so).
func printObjects(o *Options, objs []fleetObject, output string, single bool) error {
	switch {
	case output == outName:
		for _, obj := range objs {
			fmt.Fprintln(o.Stdout, obj.key())
		}
		return nil
	case document(output) && single:
		for i, obj := range objs {
			if i > 0 && output == outYAML {
				fmt.Fprintln(o.Stdout, "---")
			}
			if err := writeDoc(o.Stdout, obj.obj, output); err != nil {
				return err
			}
		}
		return nil
	case document(output):
		items := make([]any, len(objs))
		for i, obj := range objs {
			items[i] = obj.obj
		}
		return writeList(o.Stdout, items, output)
	}
	return statusTable(o.Stdout, o.Stderr, objs, o.Namespace, output == outWide, o.paint())
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

// statusTable lists sets and variants with their Ready condition; wide
// adds the generations and shows messages whole.
func statusTable(w, errw io.Writer, objs []fleetObject, namespace string, wide bool, paint painter) error {
	if len(objs) == 0 {
		fmt.Fprintf(errw, "No resources found in %s namespace.\n", namespace)
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "KIND\tNAME\t" + paint.header("READY") + "\tREASON"
	if wide {
		head += "\tGENERATION\tOBSERVED"
	}
	fmt.Fprintln(tw, head+"\tMESSAGE")
	for _, obj := range objs {
		ready, reason, msg, _ := kit.Readiness(obj.conds)
		if ready == metav1.ConditionTrue && reason != kit.ReasonSuspended {
			msg = ""
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s", obj.kind, obj.name, paint.ready(string(ready)), reason)
		if wide {
			fmt.Fprintf(tw, "\t%d\t%d", obj.gen, obj.observed)
		}
		fmt.Fprintf(tw, "\t%s\n", message(msg, wide))
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
		if l := t.UpstreamLock; l != nil {
			fmt.Fprintf(w, "    upstream: %s %s at %s\n", l.Repo, l.Package, l.Ref)
		}
		if b := t.Blocked; b != nil {
			fmt.Fprintf(w, "    blocked: %s: %s\n", b.Reason, b.Message)
		}
		if d := t.Drift; d != nil {
			fmt.Fprintf(w, "    drift: %s: %s\n", d.Reason, d.Message)
		}
		if k := t.Kept; k != nil {
			fmt.Fprintf(w, "    kept: %s\n", k.Message)
		}
		if h := t.Health; h != nil {
			fmt.Fprintf(w, "    health: %s %s: %s (since %s)\n", h.Status, h.Reason, h.Message, h.Since.UTC().Format(time.RFC3339))
		}
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
	if s.Spec.Group != nil {
		describeGroup(w, f, s, paint)
		return writeEvents(w, f, "PackageVariantSet", s.Name, paint)
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
	return eventsTable(w, f.now, ev, false, true, true, paint)
}
