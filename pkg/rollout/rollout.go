// Package rollout plans a PackageVariantSet's staged rollout (rule:
// staged-rollouts): given the set's rollout spec, where the last reconcile
// left it, the revision the set's upstream now resolves to, the children
// with their labels, the upstream each child is pinned to and how each is
// doing (read fresh by the caller), it says which upstream each child gets
// this time and where the rollout stands. It is pure: the controller and
// pvctl run call it from the same set reconciler.
//
// The rules:
//
//   - every child of a set with a rollout is pinned to an exact revision
//     (workspaceName and revision), never to the set's floating upstream,
//     so that nothing moves but through the rollout;
//   - a set's first revision is not rolled out: its children start there;
//   - a new target revision starts a rollout from wave one (also in the
//     middle of another); its membership (which child is in which wave) is
//     fixed then, in name order; a target that appears later joins the
//     first unfinished wave that selects it (else the last) and says so;
//   - one wave is open at a time; it moves at most maxUpdate children at
//     once (failed ones keep their place); a child not yet moved keeps the
//     upstream it has (a new child: the rollout's From revision);
//   - a wave is complete when each child is done (the caller read it at
//     the target, published and Ready), held or skipped; then the next
//     opens;
//   - more failed children than the error budget pause the rollout (no
//     child moves; the moved ones stay), naming them; so does the pause
//     control; a held child never moves; a skipped one counts as done.
package rollout

