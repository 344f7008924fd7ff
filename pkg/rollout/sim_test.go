package rollout

import (
	"fmt"
	"maps"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Issue 43 #6: the rollout under churn, many seeds. A fleet of 1,000
// children and three waves (a canary by label, 10% two hundred at a time,
// the rest), where each plan sees the world as a controller does:
//   - a child moved is done a random number of plans later; a few fail
//     and are skipped (some are held);
//   - the children are read from a stale snapshot (a cache one plan behind)
//     a third of the time;
//   - the set's status write is lost a fifth of the time (the next plan
//     starts from the status before);
//   - a new upstream revision arrives mid-wave now and then.
//
// After every plan, against the truth (what was written to the children):
//   - no child moves to a target before its wave opens;
//   - no wave is open or complete while an earlier one is not complete;
//   - Complete only when every child is at the target, but the held ones,
//     and the skipped ones, which failed there (Argo CD's argo-cd#29410);
//   - the rollout ends Complete at the last revision once the churn stops.
func TestRolloutUnderChurn(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { churn(t, int64(seed), 1000) })
	}
}

// Issue 61 #4: a simulation replays from its seed, exactly: it draws its
// random numbers in a sorted order (it drew them while ranging over a map,
// so a failing seed did not fail again). PVKIT_CHURN_SEED replays one.
func TestChurnReplaysItsSeed(t *testing.T) {
	seed := int64(7)
	if s := os.Getenv("PVKIT_CHURN_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("PVKIT_CHURN_SEED=%q: %v", s, err)
		}
		seed = n
	}
	a, b := churn(t, seed, 300), churn(t, seed, 300)
	if a != b {
		t.Fatalf("seed %d played twice differs:\n%s\n---\n%s", seed, a, b)
	}
}

type simChild struct {
	pin      pv.Upstream
	doneAt   int // the plan from which the child is done at pin (0: not done)
	fails    bool
	movedAt  int
	labels   map[string]string
	lastSeen Child // what a stale cache shows
}

// churn runs the simulation and returns its trace: each plan's status.
func churn(t *testing.T, seed int64, n int) string {
	rng := rand.New(rand.NewSource(seed))
	var trace strings.Builder
	spec := &v1alpha2.Rollout{ErrorBudget: amount("1%"), Waves: []v1alpha2.Wave{
		{Name: "canary", Selector: &meta.LabelSelector{MatchLabels: map[string]string{"ring": "canary"}}, Size: amount("1")},
		{Name: "early", Size: amount("10%"), MaxUpdate: amount("200")},
		{Name: "rest", MaxUpdate: amount("25%")},
	}}
	names := make([]string, n)
	kids := map[string]*simChild{}
	for i := range names {
		names[i] = fmt.Sprintf("c%04d", i)
		kids[names[i]] = &simChild{labels: map[string]string{}, fails: rng.Intn(400) == 0}
	}
	kids[names[rng.Intn(n)]].labels["ring"] = "canary"
	ctl := Controls{Hold: map[string]bool{}, Skip: map[string]bool{}}
	for i := 0; i < 3; i++ {
		ctl.Hold[names[rng.Intn(n)]] = true
	}
	rev := 1
	var status *v1alpha2.RolloutStatus
	var before *v1alpha2.RolloutStatus // the status a lost write leaves
	for plan := 1; plan <= 400; plan++ {
		churning := plan < 250
		if churning && rev < 6 && rng.Intn(40) == 0 {
			rev++ // a new upstream revision, mid-wave or not
		}
		target := ref(rev)
		stale := churning && rng.Intn(3) == 0
		cs := make([]Child, 0, n)
		for _, name := range names {
			k := kids[name]
			c := Child{Name: name, Labels: k.labels}
			if k.pin.Revision != 0 {
				p := k.pin
				c.Current = &p
				at := pinnedTo(&p, target)
				c.Done = at && k.doneAt != 0 && plan >= k.doneAt
				c.Failed = at && k.fails && plan >= k.movedAt+3
				c.Why = "Stalled: a failing render"
			}
			if stale && k.lastSeen.Name != "" {
				c = k.lastSeen // a cache one plan behind
			}
			k.lastSeen = c
			cs = append(cs, c)
		}
		// An operator skips what failed (a skip takes once it fails).
		for _, name := range names {
			if kids[name].fails {
				ctl.Skip[name] = true
			}
		}
		res := Plan(spec, status, base, target, cs, ctl)
		checkPlan(t, plan, res, kids, target, ctl, spec)
		if t.Failed() {
			t.Logf("seed %d fails at plan %d: replay it with PVKIT_CHURN_SEED=%d", seed, plan, seed)
			return trace.String()
		}
		// Write the pins to the children (the truth), in name order: the
		// draws are the seed's, whatever the map's order.
		for _, name := range slices.Sorted(maps.Keys(res.Pins)) {
			k, pin := kids[name], res.Pins[name]
			if k.pin != pin {
				k.pin, k.movedAt, k.doneAt = pin, plan, 0
				if !k.fails {
					k.doneAt = plan + 1 + rng.Intn(4)
				}
			}
		}
		st := res.Status
		fmt.Fprintf(&trace, "%d %s %s %s\n", plan, st.Phase, st.Target.Name, st.Message)
		if churning && rng.Intn(5) == 0 && before != nil {
			status = before // the status write is lost
		} else {
			before, status = &st, &st
		}
	}
	if status.Phase != Complete || status.Target.Revision != rev {
		t.Fatalf("seed %d: after the churn, %s at %s: %s", seed, status.Phase, status.Target.Name, status.Message)
	}
	return trace.String()
}

