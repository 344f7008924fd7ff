package rollout

import (
	"fmt"
	"strings"
)

// A moved child that failed counts against one budget (rule
// staged-rollouts): its wave's own (waves[].errorBudget, a count or a
// percent of the wave's members); else, for the first wave of a rollout
// of two or more (the canary), 0; else the rollout's (spec.rollout.
// errorBudget), which every wave without a budget of its own shares. The
// rollout pauses (or undoes itself) when a budget is exceeded, or when a
// wave cannot complete: every member it moves failed or was skipped, one
// failed at least. A failure within its budget does not hold the wave:
// the wave completes without it, and the failure is said (the wave's
// count, the rollout's message, an Event).

// budget is one error budget and the failures counted against it.
type budget struct {
	wave   int // the wave whose own budget it is; -1: the rollout's
	canary bool
	of     int
	failed int
	names  []string // "name: why" of the first MaxListed, in name order
}

// judge: failures, skips and the budget. A skip applies to a failed child
// (a skip of one that never failed waits for it to fail), and stays.
func (p *planner) judge() {
	wasSkipped := map[string]bool{}
	if p.prev != nil && !p.restart {
		for _, n := range p.prev.Skipped {
			wasSkipped[n] = true
		}
	}
	p.skip = map[string]bool{}
	for _, c := range p.children {
		if p.ctl.Skip[c.Name] && ((c.Failed && pinnedTo(c.Current, p.target)) || wasSkipped[c.Name]) {
			p.skip[c.Name] = true
			p.st.Skipped = append(p.st.Skipped, c.Name)
		}
		if p.failing(&c) {
			p.failed++
			if len(p.st.Failed) < MaxListed {
				p.st.Failed = append(p.st.Failed, c.Name+": "+Short(c.Why, MaxWhy))
			}
		}
		if p.ctl.Hold[c.Name] {
			p.st.Held = append(p.st.Held, c.Name)
		}
	}
	p.st.FailedCount = p.failed
	p.countFailures()
}

// failing: a child moved to the target that failed and is not skipped.
func (p *planner) failing(c *Child) bool {
	return c.Failed && !p.skip[c.Name] && pinnedTo(c.Current, p.target)
}

// budgetsOf gives each wave its budget: p.budgets, and p.budgetOf[i] the
// index of wave i's.
func (p *planner) budgetsOf() {
	waves := p.spec.Waves
	p.budgets, p.budgetOf = nil, make([]int, len(waves))
	shared := -1
	for i, w := range waves {
		switch {
		case w.ErrorBudget != nil:
			p.budgets = append(p.budgets, budget{wave: i, of: w.ErrorBudget.Of(len(p.waves[i]))})
		case i == 0 && len(waves) > 1:
			p.budgets = append(p.budgets, budget{wave: i, canary: true})
		default:
			if shared < 0 {
				b := budget{wave: -1}
				if p.spec.ErrorBudget != nil {
					b.of = p.spec.ErrorBudget.Of(len(p.children))
				}
				p.budgets = append(p.budgets, b)
				shared = len(p.budgets) - 1
			}
			p.budgetOf[i] = shared
			continue
		}
		p.budgetOf[i] = len(p.budgets) - 1
	}
}

// count counts each wave's failures and skips against its budget, and
// finds the budget exceeded (p.over) or else the wave that cannot
// complete (p.stuck, -1: none).
func (p *planner) countFailures() {
	p.budgetsOf()
	n := len(p.spec.Waves)
	p.waveFailed, p.waveSkipped, p.over, p.stuck = make([]int, n), make([]int, n), nil, -1
	for i, w := range p.waves {
		b := &p.budgets[p.budgetOf[i]]
		for _, c := range w {
			if p.skip[c.Name] {
				p.waveSkipped[i]++
			}
			if !p.failing(c) {
				continue
			}
			p.waveFailed[i]++
			b.failed++
			if len(b.names) < MaxListed {
				b.names = append(b.names, c.Name+": "+Short(c.Why, MaxWhy))
			}
		}
	}
	for i := range p.budgets {
		if b := &p.budgets[i]; b.failed > b.of {
			p.over = b
			break
		}
	}
	if p.over == nil {
		p.stuck = p.cannotComplete()
	}
	p.overBudget = p.over != nil || p.stuck >= 0
}

