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
	"github.com/pvkit/pvkit/pkg/krm"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Phases and wave states (typed and enum-validated in the API).
const (
	Progressing = v1alpha2.RolloutProgressing
	Paused      = v1alpha2.RolloutPaused
	Complete    = v1alpha2.RolloutComplete

	WavePending  = v1alpha2.WavePending
	WaveOpen     = v1alpha2.WaveOpen
	WaveComplete = v1alpha2.WaveComplete
)

// EventReason is the reason of a rollout's Event (the Kubernetes Event's
// reason).
type EventReason string

// The rollout's events; RolloutPaused, RolloutUndone and
// FailureWithinBudget are Warnings, the others Normal.
const (
	EventRolloutStarted  EventReason = "RolloutStarted"
	EventRolloutJoined   EventReason = "RolloutJoined"
	EventWaveOpened      EventReason = "WaveOpened"
	EventWaveCompleted   EventReason = "WaveCompleted"
	EventRolloutComplete EventReason = "RolloutComplete"
	EventRolloutPaused   EventReason = "RolloutPaused"
	EventRolloutUndone   EventReason = "RolloutUndone"
	// EventFailureWithinBudget: a wave's failed children rose, within
	// their budget; the rollout goes on without them (a Warning).
	EventFailureWithinBudget EventReason = "FailureWithinBudget"
)

// Event is what happened in a plan, for the set's Events.
type Event struct {
	Reason  EventReason
	Message string
}

// Warning reports whether the event is a Warning (a pause).
func (e Event) Warning() bool {
	return e.Reason == EventRolloutPaused || e.Reason == EventRolloutUndone || e.Reason == EventFailureWithinBudget
}

// String is the event as "Reason: message".
func (e Event) String() string { return string(e.Reason) + ": " + e.Message }

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

// Controls are the operator's: pause, hold targets, skip failed ones,
// undo the rollout.
type Controls struct {
	Paused       bool
	Hold, Skip   map[string]bool
	PauseMessage string // why it is paused (the control's words)
	// Undo names the target revision whose rollout the operator undoes
	// (pvkit.dev/rollout-undo): it applies while it names the plan's
	// target, so an undo of v2 does not undo v3's rollout.
	Undo string
	// Retry (pvkit.dev/rollout-retry, TARGET@STAMP) rolls a target out
	// again after the rollout undid itself on failure: once per value.
	Retry string
	// Now is the plan's clock, for spec.rollout.windows (zero, with
	// windows: they hold, as no instant is known).
	Now time.Time
}

// Result is a plan: the upstream each child gets, the rollout's new
// status, and what happened (for Events), in order.
type Result struct {
	Pins   map[string]pv.Upstream
	Status v1alpha2.RolloutStatus
	Events []Event
	// Pause is why a Paused rollout is paused ("" otherwise).
	Pause PauseCause
	// Recheck, when set, is when the windows' verdict may change: the
	// caller plans again then though nothing else changes.
	Recheck time.Time
}

// PauseCause is why a rollout is paused.
type PauseCause string

// The causes of a pause.
const (
	// PausedByBudget: more children failed than the error budget allows.
	PausedByBudget PauseCause = "ErrorBudgetExceeded"
	// PausedByControl: the operator paused it (pvkit.dev/rollout-pause).
	PausedByControl PauseCause = "PausedByOperator"
	// PausedByEmptyWave: a wave with a selector selects no child.
	PausedByEmptyWave PauseCause = "EmptyWave"
	// PausedByUndo: the operator undid the rollout; every child is back at
	// its from revision.
	PausedByUndo PauseCause = "RolledBack"
)

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

func completeMessage(target v1alpha2.RevisionRef, held, skipped, failed []string) string {
	m := fmt.Sprintf("every child is at %s", target.Name)
	var but []string
	if len(held) > 0 {
		but = append(but, fmt.Sprintf("the held ones (%s)", listed(held)))
	}
	if len(skipped) > 0 {
		but = append(but, fmt.Sprintf("the skipped ones, which failed there (%s)", listed(skipped)))
	}
	if len(failed) > 0 {
		but = append(but, fmt.Sprintf("the failed ones, within the error budget (%s)", listed(failed)))
	}
	if len(but) > 0 {
		m += " but " + strings.Join(but, " and ")
	}
	return m
}

// listed is names joined, at most MaxListed of them and the count of the
// rest.
func listed(ns []string) string { return krm.Listed(ns, MaxListed) }

// waiting names the open wave's moved children that are neither done nor
// failed, what each waits for and since when (the wave's Waiting): at most
// five, and the count of the rest ("200 of 200 moved, 0 done" used to name
// none).
func waiting(wave []*Child, ws v1alpha2.WaveStatus, target v1alpha2.RevisionRef, skip map[string]bool) string {
	since := map[string]string{}
	for _, m := range ws.Waiting {
		since[m.Name] = m.Since
	}
	var named []string
	n := 0
	for _, c := range wave {
		if !pinnedTo(c.Current, target) || c.Done || c.Failed || skip[c.Name] {
			continue
		}
		n++
		if len(named) < 5 {
			var about []string
			if s := since[c.Name]; s != "" {
				about = append(about, "since "+s)
			}
			if c.Why != "" {
				about = append(about, Short(c.Why, 160))
			}
			if len(about) > 0 {
				named = append(named, fmt.Sprintf("%s (%s)", c.Name, strings.Join(about, ": ")))
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

func prevState(prev *v1alpha2.RolloutStatus, i int, restart bool) v1alpha2.WaveState {
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

// planMessage is a message as plan made it, without what Plan added about
// controls it did not apply (said again by each Plan, never accumulated).
func planMessage(msg string) string {
	for _, note := range []string{"; the undo control names ", "; the retry control "} {
		if i := strings.Index(msg, note); i >= 0 {
			msg = msg[:i]
		}
	}
	return msg
}

// OnFailureUndo is spec.rollout.onFailure's undo.
const OnFailureUndo = "undo"

// retried says whether the retry control asks for this target again, a
// value the rollout has not acted on yet.
func (p *planner) retried() bool {
	t, _, ok := strings.Cut(p.ctl.Retry, "@")
	return ok && t == p.target.Name && (p.prev == nil || p.ctl.Retry != p.prev.Retried)
}

// spread orders children (sorted by name) in turn from each value of the
// label key (values sorted; a child without the label in a group of its
// own, last): the order in which sized waves take them.
func spread(cs []*Child, key string) []*Child {
	groups := map[string][]*Child{}
	var values []string
	for _, c := range cs {
		v, ok := c.Labels[key]
		if !ok {
			v = "\xff" // sorts last
		}
		if _, seen := groups[v]; !seen {
			values = append(values, v)
		}
		groups[v] = append(groups[v], c)
	}
	sort.Strings(values)
	out := make([]*Child, 0, len(cs))
	for i := 0; len(out) < len(cs); i++ {
		for _, v := range values {
			if i < len(groups[v]) {
				out = append(out, groups[v][i])
			}
		}
	}
	return out
}
