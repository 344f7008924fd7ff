package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Event is an Event on a set or variant, as `pvctl events` shows it: from
// pvctl run's state file (the reconcilers record the same Events in pvctl
// run as in the controller) or from a cluster's core/v1 Events.
type Event struct {
	LastSeen metav1.Time `json:"lastSeen"`
	// Count is how many times the same event (object, type, reason and
	// message) was recorded, as the API server aggregates them.
	Count   int32  `json:"count"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

// MaxEvents bounds the events the state file keeps: the newest ones.
const MaxEvents = 1000

// eventLog is pvctl run's event recorder (record.EventRecorder): it
// aggregates repeats and keeps the newest MaxEvents, with what earlier runs
// recorded.
type eventLog struct {
	mu     sync.Mutex
	scheme *runtime.Scheme
	clock  kit.Clock
	events []Event
}

func newEventLog(scheme *runtime.Scheme, clock kit.Clock, earlier []Event) *eventLog {
	if clock == nil {
		clock = kit.Real{}
	}
	return &eventLog{scheme: scheme, clock: clock, events: append([]Event(nil), earlier...)}
}

// Event implements record.EventRecorder.
func (l *eventLog) Event(obj runtime.Object, typ, reason, message string) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return
	}
	kind := kindOf(l.scheme, obj)
	now := metav1.NewTime(l.clock.Now().UTC().Truncate(time.Second))
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.events {
		e := &l.events[i]
		if e.Kind == kind && e.Name == m.GetName() && e.Type == typ && e.Reason == reason && e.Message == message {
			e.Count++
			e.LastSeen = now
			return
		}
	}
	l.events = append(l.events, Event{LastSeen: now, Count: 1, Type: typ, Reason: reason, Kind: kind, Name: m.GetName(), Message: message})
}

// Eventf implements record.EventRecorder.
func (l *eventLog) Eventf(obj runtime.Object, typ, reason, format string, a ...any) {
	l.Event(obj, typ, reason, fmt.Sprintf(format, a...))
}

// AnnotatedEventf implements record.EventRecorder.
func (l *eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, a ...any) {
	l.Eventf(obj, typ, reason, format, a...)
}

// Of returns the events of the variants and sets given (an object's events
// go with it), oldest first, at most MaxEvents.
func (l *eventLog) Of(variants []pvapi.PackageVariant, sets []pvsapi.PackageVariantSet) []Event {
	exists := map[string]bool{}
	for _, v := range variants {
		exists["PackageVariant/"+v.Name] = true
	}
	for _, s := range sets {
		exists["PackageVariantSet/"+s.Name] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if exists[e.Kind+"/"+e.Name] {
			out = append(out, e)
		}
	}
	sortEvents(out)
	if len(out) > MaxEvents {
		out = out[len(out)-MaxEvents:]
	}
	return out
}

// sortEvents orders events oldest first, ties by object, reason and message.
func sortEvents(ev []Event) {
	sort.SliceStable(ev, func(i, j int) bool {
		a, b := ev[i], ev[j]
		if !a.LastSeen.Equal(&b.LastSeen) {
			return a.LastSeen.Before(&b.LastSeen)
		}
		return strings.Join([]string{a.Kind, a.Name, a.Reason, a.Message}, "\x00") < strings.Join([]string{b.Kind, b.Name, b.Reason, b.Message}, "\x00")
	})
}

// fromCoreEvents keeps the Events of PackageVariants and
// PackageVariantSets (kind "" for both, else that kind; name "" for every
// name).
func fromCoreEvents(items []corev1.Event, kind, name string) []Event {
	var out []Event
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
		out = append(out, Event{LastSeen: seen, Count: count, Type: e.Type, Reason: e.Reason, Kind: o.Kind, Name: o.Name, Message: e.Message})
	}
	sortEvents(out)
	return out
}

// only keeps the events of one object.
func only(ev []Event, kind, name string) []Event {
	var out []Event
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
func eventsTable(w io.Writer, now time.Time, ev []Event, withObject bool, paint painter) error {
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
