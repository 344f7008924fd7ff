package local

import (
	"testing"

	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
)

// The state package names pvctl suspend's annotation itself (it cannot
// import kit): the two stay the same.
func TestStateNamesTheSuspendAnnotation(t *testing.T) {
	if state.SuspendAnnotation != kit.SuspendAnnotation {
		t.Fatalf("state.SuspendAnnotation %q, kit.SuspendAnnotation %q", state.SuspendAnnotation, kit.SuspendAnnotation)
	}
}
