package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pvkit/pvkit/orchestrator/local/state"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// eventsTable prints events as kubectl get events does; indent prefixes
// each line (describe's Events section).
func eventsTable(w io.Writer, now time.Time, ev []state.Event, withObject bool, paint painter) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if withObject {
		fmt.Fprintf(tw, "LAST SEEN\t%s\tREASON\tOBJECT\tCOUNT\tMESSAGE\n", paint.header("TYPE"))
	} else {
		fmt.Fprintf(tw, "  LAST SEEN\t%s\tREASON\tCOUNT\tMESSAGE\n", paint.header("TYPE"))
	}
	for _, e := range ev {
		typ := paint.warn(e.Type)
		msg := strings.ReplaceAll(e.Message, "\n", " ")
		if withObject {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%d\t%s\n", age(now, e.LastSeen), typ, e.Reason, strings.ToLower(e.Kind), e.Name, e.Count, msg)
		} else {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", age(now, e.LastSeen), typ, e.Reason, e.Count, msg)
		}
	}
	return tw.Flush()
}
