package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// fromCoreEvents keeps the Events of PackageVariants and
// PackageVariantSets (kind "" for both, else that kind; name "" for every
// name).
func fromCoreEvents(items []corev1.Event, kind, name string) []state.Event {
	var out []state.Event
	for _, e := range items {
		o := e.InvolvedObject
		if o.Kind != "PackageVariant" && o.Kind != "PackageVariantSet" {
			continue
		}
		if (kind != "" && o.Kind != kind) || (name != "" && o.Name != name) {
			continue
		}
		seen := e.LastTimestamp
		if seen.IsZero() {
			seen = metav1.NewTime(e.EventTime.Time)
		}
		count := e.Count
		if count == 0 {
			count = 1
		}
		out = append(out, state.Event{LastSeen: seen, Count: count, Type: e.Type, Reason: e.Reason, Kind: o.Kind, Name: o.Name, Message: e.Message})
	}
	state.SortEvents(out)
	return out
}

// only keeps the events of one object.
func only(ev []state.Event, kind, name string) []state.Event {
	var out []state.Event
	for _, e := range ev {
		if e.Kind == kind && e.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// age is kubectl's short age: 5s, 3m, 2h, 4d.
func age(now time.Time, t metav1.Time) string {
	d := now.Sub(t.Time)
	switch {
	case t.IsZero():
		return "<unknown>"
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// eventsTable prints events as kubectl get events does: with withObject,
// the OBJECT column; wide shows messages whole; header prints the header
// line (a watch's later rows have none).
func eventsTable(w io.Writer, now time.Time, ev []state.Event, withObject, wide, header bool, paint painter) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if header && withObject {
		fmt.Fprintf(tw, "LAST SEEN\t%s\tREASON\tOBJECT\tCOUNT\tMESSAGE\n", paint.header("TYPE"))
	} else if header {
		fmt.Fprintf(tw, "  LAST SEEN\t%s\tREASON\tCOUNT\tMESSAGE\n", paint.header("TYPE"))
	}
	for _, e := range ev {
		typ := paint.warn(e.Type)
		msg := message(e.Message, wide)
		if withObject {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%d\t%s\n", age(now, e.LastSeen), typ, e.Reason, strings.ToLower(e.Kind), e.Name, e.Count, msg)
		} else {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", age(now, e.LastSeen), typ, e.Reason, e.Count, msg)
		}
	}
	return tw.Flush()
}

// eventsCommand is `pvctl events [KIND/NAME]`, after kubectl events: the
// Events recorded on sets and variants, oldest first, from the state file
// (every run's, the newest state.MaxEvents) or, with --kubeconfig, the
// cluster. -w follows: each event that is new or recurs is printed.
func eventsCommand(ctx context.Context, o *Options) *cobra.Command {
	var output string
	var follow bool
	var cf clusterFlags
	c := &cobra.Command{
		Use:   "events [KIND/NAME]",
		Short: "Show the events of the sets and variants (of pvctl run, or of a cluster), or of one of them",
		Example: `  pvctl events
  pvctl events packagevariant/app-staging -o json
  pvctl events -w                     # then each new event, until interrupted
  pvctl events --kubeconfig ~/.kube/config -n fleet`,
		Args:              args(0, 1, "events takes at most one KIND/NAME"),
		ValidArgsFunction: fleetNames(o),
		RunE: func(_ *cobra.Command, a []string) error {
			if err := checkOutput(output, listOutputs); err != nil {
				return err
			}
			kind, name := "", ""
			if len(a) == 1 {
				var err error
				if kind, name, err = parseKindName(a[0]); err != nil {
					return err
				}
			}
			load := func() ([]state.Event, time.Time, error) {
				f, err := o.loadFleet(ctx, cf)
				if err != nil {
					return nil, time.Time{}, err
				}
				if kind != "" {
					ev := only(f.events, kind, name)
					if len(ev) == 0 && len(f.objects(kind, name, labels.Everything())) == 0 {
						// As status says it ("No events found", exit 0,
						// hid a typo); a removed object's events still show.
						return nil, time.Time{}, fmt.Errorf("%s %s: not found in %s (pvctl status lists them)", strings.ToLower(kind), name, f.where)
					}
					return ev, f.now, nil
				}
				return f.events, f.now, nil
			}
			ev, now, err := load()
			if err != nil {
				return err
			}
			if len(ev) == 0 && !document(output) && !follow {
				fmt.Fprintf(o.Stderr, "No events found in %s namespace.\n", o.Namespace)
				return nil
			}
			if err := printEvents(o, now, ev, output, false); err != nil {
				return err
			}
			if !follow {
				return nil
			}
			return watch(ctx, ev, eventKey, func(e state.Event) string { return asJSON(e) }, func() ([]state.Event, error) {
				ev, now, err = load()
				return ev, err
			}, func(changed []state.Event) error { return printEvents(o, now, changed, output, true) })
		},
	}
	outputFlag(c, &output, listOutputs, "the events (a List of v1 Events)")
	c.Flags().BoolVarP(&follow, "watch", "w", false, "after the events, print each new one (or one that recurs), until interrupted")
	cf.add(c)
	return c
}

// eventKey names an event: its object, type, reason and message (the
// API server's aggregation key; count and time change as it recurs).
func eventKey(e state.Event) string {
	return e.Kind + "/" + e.Name + "." + shortHash(e.Type, e.Reason, e.Message)
}

// eventName is an event's name, as -o name and json show it.
func eventName(e state.Event) string {
	return e.Name + "." + shortHash(e.Kind, e.Type, e.Reason, e.Message)
}

// printEvents prints events in a format; more, for -w, prints each new
// event as its own document, and table rows without a header.
func printEvents(o *Options, now time.Time, ev []state.Event, output string, more bool) error {
	switch {
	case output == outName:
		for _, e := range ev {
			fmt.Fprintln(o.Stdout, "event/"+eventName(e))
		}
		return nil
	case document(output):
		items := make([]any, len(ev))
		for i, e := range ev {
			items[i] = coreEvent(e, o.Namespace)
		}
		if !more {
			return writeList(o.Stdout, items, output)
		}
		for i, it := range items {
			if i > 0 && output == outYAML {
				fmt.Fprintln(o.Stdout, "---")
			}
			if err := writeDoc(o.Stdout, it, output); err != nil {
				return err
			}
		}
		return nil
	}
	return eventsTable(o.Stdout, now, ev, true, output == outWide, !more, o.paint())
}

// coreEvent is an event as a v1 Event, as kubectl shows one.
func coreEvent(e state.Event, namespace string) corev1.Event {
	apiVersion := pvapi.GroupVersion.String()
	if e.Kind == "PackageVariantSet" {
		apiVersion = pvsapi.GroupVersion.String()
	}
	return corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: eventName(e), Namespace: namespace},
		InvolvedObject: corev1.ObjectReference{APIVersion: apiVersion, Kind: e.Kind, Name: e.Name, Namespace: namespace},
		Reason:         e.Reason, Message: e.Message, Type: e.Type, Count: e.Count,
		LastTimestamp: e.LastSeen, Source: corev1.EventSource{Component: "pvkit"},
	}
}