import (
	"fmt"
	"sort"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Phases and wave states.
const (
	Progressing = "Progressing"
	Paused      = "Paused"
	Complete    = "Complete"

	WavePending  = "Pending"
	WaveOpen     = "Open"
	WaveComplete = "Complete"
)

// Child is one child of the set as the rollout sees it.
type Child struct {
	Name string
	// Labels are the labels of the Repository or object it was made for.
	Labels map[string]string
	// Current is the upstream the existing child has (nil: a new child).
	Current *pv.Upstream
	// Done: read fresh, at the target revision, published and Ready. Failed:
	// stalled, or moved and not Ready past the progress deadline; Why says
	// why.
	Done, Failed bool
	Why          string
}

// Controls are the operator's: pause, hold targets, skip failed ones.
type Controls struct {
	Paused       bool
	Hold, Skip   map[string]bool
	PauseMessage string // why it is paused (the control's words)
}

// Result is a plan: the upstream each child gets, the rollout's new
// status, and what happened (for Events), in order.
type Result struct {
	Pins   map[string]pv.Upstream
	Status v1alpha2.RolloutStatus
	Events []string
}

// Pin is the exact upstream of a revision: its workspace and number.
func Pin(base pv.Upstream, r v1alpha2.RevisionRef) pv.Upstream {
	return pv.Upstream{Repo: base.Repo, Package: base.Package, WorkspaceName: r.Workspace, Revision: r.Revision}
}

func pinnedTo(u *pv.Upstream, r v1alpha2.RevisionRef) bool {
	return u != nil && u.Semver == "" && u.WorkspaceName == r.Workspace && u.Revision == r.Revision
}

func exact(u *pv.Upstream) bool {
	return u != nil && u.Semver == "" && u.WorkspaceName != "" && u.Revision != 0
}

// Plan plans one reconcile of a rollout. children must be sorted by name.
func Plan(spec *v1alpha2.Rollout, prev *v1alpha2.RolloutStatus, base pv.Upstream, target v1alpha2.RevisionRef, children []Child, ctl Controls) Result {
	res := Result{Pins: map[string]pv.Upstream{}}
	st := v1alpha2.RolloutStatus{Target: target}
	var restart bool
	switch {
	case prev == nil || prev.Target.Name == "":
		// The set's first revision: nothing to roll from.
		st.Phase = Complete
	case prev.Target.Name != target.Name:
		from := prev.Target
		st.From, restart = &from, true
		res.Events = append(res.Events, fmt.Sprintf("RolloutStarted: rolling out %s from %s in %d wave(s)", target.Name, from.Name, len(spec.Waves)))
	default:
		st.From, st.Phase = prev.From, prev.Phase
	}
	// Membership: fixed at the start; newcomers join a wave.
	waveOf := map[string]int{}
	if !restart && prev != nil {
		for i, w := range prev.Waves {
			if i >= len(spec.Waves) || w.Name != spec.Waves[i].Name {
				break // the waves were edited: assign again below
			}
			for _, m := range w.Members {
				waveOf[m] = i
			}
		}
	}
	byName := map[string]*Child{}
	for i := range children {
		byName[children[i].Name] = &children[i]
	}
	var unassigned []*Child
	for i := range children {
		if _, ok := waveOf[children[i].Name]; !ok {
			unassigned = append(unassigned, &children[i])
		}
	}
	if len(unassigned) > 0 {
		fresh := restart || prev == nil || len(waveOf) == 0
		assign(spec, unassigned, len(children), waveOf, fresh, prev)
		if !fresh && st.Phase != Complete {
			for _, c := range unassigned {
				res.Events = append(res.Events, fmt.Sprintf("RolloutJoined: %s joins wave %s", c.Name, spec.Waves[waveOf[c.Name]].Name))
			}
		}
	}
	waves := make([][]*Child, len(spec.Waves))
	for _, c := range children {
		if i, ok := waveOf[c.Name]; ok {
			waves[i] = append(waves[i], byName[c.Name])
		}
	}
	if st.Phase == Complete && !restart {
		// Nothing rolls: every child at the target (a first revision, or a
		// finished rollout); held ones keep theirs.
		for _, c := range children {
			if ctl.Hold[c.Name] && c.Current != nil {
				res.Pins[c.Name] = *c.Current
				st.Held = append(st.Held, c.Name)
				continue
			}
			res.Pins[c.Name] = Pin(base, target)
		}
		for i, w := range spec.Waves {
			ws := v1alpha2.WaveStatus{Name: w.Name, State: WaveComplete, Members: names(waves[i])}
			for _, c := range waves[i] {
				if p := res.Pins[c.Name]; pinnedTo(&p, target) {
					ws.Moved++
					if c.Done || c.Current == nil {
						ws.Done++
					}
				}
			}
			st.Waves = append(st.Waves, ws)
		}
		st.Message = completeMessage(target, st.Held)
		res.Status = st
		return res
	}

	// Failures and the budget.
	failed := 0
	for _, c := range children {
		if c.Failed && !ctl.Skip[c.Name] && pinnedTo(c.Current, target) {
			failed++
			st.Failed = append(st.Failed, c.Name+": "+c.Why)
		}
		if ctl.Skip[c.Name] {
			st.Skipped = append(st.Skipped, c.Name)
		}
		if ctl.Hold[c.Name] {
			st.Held = append(st.Held, c.Name)
		}
	}
	budget := 0
	if spec.ErrorBudget != nil {
		budget = spec.ErrorBudget.Of(len(children))
	}
	overBudget := failed > budget
	keep := func(c *Child) pv.Upstream {
		switch {
		case c.Current != nil && exact(c.Current):
			return *c.Current
		case st.From != nil:
			return Pin(base, *st.From)
		}
		return Pin(base, target)
	}
	open := -1
	for i := range spec.Waves {
		ws := v1alpha2.WaveStatus{Name: spec.Waves[i].Name, Members: names(waves[i]), State: WavePending}
		// A wave once complete stays so (its children are not read again).
		wasComplete, complete := prevState(prev, i, restart) == WaveComplete, true
		for _, c := range waves[i] {
			if wasComplete {
				if pinnedTo(c.Current, target) {
					ws.Moved++
					ws.Done++
				}
				continue
			}
			moved := pinnedTo(c.Current, target)
			if moved {
				ws.Moved++
			}
			if (moved && c.Done) || ctl.Skip[c.Name] || ctl.Hold[c.Name] {
				if moved && c.Done {
					ws.Done++
				}
				continue
			}
			complete = false
		}
		switch {
		case open < 0 && complete:
			ws.State = WaveComplete
			for _, c := range waves[i] {
				if ctl.Hold[c.Name] {
					res.Pins[c.Name] = keep(c)
				} else {
					res.Pins[c.Name] = Pin(base, target)
				}
			}
			if prevState(prev, i, restart) != WaveComplete {
				res.Events = append(res.Events, fmt.Sprintf("WaveCompleted: wave %s is at %s (%d children)", ws.Name, target.Name, len(waves[i])))
			}
		case open < 0:
			open, ws.State = i, WaveOpen
			if prevState(prev, i, restart) != WaveOpen {
				res.Events = append(res.Events, fmt.Sprintf("WaveOpened: wave %s opened (%d children)", ws.Name, len(waves[i])))
			}
			max := len(waves[i])
			if m := spec.Waves[i].MaxUpdate; m != nil {
				max = m.Of(len(waves[i]))
				if max < 1 {
					max = 1
				}
			}
			inFlight := 0
			for _, c := range waves[i] {
				if pinnedTo(c.Current, target) && !c.Done && !ctl.Skip[c.Name] {
					inFlight++
				}
			}
			for _, c := range waves[i] {
				switch {
				case pinnedTo(c.Current, target):
					res.Pins[c.Name] = Pin(base, target) // moved: stays moved
				case ctl.Hold[c.Name] || overBudget || ctl.Paused || inFlight >= max:
					res.Pins[c.Name] = keep(c)
				default:
					res.Pins[c.Name] = Pin(base, target)
					inFlight++
					ws.Moved++
				}
			}
		default:
			for _, c := range waves[i] {
				if pinnedTo(c.Current, target) {
					res.Pins[c.Name] = Pin(base, target) // moved by an earlier rollout plan: never back
				} else {
					res.Pins[c.Name] = keep(c)
				}
			}
		}
		st.Waves = append(st.Waves, ws)
	}
	switch {
	case open < 0:
		st.Phase, st.Message = Complete, completeMessage(target, st.Held)
		res.Events = append(res.Events, fmt.Sprintf("RolloutComplete: %s", st.Message))
	case overBudget:
		st.Phase = Paused
		st.Message = fmt.Sprintf("paused in wave %s: %d failed child(ren), more than the error budget of %d: %s; fix them or skip them (pvctl rollout skip)",
			st.Waves[open].Name, failed, budget, strings.Join(st.Failed, "; "))
		if prev == nil || prev.Phase != Paused || restart {
			res.Events = append(res.Events, "RolloutPaused: "+st.Message)
		}
	case ctl.Paused:
		st.Phase, st.Message = Paused, fmt.Sprintf("paused in wave %s: %s", st.Waves[open].Name, ctl.PauseMessage)
	default:
		st.Phase = Progressing
		w := st.Waves[open]
		st.Message = fmt.Sprintf("wave %s: %d of %d children moved, %d done", w.Name, w.Moved, len(w.Members), w.Done)
	}
	res.Status = st
	return res
}

func completeMessage(target v1alpha2.RevisionRef, held []string) string {
	m := fmt.Sprintf("every child is at %s", target.Name)
	if len(held) > 0 {
		m += fmt.Sprintf(" but the held ones (%s)", strings.Join(held, ", "))
	}
	return m
}

func prevState(prev *v1alpha2.RolloutStatus, i int, restart bool) string {
	if prev == nil || restart || i >= len(prev.Waves) {
		return ""
	}
	return prev.Waves[i].State
}

// assign puts children in waves: by each wave's selector and size, in
// order, when the rollout starts (fresh); a child that appears later
// joins the first unfinished wave that selects it. A child no wave takes
// goes to the last wave.
func assign(spec *v1alpha2.Rollout, cs []*Child, total int, waveOf map[string]int, fresh bool, prev *v1alpha2.RolloutStatus) {
	taken := make([]int, len(spec.Waves))
	for _, i := range waveOf {
		taken[i]++
	}
	for _, c := range cs {
		chosen := len(spec.Waves) - 1
		for i, w := range spec.Waves {
			if w.Selector != nil && !w.Selector.Matches(c.Labels) {
				continue
			}
			if fresh {
				if w.Size != nil && taken[i] >= w.Size.Of(total) {
					continue
				}
			} else if prev != nil && i < len(prev.Waves) && prev.Waves[i].State == WaveComplete {
				continue
			}
			chosen = i
			break
		}
		waveOf[c.Name] = chosen
		taken[chosen]++
	}
}

func names(cs []*Child) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	sort.Strings(out)
	return out
}
