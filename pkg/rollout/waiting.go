package rollout

import (
	"time"

	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// stamp gives each wave not complete its Waiting list (rule:
// rollout-gates-due): the
// members moved to the target that are neither done, failed nor skipped,
// each with the instant the rollout moved it. A member moved by this plan
// is stamped with the plan's clock (none without one); a member moved
// before keeps the stamp the last plan gave it; a member moved before any
// plan stamped it (an older pvkit) is listed without one rather than
// with a time that is not when it moved. A new target starts afresh.
func (p *planner) stamp() {
	was := map[string]string{}
	if p.prev != nil && !p.restart {
		for _, w := range p.prev.Waves {
			for _, m := range w.Waiting {
				was[m.Name] = m.Since
			}
		}
	}
	now := ""
	if !p.ctl.Now.IsZero() {
		now = p.ctl.Now.UTC().Format(time.RFC3339)
	}
	for i := range p.st.Waves {
		ws := &p.st.Waves[i]
		if ws.State == WaveComplete || i >= len(p.waves) {
			continue
		}
		for _, c := range p.waves[i] {
			pin, ok := p.res.Pins[c.Name]
			if !ok || !pinnedTo(&pin, p.target) || c.Done || c.Failed || p.skip[c.Name] {
				continue
			}
			m := v1alpha2.WaitingMember{Name: c.Name, Since: was[c.Name]}
			if !pinnedTo(c.Current, p.target) { // moved now
				m.Since = now
			}
			ws.Waiting = append(ws.Waiting, m)
		}
	}
}
