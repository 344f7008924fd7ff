package rollout

import (
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/window"
)

// windows: whether a window holds new moves back now (spec.rollout.
// windows; package window), said in the status with until when, and when
// to plan again. Not for an undo, which is never held.
func (p *planner) windows() {
	if len(p.spec.Windows) == 0 {
		return
	}
	v := window.Verdict{Why: "no clock to read the windows by (the caller gave none)"}
	if !p.ctl.Now.IsZero() { // pkg/ reads no clock: a caller without one holds, safely
		v = window.Evaluate(p.spec.Windows, p.ctl.Now)
	}
	p.res.Recheck = v.Next
	if v.Open {
		return
	}
	p.held = true
	p.st.Window = &v1alpha2.WindowHold{Reason: v.Why}
	if !v.Until.IsZero() {
		p.st.Window.Until = v.Until.UTC().Format(time.RFC3339)
	}
}