// checkPlan checks a plan's invariants against the truth before it.
func checkPlan(t *testing.T, plan int, res Result, kids map[string]*simChild, target v1alpha2.RevisionRef, ctl Controls, spec *v1alpha2.Rollout) {
	t.Helper()
	st := res.Status
	if st.Phase == Complete && st.From == nil {
		return // the first revision: not rolled out
	}
	if len(st.Waves) != len(spec.Waves) {
		t.Fatalf("plan %d: %d waves in the status", plan, len(st.Waves))
	}
	open := len(st.Waves) // the first wave not complete
	waveOf := map[string]int{}
	for i, w := range st.Waves {
		if w.State != WaveComplete && open == len(st.Waves) {
			open = i
		}
		if i > open && w.State != WavePending {
			t.Fatalf("plan %d: wave %s is %s while wave %s is %s", plan, w.Name, w.State, st.Waves[open].Name, st.Waves[open].State)
		}
		for _, m := range w.Members {
			waveOf[m] = i
		}
	}
	// A wave complete: each of its children done at the target (the
	// truth), but the held ones and the skipped ones.
	for i := 0; i < open; i++ {
		for _, m := range st.Waves[i].Members {
			if k := kids[m]; !ctl.Hold[m] && !k.fails && (!pinnedTo(&k.pin, target) || k.doneAt == 0 || plan < k.doneAt) {
				t.Fatalf("plan %d: wave %s complete while %s is at %+v (done from plan %d)", plan, st.Waves[i].Name, m, k.pin, k.doneAt)
			}
		}
	}
	for name, pin := range res.Pins {
		k := kids[name]
		moves := pinnedTo(&pin, target) && !pinnedTo(&k.pin, target)
		if moves && waveOf[name] > open {
			t.Fatalf("plan %d: %s of wave %s moves to %s while wave %d is the open one", plan, name, st.Waves[waveOf[name]].Name, target.Name, open)
		}
	}
	if st.Phase != Complete {
		return
	}
	for name, pin := range res.Pins {
		k := kids[name]
		if ctl.Hold[name] || k.fails {
			continue
		}
		if !pinnedTo(&pin, target) || !pinnedTo(&k.pin, target) || k.doneAt == 0 || plan < k.doneAt {
			t.Fatalf("plan %d: Complete at %s while %s is at %+v (done from plan %d): %s", plan, target.Name, name, k.pin, k.doneAt, st.Message)
		}
	}
}
