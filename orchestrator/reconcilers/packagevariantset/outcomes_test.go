package packagevariantset

import (
	"errors"
	"strings"
	"testing"

	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// TestOutcomes: for each reason, the conditions it sets, whether it is
// retried or not (a terminal error, or done), and the Events recorded.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		name                         string
		set                          string
		setup                        func(e *env)
		stalled, ready, readyReason  string
		readyMsg                     string // prefix
		reconciling, retried, stalls bool
		events                       []string
	}{
		{name: "success", set: fanout, stalled: "False", ready: "True", readyReason: pvsapi.ReasonReconciled, readyMsg: "package variants successfully reconciled",
			events: []string{"Normal ChildCreated"}},
		{name: "validation error", set: strings.Replace(fanout, "upstream: {repo: blueprints, package: app, revision: 1}", "upstream: {repo: blueprints}", 1),
			stalled: "True", ready: "False", readyReason: pvsapi.ReasonValidationError, readyMsg: "invalid packagevariant object",
			stalls: true, events: []string{"Warning ValidationError"}},
		{name: "upstream not found", set: strings.Replace(fanout, "revision: 1}", "revision: 7}", 1),
			stalled: "True", ready: "False", readyReason: pvsapi.ReasonUpstreamNotFound, readyMsg: "upstream package revision not found",
			stalls: true, events: []string{"Warning UpstreamNotFound"}},
		{name: "objectSelector of a kind pvkit may not read", set: strings.Replace(strings.Replace(fanout, "apiVersion: example.com/v1", "apiVersion: v1", 1), "kind: Team", "kind: Secret", 1),
			stalled: "True", ready: "False", readyReason: pvsapi.ReasonKindNotAllowed,
			readyMsg: "`spec.targets[2].objectSelector` selects kind v1 Secret, a kind pvkit may not read (allowed: ConfigMap, Team.example.com)",
			stalls:   true, events: []string{"Warning KindNotAllowed"}},
		{name: "target entries fail (CEL)", set: fanout, setup: func(e *env) {
			if err := e.client.Create(t.Context(), repo("cluster-04", map[string]string{"env": "prod"})); err != nil {
				e.t.Fatal(err)
			}
		}, stalled: "False", ready: "False", readyReason: pvsapi.ReasonPartiallyReconciled, readyMsg: "1 target entries could not be computed",
			events: []string{"Normal ChildCreated"}},
		{name: "target entries fail (a kind cannot be listed)", set: fanout, setup: func(e *env) { e.failTeam = errors.New("teams.example.com is forbidden") },
			stalled: "False", ready: "False", readyReason: pvsapi.ReasonPartiallyReconciled, readyMsg: "1 target entries could not be computed",
			reconciling: true, retried: true, events: []string{"Normal ChildCreated"}},
		{name: "listing Repositories fails", set: fanout, setup: func(e *env) { e.failRepo = errors.New("etcdserver: request timed out") },
			stalled: "False", ready: "False", readyReason: pvsapi.ReasonUnexpectedError, readyMsg: "listing Repositories: etcdserver: request timed out",
			reconciling: true, retried: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The set stored as it is (the validation error's is one the
			// CRD refuses: stored before the schema did).
			e := newEnv(t, append(world(), setObject(t, tt.set))...)
			if tt.setup != nil {
				tt.setup(e)
			}
			err := e.try()
			terminal := errors.Is(err, reconcile.TerminalError(nil))
			if terminal != tt.stalls || (err != nil && !terminal) != tt.retried {
				t.Fatalf("reconcile returned %v: want terminal=%v retried=%v", err, tt.stalls, tt.retried)
			}
			conds := e.getSet().Status.Conditions
			check := func(typ, status, reason, msg string) {
				c := apimeta.FindStatusCondition(conds, typ)
				if c == nil || string(c.Status) != status || (reason != "" && c.Reason != reason) || !strings.HasPrefix(c.Message, msg) {
					t.Errorf("%s = %+v, want %s %s %q...", typ, c, status, reason, msg)
				}
			}
			check(pvsapi.ConditionStalled, tt.stalled, "", "")
			check(pvsapi.ConditionReady, tt.ready, tt.readyReason, tt.readyMsg)
			if rc := apimeta.FindStatusCondition(conds, pvsapi.ConditionReconciling); (rc != nil && rc.Status == "True") != tt.reconciling {
				t.Errorf("Reconciling = %+v, want True: %v", rc, tt.reconciling)
			}
			if got := e.events(); strings.Join(got, ",") != strings.Join(tt.events, ",") {
				t.Errorf("events = %q, want %q", got, tt.events)
			}
			// Reconciling again with nothing changed records no Event and, when
			// it succeeded or stalled, writes nothing.
			before := e.total()
			_ = e.try()
			if ev := e.events(); len(ev) != 0 {
				t.Errorf("a second reconcile recorded Events: %q", ev)
			}
			if w := e.total() - before; w != 0 && !tt.retried {
				t.Errorf("a second reconcile made %d writes", w)
			}
		})
	}
}
