package rollout

import (
	"fmt"
	"sort"
	"strings"
	"time"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Plan plans one reconcile of a rollout. children must be sorted by name.
// It runs in named stages: start (a new target restarts), membership
// (which child is in which wave), then, unless nothing rolls (finished),
// judge (failures, skips, the budget), pin (each wave's state and each
// child's upstream) and phase (where the rollout stands, and what it
// says).
func Plan(spec *v1alpha2.Rollout, prev *v1alpha2.RolloutStatus, base pv.Upstream, target v1alpha2.RevisionRef, children []Child, ctl Controls) Result {
	p := &planner{spec: spec, prev: prev, base: base, target: target, children: children, ctl: ctl,
		res: Result{Pins: map[string]pv.Upstream{}}, st: v1alpha2.RolloutStatus{Target: target}}
	res := p.plan()
	if ctl.Undo != "" && ctl.Undo != target.Name {
		// Said, not silently dropped: a typo, or an undo of an earlier
		// target that a new revision has replaced.
		res.Status.Message += fmt.Sprintf("; the undo control names %s, not this rollout's target %s: not applied", said(ctl.Undo), target.Name)
	}
	if t, _, ok := strings.Cut(ctl.Retry, "@"); ctl.Retry != "" && (!ok || t != target.Name) && (prev == nil || ctl.Retry != prev.Retried) {
		// Said too: a typo, a value without its stamp, or another target's.
		res.Status.Message += fmt.Sprintf("; the retry control %q does not name this rollout's target %s as TARGET@STAMP: not applied", said(ctl.Retry), target.Name)
	}
	return res
}

// maxControlSaid bounds how much of a control annotation's value a
// message repeats: an annotation may hold 256 KiB, a status message
// should not.
const maxControlSaid = 128

// said is a control's value as a message repeats it: at most
// maxControlSaid bytes, then how many more.
func said(v string) string {
	if len(v) <= maxControlSaid {
		return v
	}
	return fmt.Sprintf("%s... (%d bytes more)", v[:maxControlSaid], len(v)-maxControlSaid)
}

// plan is Plan's stages.
func (p *planner) plan() Result {
	spec, children := p.spec, p.children
	p.start()
	p.membership()
	if p.undoing() || p.keptUndone {
		return p.undo()
	}
	if p.st.Phase == Complete && !p.restart {
		return p.finished()
	}
	p.judge()
	if p.overBudget && p.spec.OnFailure == OnFailureUndo && p.st.From != nil && !p.restart {
		p.onFailure = true
		return p.undo()
	}
	if empty := emptyWaves(spec, waveStatuses(spec, p.waves)); len(empty) > 0 && !anyMoved(children, p.target) {
		return p.emptyPause(empty)
	}
	p.windows()
	open := p.pin()
	p.stamp()
	p.phase(open)
	p.res.Status = p.st
	return p.res
}

// planner is one Plan's inputs and what its stages worked out so far.
type planner struct {
	spec     *v1alpha2.Rollout
	prev     *v1alpha2.RolloutStatus
	base     pv.Upstream
	target   v1alpha2.RevisionRef
	children []Child
	ctl      Controls

	res     Result
	st      v1alpha2.RolloutStatus
	restart bool       // a new target: the rollout starts from wave one
	waves   [][]*Child // the children of each wave (membership)
	// judge's: the skipped children, how many failed, each wave's
	// budget and counts (budget.go), and whether the rollout stops on
	// them: a budget exceeded (over) or a wave that cannot complete
	// (stuck, -1: none).
	skip                    map[string]bool
	failed                  int
	budgets                 []budget
	budgetOf                []int
	waveFailed, waveSkipped []int
	over                    *budget
	stuck                   int
	overBudget              bool
	// onFailure: this plan undoes the rollout on failure (spec.rollout.
	// onFailure: undo); keptUndone: an earlier one did, and no retry came.
	onFailure, keptUndone bool
	// held: a window holds new moves back (windows).
	held bool
}

func (p *planner) event(reason EventReason, format string, args ...any) {
	p.res.Events = append(p.res.Events, Event{Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// start: a first revision has nothing to roll from (Complete); a new
// target starts a rollout from the last one; else it goes on.
func (p *planner) start() {
	if p.prev != nil {
		p.st.Retried = p.prev.Retried
	}
	switch prev := p.prev; {
	case prev != nil && prev.UndoneOnFailure && prev.Target.Name == p.target.Name && prev.From != nil:
		if !p.retried() { // undone on failure: so until a person retries
			p.st.From, p.keptUndone = prev.From, true
			return
		}
		from := *prev.From
		p.st.From, p.restart, p.st.Retried = &from, true, p.ctl.Retry
		p.event(EventRolloutStarted, "rolling out %s again from %s in %d wave(s), retried (pvkit.dev/rollout-retry %s) after its undo on failure", p.target.Name, from.Name, len(p.spec.Waves), p.ctl.Retry)
	case prev == nil || prev.Target.Name == "":
		p.st.Phase = Complete
	case prev.Target.Name != p.target.Name:
		from := prev.Target
		if prev.Undone && prev.From != nil {
			from = *prev.From // the children are back there
		}
		p.st.From, p.restart = &from, true
		p.event(EventRolloutStarted, "rolling out %s from %s in %d wave(s)", p.target.Name, from.Name, len(p.spec.Waves))
	case prev.Undone && !prev.UndoneOnFailure && p.ctl.Undo != p.target.Name && prev.From != nil:
		from := *prev.From // resumed after an undo: again from wave one
		p.st.From, p.restart = &from, true
		p.event(EventRolloutStarted, "rolling out %s again from %s in %d wave(s), after its undo", p.target.Name, from.Name, len(p.spec.Waves))
	default:
		p.st.From, p.st.Phase = prev.From, prev.Phase
	}
}

// undoing: the operator undoes this target's rollout, which has a from
// revision to go back to.
func (p *planner) undoing() bool {
	return p.ctl.Undo != "" && p.ctl.Undo == p.target.Name && !p.restart && p.st.From != nil
}

// undo is the plan of an undone rollout (rule: rollout-undo): every child
// but the held ones pinned to the from revision at once, one decision, no
// waves; the waves keep the states and counts they had; Paused until
// resumed. The message does not change while the children move back, so
// that the set's status is written once.
func (p *planner) undo() Result {
	from := *p.st.From
	back := 0
	for _, c := range p.children {
		if p.ctl.Hold[c.Name] && c.Current != nil {
			p.res.Pins[c.Name] = *c.Current
			p.st.Held = append(p.st.Held, c.Name)
			continue
		}
		if pinnedTo(c.Current, p.target) {
			back++
		}
		p.res.Pins[c.Name] = Pin(p.base, from)
	}
	if p.prev != nil {
		p.st.Waves = append(p.st.Waves, p.prev.Waves...)
		for i := range p.st.Waves {
			p.st.Waves[i].DoneMembers, p.st.Waves[i].Waiting = nil, nil
		}
	}
	p.st.Phase, p.res.Pause, p.st.Undone = Paused, PausedByUndo, true
	p.st.Message = fmt.Sprintf("undone: every child is pinned back to %s (pvkit.dev/rollout-undo); publish a fix, or resume to roll %s out again from wave one",
		from.Name, p.target.Name)
	switch {
	case p.keptUndone && !p.undoing():
		// Undone on failure before: the failures and the message as they
		// were (the status is written once).
		p.st.UndoneOnFailure, p.st.Failed, p.st.FailedCount, p.st.Message = true, p.prev.Failed, p.prev.FailedCount, planMessage(p.prev.Message)
	case p.onFailure:
		p.st.UndoneOnFailure = true
		p.st.Message = fmt.Sprintf("undone on failure (spec.rollout.onFailure: undo): %s; every child is pinned back to %s; publish a fix, or retry %s from wave one (pvctl rollout resume)",
			p.failure(), from.Name, p.target.Name)
		p.event(EventRolloutUndone, "rollout of %s undone on failure (%s): %d moved child(ren) go back to %s at once, with the %d others",
			p.target.Name, p.failureShort(), back, from.Name, len(p.children)-back)
	case p.prev == nil || !p.prev.Undone:
		p.event(EventRolloutUndone, "rollout of %s undone: %d moved child(ren) go back to %s at once, with the %d others", p.target.Name, back, from.Name, len(p.children)-back)
	}
	p.res.Status = p.st
	return p.res
}

// membership: fixed at the start; newcomers join a wave. Until a child
// moves, a rollout held at the start by an empty wave assigns it again.
func (p *planner) membership() {
	spec, prev := p.spec, p.prev
	waveOf := map[string]int{}
	if !p.restart && prev != nil && !(len(emptyWaves(spec, prev.Waves)) > 0 && !anyMoved(p.children, p.target)) {
		for i, w := range prev.Waves {
			if i >= len(spec.Waves) || w.Name != spec.Waves[i].Name {
				break // the waves were edited: assign again below
			}
			for _, m := range w.Members {
				waveOf[m] = i
			}
		}
	}
	var unassigned []*Child
	for i := range p.children {
		if _, ok := waveOf[p.children[i].Name]; !ok {
			unassigned = append(unassigned, &p.children[i])
		}
	}
	if len(unassigned) > 0 {
		fresh := p.restart || prev == nil || len(waveOf) == 0
		if fresh && spec.SpreadBy != "" {
			unassigned = spread(unassigned, spec.SpreadBy)
		}
		assign(spec, unassigned, len(p.children), waveOf, fresh, prev)
		if !fresh && p.st.Phase != Complete {
			for _, c := range unassigned {
				p.event(EventRolloutJoined, "%s joins wave %s", c.Name, spec.Waves[waveOf[c.Name]].Name)
			}
		}
	}
	p.waves = make([][]*Child, len(spec.Waves))
	for i := range p.children {
		if w, ok := waveOf[p.children[i].Name]; ok {
			p.waves[w] = append(p.waves[w], &p.children[i])
		}
	}
}

// finished is the plan when nothing rolls: every child at the target (a
// first revision, or a finished rollout); held ones keep theirs.
func (p *planner) finished() Result {
	for _, c := range p.children {
		if p.ctl.Hold[c.Name] && c.Current != nil {
			p.res.Pins[c.Name] = *c.Current
			p.st.Held = append(p.st.Held, c.Name)
			continue
		}
		p.res.Pins[c.Name] = Pin(p.base, p.target)
	}
	for i, w := range p.spec.Waves {
		ws := v1alpha2.WaveStatus{Name: w.Name, State: WaveComplete, Members: names(p.waves[i])}
		// A finished rollout keeps its counts as it finished; a child
		// new since, or every child at the set's first revision, starts
		// at the target.
		was := finished(p.prev, i, w.Name, &ws)
		for _, c := range p.waves[i] {
			if pin := p.res.Pins[c.Name]; pinnedTo(&pin, p.target) && !was[c.Name] {
				ws.Moved++
				ws.Done++
			}
		}
		p.st.Waves = append(p.st.Waves, ws)
	}
	if p.prev != nil {
		p.st.Skipped = p.prev.Skipped
	}
	p.skip = map[string]bool{}
	for _, n := range p.st.Skipped {
		p.skip[n] = true
	}
	for i := range p.st.Waves {
		ws := &p.st.Waves[i]
		ws.Failed, ws.Skipped = 0, 0
		for _, c := range p.waves[i] {
			if p.failing(c) {
				ws.Failed++
			}
			if p.skip[c.Name] {
				ws.Skipped++
			}
		}
	}
	p.st.Message = completeMessage(p.target, p.st.Held, p.st.Skipped, p.failedNames())
	p.res.Status = p.st
	return p.res
}

// keep is the upstream a child that does not move gets: its own when
// exact, else the rollout's from revision (a new child), else the target.
func (p *planner) keep(c *Child) pv.Upstream {
	switch {
	case c.Current != nil && exact(c.Current):
		return *c.Current
	case p.st.From != nil:
		return Pin(p.base, *p.st.From)
	}
	return Pin(p.base, p.target)
}

// emptyPause is the plan of a rollout that cannot start: a wave with a
// selector has no child. Nothing moves; each child keeps what it has.
func (p *planner) emptyPause(empty []string) Result {
	for i := range p.children {
		p.res.Pins[p.children[i].Name] = p.keep(&p.children[i])
	}
	for i, w := range p.spec.Waves {
		p.st.Waves = append(p.st.Waves, v1alpha2.WaveStatus{Name: w.Name, State: WavePending, Members: names(p.waves[i])})
	}
	p.st.Phase, p.res.Pause = Paused, PausedByEmptyWave
	p.st.Message = fmt.Sprintf("not started: wave(s) %s select no child of the %d (their selector matches none: a typo, or a target that lost its label); "+
		"nothing moves until each selects one: fix the selector or the labels, or set allowEmpty: true on the wave",
		strings.Join(empty, ", "), len(p.children))
	if p.prev == nil || p.restart || !strings.HasPrefix(p.prev.Message, p.st.Message) { // Plan may add to it
		p.event(EventRolloutPaused, "%s", p.st.Message)
	}
	p.res.Status = p.st
	return p.res
}

// pin gives each wave its state and counts and each child its upstream;
// it returns the open wave (-1: none, the rollout is complete).
func (p *planner) pin() (open int) {
	open = -1
	for i := range p.spec.Waves {
		ws, complete := p.count(i)
		switch {
		case open < 0 && complete:
			ws.State = WaveComplete
			for _, c := range p.waves[i] {
				if p.ctl.Hold[c.Name] {
					p.res.Pins[c.Name] = p.keep(c)
				} else {
					p.res.Pins[c.Name] = Pin(p.base, p.target)
				}
			}
			if prevState(p.prev, i, p.restart) != WaveComplete {
				p.event(EventWaveCompleted, "wave %s is at %s (%d children)", ws.Name, p.target.Name, len(p.waves[i]))
			}
		case open < 0 && p.held && prevState(p.prev, i, p.restart) != WaveOpen:
			open = i // the wave to open, held by a window: it opens later
			for _, c := range p.waves[i] {
				if pinnedTo(c.Current, p.target) {
					p.res.Pins[c.Name] = Pin(p.base, p.target)
				} else {
					p.res.Pins[c.Name] = p.keep(c)
				}
			}
		case open < 0:
			open, ws.State = i, WaveOpen
			if prevState(p.prev, i, p.restart) != WaveOpen {
				p.event(EventWaveOpened, "wave %s opened (%d children)", ws.Name, len(p.waves[i]))
			}
			p.move(i, &ws)
		default:
			for _, c := range p.waves[i] {
				if pinnedTo(c.Current, p.target) {
					p.res.Pins[c.Name] = Pin(p.base, p.target) // moved by an earlier rollout plan: never back
				} else {
					p.res.Pins[c.Name] = p.keep(c)
				}
			}
		}
		p.st.Waves = append(p.st.Waves, ws)
	}
	return open
}

// count is wave i's status as its children stand (Pending until pin
// says otherwise) and whether it is complete: each child done, held or
// skipped. A wave once complete stays so (its children are not read
// again).
func (p *planner) count(i int) (ws v1alpha2.WaveStatus, complete bool) {
	ws = v1alpha2.WaveStatus{Name: p.spec.Waves[i].Name, Members: names(p.waves[i]), State: WavePending}
	wasComplete := prevState(p.prev, i, p.restart) == WaveComplete
	var was map[string]bool
	if wasComplete {
		was = finished(p.prev, i, ws.Name, &ws)
	}
	complete = true
	for _, c := range p.waves[i] {
		moved := pinnedTo(c.Current, p.target)
		if wasComplete {
			if moved && !was[c.Name] {
				ws.Moved++
				ws.Done++
			}
			continue
		}
		if moved {
			ws.Moved++
		}
		if moved && c.Done {
			ws.Done++
			ws.DoneMembers = append(ws.DoneMembers, c.Name)
			continue
		}
		complete = complete && (p.skip[c.Name] || p.ctl.Hold[c.Name] || (p.failing(c) && !p.overBudget))
	}
	ws.Failed, ws.Skipped = p.waveFailed[i], p.waveSkipped[i]
	if sort.Strings(ws.DoneMembers); complete {
		ws.DoneMembers = nil // complete: its members are not read again
	}
	return ws, complete
}

// move moves the open wave's children to the target, at most its
// maxUpdate in flight (moved, not done, not skipped), unless held, paused
// or over the budget; the moved ones stay moved.
func (p *planner) move(i int, ws *v1alpha2.WaveStatus) {
	max := len(p.waves[i])
	if m := p.spec.Waves[i].MaxUpdate; m != nil {
		max = m.Of(len(p.waves[i]))
		if max < 1 {
			max = 1
		}
	}
	inFlight := 0
	for _, c := range p.waves[i] {
		if pinnedTo(c.Current, p.target) && !c.Done && !p.skip[c.Name] {
			inFlight++
		}
	}
	// With spreadBy, the batches too are taken in turn from each value of
	// the label (a 200-store wave's first batch of 50 was 45
	// stores of one region, taken in name order).
	order := p.waves[i]
	if p.spec.SpreadBy != "" {
		order = spread(order, p.spec.SpreadBy)
	}
	for _, c := range order {
		switch {
		case pinnedTo(c.Current, p.target):
			p.res.Pins[c.Name] = Pin(p.base, p.target) // moved: stays moved
		case p.ctl.Hold[c.Name] || p.overBudget || p.ctl.Paused || p.held || inFlight >= max:
			p.res.Pins[c.Name] = p.keep(c)
		default:
			p.res.Pins[c.Name] = Pin(p.base, p.target)
			inFlight++
			ws.Moved++
		}
	}
}

// phase says where the rollout stands, given its open wave, and what it
// waits for.
func (p *planner) phase(open int) {
	st := &p.st
	switch {
	case open < 0:
		st.Phase, st.Message = Complete, completeMessage(p.target, st.Held, st.Skipped, p.failedNames())
		p.event(EventRolloutComplete, "%s", st.Message)
	case p.overBudget:
		st.Phase, p.res.Pause = Paused, PausedByBudget
		st.Message = fmt.Sprintf("paused in wave %s: %s; fix them or skip them (pvctl rollout skip)", st.Waves[open].Name, p.failure())
		if p.prev == nil || p.prev.Phase != Paused || p.restart {
			p.event(EventRolloutPaused, "%s", st.Message)
		}
	case p.ctl.Paused:
		st.Phase, st.Message, p.res.Pause = Paused, fmt.Sprintf("paused in wave %s: %s", st.Waves[open].Name, p.ctl.PauseMessage), PausedByControl
	default:
		st.Phase = Progressing
		w := st.Waves[open]
		st.Message = fmt.Sprintf("wave %s: %d of %d children moved, %d done", w.Name, w.Moved, len(w.Members), w.Done) +
			waiting(p.waves[open], w, p.target, p.skip) + p.absorbed()
		if h := st.Window; h != nil {
			verb := "moves no new child"
			if w.State == WavePending {
				verb = "does not open"
			}
			st.Message = fmt.Sprintf("wave %s %s: %s; ", w.Name, verb, h.Reason) + st.Message
		}
	}
	if open < 0 {
		st.Window, p.res.Recheck = nil, time.Time{} // complete: no window matters
	}
}
