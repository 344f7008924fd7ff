package local

import (
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEventLogBounded(t *testing.T) {
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	l := newEventLog(scheme, nil, nil)
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "v"}}
	for i := 0; i < state.MaxEvents+10; i++ {
		l.Eventf(v, "Normal", "DraftCreated", "draft %d", i)
	}
	l.Eventf(v, "Normal", "DraftCreated", "draft %d", 0) // a repeat: counted, not added
	got := l.Of([]pvapi.PackageVariant{*v}, nil)
	if len(got) != state.MaxEvents {
		t.Fatalf("%d events kept, want %d", len(got), state.MaxEvents)
	}
	for _, e := range got {
		if e.Message == "draft 0" && e.Count != 2 {
			t.Errorf("a repeated event: count %d, want 2", e.Count)
		}
	}
	if got[len(got)-1].Message == "draft 1" || got[0].Message == "draft 1" {
		t.Errorf("the oldest events were kept instead of the newest")
	}
}
