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
//     control; a held child never moves;
//   - a skip applies to a failed child only (it takes effect once the
//     child fails, and stays): the rollout stops waiting for it; it is
//     reported as skipped, never as done;
//   - a wave whose selector matches no child when the rollout starts
//     pauses it before anything moves, naming the wave (a selector typo,
//     a canary that lost its label), unless the wave allows it
//     (allowEmpty); until something moves, the membership is assigned
//     again on each plan, so that fixing the labels or the selector
//     unblocks it;
//   - the status stays small whatever the children: a failed child's why
//     is cut to MaxWhy bytes and at most MaxListed failed children are
//     named, with the count of all (FailedCount).
package rollout

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	listing "github.com/pvkit/pvkit/internal/names"

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

// Bounds of the rollout's status, so that it stays small whatever the
// children and their messages (a failed child's whole condition message,
// up to 32 KiB, was kept: 50 children made a 1.64 MB status, past what an
// API server stores).
const (
	// MaxListed is how many failed children the status names.
	MaxListed = 20
	// MaxWhy is how many bytes of a child's reason the status keeps.
	MaxWhy = 256
)

// Child is one child of the set as the rollout sees it.
type Child struct {
	Name string
	// Labels are the labels of the Repository or object it was made for.
	Labels map[string]string
	// Current is the upstream the existing child has (nil: a new child).
	Current *pv.Upstream
	// Done: read fresh, at the target revision, published and Ready. Failed:
	// stalled, or moved and not Ready past the progress deadline. Why says
	// why it failed, or what a moved child that is neither done nor failed
	// waits for.
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
	// Membership: fixed at the start; newcomers join a wave. Until a child
	// moves, a rollout held at the start by an empty wave assigns it again.
	waveOf := map[string]int{}
	if !restart && prev != nil && !(len(emptyWaves(spec, prev.Waves)) > 0 && !anyMoved(children, target)) {
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
			// A finished rollout keeps its counts as it finished; a child
			// new since, or every child at the set's first revision, starts
			// at the target.
			was := finished(prev, i, w.Name, &ws)
			for _, c := range waves[i] {
				if p := res.Pins[c.Name]; pinnedTo(&p, target) && !was[c.Name] {
					ws.Moved++
					ws.Done++
				}
			}
			st.Waves = append(st.Waves, ws)
		}
		if prev != nil {
			st.Skipped = prev.Skipped
		}
		st.Message = completeMessage(target, st.Held, st.Skipped)
		res.Status = st
		return res
	}

	// Failures, skips and the budget. A skip applies to a failed child (a
	// skip of one that never failed waits for it to fail), and stays.
	wasSkipped := map[string]bool{}
	if prev != nil && !restart {
		for _, n := range prev.Skipped {
			wasSkipped[n] = true
		}
	}
	skip := map[string]bool{}
	failed := 0
	for _, c := range children {
		moved := pinnedTo(c.Current, target)
		if ctl.Skip[c.Name] && ((c.Failed && moved) || wasSkipped[c.Name]) {
			skip[c.Name] = true
			st.Skipped = append(st.Skipped, c.Name)
		}
		if c.Failed && !skip[c.Name] && moved {
			failed++
			if len(st.Failed) < MaxListed {
				st.Failed = append(st.Failed, c.Name+": "+Short(c.Why, MaxWhy))
			}
		}
		if ctl.Hold[c.Name] {
			st.Held = append(st.Held, c.Name)
		}
	}
	st.FailedCount = failed
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
	if empty := emptyWaves(spec, waveStatuses(spec, waves)); len(empty) > 0 && !anyMoved(children, target) {
		return emptyPause(res, st, spec, prev, restart, waves, children, empty, keep)
	}
	open := -1
	for i := range spec.Waves {
		ws := v1alpha2.WaveStatus{Name: spec.Waves[i].Name, Members: names(waves[i]), State: WavePending}
		// A wave once complete stays so (its children are not read again).
		wasComplete, complete := prevState(prev, i, restart) == WaveComplete, true
		var was map[string]bool
		if wasComplete {
			was = finished(prev, i, ws.Name, &ws)
		}
		for _, c := range waves[i] {
			if wasComplete {
				if pinnedTo(c.Current, target) && !was[c.Name] {
					ws.Moved++
					ws.Done++
				}
				continue
			}
			moved := pinnedTo(c.Current, target)
			if moved {
				ws.Moved++
			}
			if (moved && c.Done) || skip[c.Name] || ctl.Hold[c.Name] {
				if moved && c.Done {
					ws.Done++
					ws.DoneMembers = append(ws.DoneMembers, c.Name)
				}
				continue
			}
			complete = false
		}
		if sort.Strings(ws.DoneMembers); complete {
			ws.DoneMembers = nil // complete: its members are not read again
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
				if pinnedTo(c.Current, target) && !c.Done && !skip[c.Name] {
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
		st.Phase, st.Message = Complete, completeMessage(target, st.Held, st.Skipped)
		res.Events = append(res.Events, fmt.Sprintf("RolloutComplete: %s", st.Message))
	case overBudget:
		st.Phase = Paused
		more := ""
		if failed > len(st.Failed) {
			more = fmt.Sprintf("; and %d more", failed-len(st.Failed))
		}
		st.Message = fmt.Sprintf("paused in wave %s: %d failed child(ren), more than the error budget of %d: %s%s; fix them or skip them (pvctl rollout skip)",
			st.Waves[open].Name, failed, budget, strings.Join(st.Failed, "; "), more)
		if prev == nil || prev.Phase != Paused || restart {
			res.Events = append(res.Events, "RolloutPaused: "+st.Message)
		}
	case ctl.Paused:
		st.Phase, st.Message = Paused, fmt.Sprintf("paused in wave %s: %s", st.Waves[open].Name, ctl.PauseMessage)
	default:
		st.Phase = Progressing
		w := st.Waves[open]
		st.Message = fmt.Sprintf("wave %s: %d of %d children moved, %d done", w.Name, w.Moved, len(w.Members), w.Done) +
			waiting(waves[open], target, skip)
	}
	res.Status = st
	return res
}

func completeMessage(target v1alpha2.RevisionRef, held, skipped []string) string {
	m := fmt.Sprintf("every child is at %s", target.Name)
	var but []string
	if len(held) > 0 {
		but = append(but, fmt.Sprintf("the held ones (%s)", listed(held)))
	}
	if len(skipped) > 0 {
		but = append(but, fmt.Sprintf("the skipped ones, which failed there (%s)", listed(skipped)))
	}
	if len(but) > 0 {
		m += " but " + strings.Join(but, " and ")
	}
	return m
}

// listed is names joined, at most MaxListed of them and the count of the
// rest.
func listed(ns []string) string { return listing.Listed(ns, MaxListed) }

// waiting names the open wave's moved children that are neither done nor
// failed, and what each waits for: at most five, and the count of the rest
// ("200 of 200 moved, 0 done" used to name none).
func waiting(wave []*Child, target v1alpha2.RevisionRef, skip map[string]bool) string {
	var named []string
	n := 0
	for _, c := range wave {
		if !pinnedTo(c.Current, target) || c.Done || c.Failed || skip[c.Name] {
			continue
		}
		n++
		if len(named) < 5 {
			if c.Why != "" {
				named = append(named, fmt.Sprintf("%s (%s)", c.Name, Short(c.Why, 80)))
			} else {
				named = append(named, c.Name)
			}
		}
	}
	if n == 0 {
		return ""
	}
	s := "; waiting for " + strings.Join(named, ", ")
	if n > len(named) {
		s += fmt.Sprintf(" and %d more", n-len(named))
	}
	return s
}

// Short is s cut to at most max bytes, at a character, marked "…".
func Short(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// anyMoved: a child is already pinned to the target.
func anyMoved(children []Child, target v1alpha2.RevisionRef) bool {
	for _, c := range children {
		if pinnedTo(c.Current, target) {
			return true
		}
	}
	return false
}

// waveStatuses are the waves' names and members, for emptyWaves.
func waveStatuses(spec *v1alpha2.Rollout, waves [][]*Child) []v1alpha2.WaveStatus {
	out := make([]v1alpha2.WaveStatus, len(spec.Waves))
	for i, w := range spec.Waves {
		out[i] = v1alpha2.WaveStatus{Name: w.Name, Members: names(waves[i])}
	}
	return out
}

// emptyWaves are the waves of the spec with a selector, no member and no
// allowEmpty, as statuses list them.
func emptyWaves(spec *v1alpha2.Rollout, waves []v1alpha2.WaveStatus) []string {
	var out []string
	for i, w := range spec.Waves {
		if w.Selector != nil && !w.AllowEmpty && i < len(waves) && waves[i].Name == w.Name && len(waves[i].Members) == 0 {
			out = append(out, w.Name)
		}
	}
	return out
}

// emptyPause is the plan of a rollout that cannot start: a wave with a
// selector has no child. Nothing moves; each child keeps what it has.
func emptyPause(res Result, st v1alpha2.RolloutStatus, spec *v1alpha2.Rollout, prev *v1alpha2.RolloutStatus, restart bool,
	waves [][]*Child, children []Child, empty []string, keep func(*Child) pv.Upstream) Result {
	for i := range children {
		res.Pins[children[i].Name] = keep(&children[i])
	}
	for i, w := range spec.Waves {
		st.Waves = append(st.Waves, v1alpha2.WaveStatus{Name: w.Name, State: WavePending, Members: names(waves[i])})
	}
	st.Phase = Paused
	st.Message = fmt.Sprintf("not started: wave(s) %s select no child of the %d (their selector matches none: a typo, or a target that lost its label); "+
		"nothing moves until each selects one: fix the selector or the labels, or set allowEmpty: true on the wave",
		strings.Join(empty, ", "), len(children))
	if prev == nil || restart || prev.Message != st.Message {
		res.Events = append(res.Events, "RolloutPaused: "+st.Message)
	}
	res.Status = st
	return res
}

// finished gives a wave the counts it had in prev (a wave complete there:
// its children are not read again, so its counts stay as they were, and a
// skipped child is not counted done) and returns its members then.
func finished(prev *v1alpha2.RolloutStatus, i int, name string, ws *v1alpha2.WaveStatus) map[string]bool {
	was := map[string]bool{}
	if prev == nil || prev.Target.Name == "" || i >= len(prev.Waves) || prev.Waves[i].Name != name {
		return was
	}
	ws.Moved, ws.Done = prev.Waves[i].Moved, prev.Waves[i].Done
	for _, m := range prev.Waves[i].Members {
		was[m] = true
	}
	return was
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
