package local

import (
	"fmt"
	"sync"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/embedded"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// eventLog is pvctl run's event recorder (record.EventRecorder): it
// aggregates repeats and keeps the newest state.MaxEvents, with what earlier runs
// recorded.
type eventLog struct {
	mu     sync.Mutex
	scheme *runtime.Scheme
	clock  kit.Clock
	events []state.Event
	recent []state.Event // this run's, as recorded
}

func newEventLog(scheme *runtime.Scheme, clock kit.Clock, earlier []state.Event) *eventLog {
	if clock == nil {
		clock = kit.Real{}
	}
	return &eventLog{scheme: scheme, clock: clock, events: append([]state.Event(nil), earlier...)}
}

// Event implements record.EventRecorder.
func (l *eventLog) Event(obj runtime.Object, typ, reason, message string) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return
	}
	kind := embedded.KindOf(l.scheme, obj)
	now := metav1.NewTime(l.clock.Now().UTC().Truncate(time.Second))
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recent = append(l.recent, state.Event{Type: typ, Reason: reason, Kind: kind, Name: m.GetName(), Message: message})
	for i := range l.events {
		e := &l.events[i]
		if e.Kind == kind && e.Name == m.GetName() && e.Type == typ && e.Reason == reason && e.Message == message {
			e.Count++
			e.LastSeen = now
			return
		}
	}
	l.events = append(l.events, state.Event{LastSeen: now, Count: 1, Type: typ, Reason: reason, Kind: kind, Name: m.GetName(), Message: message})
}

// Eventf implements record.EventRecorder.
func (l *eventLog) Eventf(obj runtime.Object, typ, reason, format string, a ...any) {
	l.Event(obj, typ, reason, fmt.Sprintf(format, a...))
}

// AnnotatedEventf implements record.EventRecorder.
func (l *eventLog) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, a ...any) {
	l.Eventf(obj, typ, reason, format, a...)
}

// warnings returns the messages of this run's Warning events of a
// reason, each once, in the order first recorded: the run's warnings.
func (l *eventLog) warnings(reason string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, e := range l.recent {
		if e.Type == "Warning" && e.Reason == reason && !seen[e.Message] {
			seen[e.Message] = true
			out = append(out, e.Message)
		}
	}
	return out
}

// Of returns the events of the variants and sets given (an object's events
// go with it), oldest first, at most state.MaxEvents.
func (l *eventLog) Of(variants []pvapi.PackageVariant, sets []pvsapi.PackageVariantSet) []state.Event {
	exists := map[string]bool{}
	for _, v := range variants {
		exists["PackageVariant/"+v.Name] = true
	}
	for _, s := range sets {
		exists["PackageVariantSet/"+s.Name] = true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// A synced object --sync refused is in no cluster: its Event is kept
	// while a run still refuses it.
	for _, e := range l.recent {
		if e.Reason == EventSyncRefused {
			exists[e.Kind+"/"+e.Name] = true
		}
	}
	var out []state.Event
	for _, e := range l.events {
		if exists[e.Kind+"/"+e.Name] {
			out = append(out, e)
		}
	}
	state.SortEvents(out)
	if len(out) > state.MaxEvents {
		out = out[len(out)-state.MaxEvents:]
	}
	return out
}