// cannotComplete is the first wave not complete whose every member (but
// the held ones) failed or was skipped, one failed at least: it can never
// be done. -1: none.
func (p *planner) cannotComplete() int {
	for i, w := range p.waves {
		if prevState(p.prev, i, p.restart) == WaveComplete || p.waveFailed[i] == 0 {
			continue
		}
		left := 0
		for _, c := range w {
			if !p.ctl.Hold[c.Name] && !p.failing(c) && !p.skip[c.Name] {
				left++
			}
		}
		if left == 0 {
			return i
		}
	}
	return -1
}

// said names a budget: the rollout's as "the error budget of N", a wave's
// by its wave.
func (b *budget) said(p *planner) string {
	switch {
	case b.wave < 0:
		return fmt.Sprintf("the error budget of %d", b.of)
	case b.canary:
		return fmt.Sprintf("wave %s's error budget of 0 (a first wave's, unless its errorBudget says otherwise)", p.spec.Waves[b.wave].Name)
	}
	return fmt.Sprintf("wave %s's error budget of %d", p.spec.Waves[b.wave].Name, b.of)
}

// failure says why the rollout stops: the budget exceeded and the
// children that failed against it, or the wave that cannot complete.
func (p *planner) failure() string {
	if b := p.over; b != nil {
		more := ""
		if b.failed > len(b.names) {
			more = fmt.Sprintf("; and %d more", b.failed-len(b.names))
		}
		return fmt.Sprintf("%d failed child(ren), more than %s: %s%s", b.failed, b.said(p), strings.Join(b.names, "; "), more)
	}
	i := p.stuck
	b := &p.budgets[p.budgetOf[i]]
	return fmt.Sprintf("every member of wave %s failed or was skipped (%d failed, within %s: %s), so the wave cannot complete",
		p.spec.Waves[i].Name, p.waveFailed[i], b.said(p), strings.Join(p.failedIn(i, MaxListed), "; "))
}

// failureShort is failure without the children's names, for an Event.
func (p *planner) failureShort() string {
	if b := p.over; b != nil {
		return fmt.Sprintf("%d failed, more than %s", b.failed, b.said(p))
	}
	return fmt.Sprintf("every member of wave %s failed or was skipped", p.spec.Waves[p.stuck].Name)
}

// failedIn is "name: why" of wave i's failed members, at most max.
func (p *planner) failedIn(i, max int) []string {
	var out []string
	for _, c := range p.waves[i] {
		if p.failing(c) && len(out) < max {
			out = append(out, c.Name+": "+Short(c.Why, MaxWhy))
		}
	}
	return out
}

// absorbed says the failures within their budgets, which the rollout
// goes on without: an Event for each wave whose count rose since the last
// plan, and the note the rollout's message ends with ("" when none).
func (p *planner) absorbed() string {
	if p.overBudget || p.failed == 0 {
		return ""
	}
	var waves []string
	for i, n := range p.waveFailed {
		if n == 0 {
			continue
		}
		name := p.spec.Waves[i].Name
		waves = append(waves, fmt.Sprintf("%d in wave %s", n, name))
		was := 0
		if prevState(p.prev, i, p.restart) != "" && p.prev.Waves[i].Name == name {
			was = p.prev.Waves[i].Failed
		}
		if n > was {
			p.event(EventFailureWithinBudget, "wave %s: %d failed child(ren), within %s: %s; the rollout goes on without them (fix them, or skip them: pvctl rollout skip)",
				name, n, p.budgets[p.budgetOf[i]].said(p), strings.Join(p.failedIn(i, 5), "; "))
		}
	}
	return fmt.Sprintf("; failed within the error budget, not waited for: %s (%s)", strings.Join(waves, ", "), listed(p.failedNames()))
}

// failedNames are the failed children's names, in name order.
func (p *planner) failedNames() []string {
	var out []string
	for i := range p.children {
		if p.failing(&p.children[i]) {
			out = append(out, p.children[i].Name)
		}
	}
	return out
}
