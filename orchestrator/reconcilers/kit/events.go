package kit

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Events records Kubernetes Events on the reconciled objects; a nil
// recorder (tests, pvctl run) records nothing.
type Events struct{ Recorder record.EventRecorder }

// Normal records a Normal event.
func (e Events) Normal(obj runtime.Object, reason, format string, a ...any) {
	if e.Recorder != nil {
		e.Recorder.Event(obj, "Normal", reason, BoundMessage(fmt.Sprintf(format, a...)))
	}
}

// Warning records a Warning event.
func (e Events) Warning(obj runtime.Object, reason, format string, a ...any) {
	if e.Recorder != nil {
		e.Recorder.Event(obj, "Warning", reason, BoundMessage(fmt.Sprintf(format, a...)))
	}
}
