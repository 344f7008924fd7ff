package packagevariant

import (
	"context"
	"errors"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// badPoint is a blueprint whose injection point has an invalid annotation
// value: the mutation cannot run.
func badPoint(t testing.TB) map[string]string {
	f := blueprint(t)
	f["endpoints.yaml"] = strings.Replace(f["endpoints.yaml"], "kpt.dev/config-injection: required", "kpt.dev/config-injection: maybe", 1)
	if !strings.Contains(f["endpoints.yaml"], "maybe") {
		t.Fatal("examples/app/endpoints.yaml has no required injection point")
	}
	return f
}

// TestOutcomes: for each reason, the conditions it sets, whether it is
// retried (a plain error) or not (a terminal one), and the Events recorded.
func TestOutcomes(t *testing.T) {
	type want struct {
		stalled, ready, readyReason, readyMsg string // condition status, reason, message prefix
		reconciling                           bool
		retried, terminal                     bool
		events                                []string // "Type Reason" of each Event, in order
		// noDraft: the stall is found before the clone (the precheck of the
		// upstream), so the variant leaves no draft that looks finished.
		noDraft bool
	}
	tests := []struct {
		name  string
		setup func(e *env) // leaves app-prod to be reconciled once more
		want  want
	}{
		{"success", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(appVariant)
		}, want{stalled: "False", ready: "True", readyReason: pvapi.ReasonNoErrors, readyMsg: "successfully ensured downstream package variant",
			events: []string{"Normal DraftCreated"}}},
		{"validation error", func(e *env) {
			e.stored(strings.Replace(appVariant, "upstream: {repo: blueprints, package: app}", "upstream: {package: app}", 1))
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonError, readyMsg: "invalid packagevariant object",
			terminal: true, events: []string{"Warning ValidationError"}}},
		{"upstream not found", func(e *env) { e.variant(appVariant) },
			want{stalled: "True", ready: "False", readyReason: pvapi.ReasonUpstreamNotFound, readyMsg: "upstream package revision not found",
				terminal: true, events: []string{"Warning UpstreamNotFound"}}},
		{"downstream repository missing", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(strings.Replace(appVariant, "repo: deploy,", "repo: depoly,", 1))
		}, want{stalled: "False", ready: "False", readyReason: pvapi.ReasonRepositoryNotFound,
			readyMsg:    `the downstream repository "depoly" does not exist in namespace "default": register it`,
			reconciling: true, retried: true}},
		{"stale draft", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(appVariant)
			e.annotate("app-prod", DraftUpgradeAnnotation, DraftUpgradeStall)
			e.mustReconcile("app-prod")
			e.events()
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonStaleDraft, readyMsg: "draft deploy.app-prod.packagevariant-1 was made from upstream app app/v1",
			terminal: true, events: []string{"Warning StaleDraft"}}},
		{"upgrade conflict", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(appVariant)
			e.mustReconcile("app-prod")
			e.events()
			d := e.downstream("app-prod")[0]
			edited := e.files(d)
			edited["deployment.yaml"] = strings.Replace(edited["deployment.yaml"], "replicas: 1", "replicas: 3", 1)
			e.store.SetFiles(ns, d.Name, edited)
			v2 := blueprint(e.t)
			v2["deployment.yaml"] = strings.Replace(v2["deployment.yaml"], "replicas: 1", "replicas: 2", 1)
			e.store.Publish(ns, "blueprints", "app", v2)
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonUpgradeConflict, readyMsg: "draft deploy.app-prod.packagevariant-1 cannot be upgraded in place from blueprints.app.v1 to blueprints.app.v2: 1 field(s) changed in the draft and upstream differently: deployment.yaml: Deployment/web spec.replicas: the upstream changed 1 to 2, the draft has 3;",
			terminal: true, events: []string{"Warning UpgradeConflict"}}},
		{"mutation failed", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", badPoint(e.t))
			e.variant(appVariant)
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonMutationFailed, readyMsg: "config-inject:",
			terminal: true, events: []string{"Warning MutationFailed"}, noDraft: true}},
		{"alias bomb in the upstream package", func(e *env) {
			f := blueprint(e.t)
			f["lol.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" +
				"  l1: &l1 [*l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0, *l0]\n  l2: &l2 [*l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1, *l1]\n" +
				"  l3: &l3 [*l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2, *l2]\n  l4: &l4 [*l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3, *l3]\n" +
				"  l5: &l5 [*l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4, *l4]\n  l6: &l6 [*l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5, *l5]\n" +
				"  l7: &l7 [*l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6, *l6]\n"
			e.store.Publish(ns, "blueprints", "app", f)
			e.variant(appVariant)
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonMutationFailed, readyMsg: `the clone of blueprints.app.v1: "lol.yaml": its YAML aliases expand`,
			terminal: true, events: []string{"Warning MutationFailed"}, noDraft: true}},
		{"injection point of a kind pvkit may not read", func(e *env) {
			f := blueprint(e.t)
			f["secret.yaml"] = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-password\n  annotations:\n    kpt.dev/config-injection: required\n"
			e.store.Publish(ns, "blueprints", "app", f)
			e.variant(appVariant)
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonKindNotAllowed,
			readyMsg: "the package has an injection point of kind v1 Secret, a kind pvkit may not read (allowed: ConfigMap, Team.example.com)",
			terminal: true, events: []string{"Warning KindNotAllowed"}, noDraft: true}},
		{"optional injection point of a kind pvkit may not read, named by no injector", func(e *env) {
			// Porch proceeds; so does pvkit: no injector can select a Secret.
			f := blueprint(e.t)
			f["secret.yaml"] = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-password\n  annotations:\n    kpt.dev/config-injection: optional\n"
			e.store.Publish(ns, "blueprints", "app", f)
			e.variant(strings.Replace(appVariant, "  - name: us-east1-endpoints\n", "  - kind: ConfigMap\n    name: us-east1-endpoints\n", 1))
		}, want{stalled: "False", ready: "True", readyReason: pvapi.ReasonNoErrors, readyMsg: "successfully ensured downstream package variant",
			events: []string{"Normal DraftCreated"}}},
		{"injector naming a kind pvkit may not read", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(strings.Replace(appVariant, "  - kind: Team\n", "  - kind: Secret\n", 1))
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonKindNotAllowed,
			readyMsg: "`spec.injectors[1]` names kind \"Secret\", a kind pvkit may not read",
			terminal: true, events: []string{"Warning KindNotAllowed"}}},
		{"locked upstream gone", func(e *env) {
			up := e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(appVariant)
			e.mustReconcile("app-prod")
			if _, err := e.store.Approve(ns, e.downstream("app-prod")[0].Name); err != nil {
				e.t.Fatal(err)
			}
			e.mustReconcile("app-prod")
			e.events()
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t)) // v2, then v1 goes
			up.Lifecycle, up.ResourceVersion = store.DeletionProposed, ""
			if err := e.store.Update(context.Background(), up); err != nil {
				e.t.Fatal(err)
			}
			if err := e.store.Delete(context.Background(), ns, up.Name); err != nil {
				e.t.Fatal(err)
			}
		}, want{stalled: "True", ready: "False", readyReason: pvapi.ReasonLockedUpstreamNotFound, readyMsg: "cannot upgrade: the downstream's upstream app app/v1",
			terminal: true, events: []string{"Warning LockedUpstreamNotFound"}}},
		{"porch error", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(appVariant)
			e.store.Inject(fakestore.Fault{Op: fakestore.OpList, Err: errors.New("the server is currently unable to handle the request")})
		}, want{stalled: "False", ready: "False", readyReason: pvapi.ReasonError, readyMsg: "the server is currently unable",
			reconciling: true, retried: true}},
		{"render failed", func(e *env) { // on the variant's write: the pipeline fails on what the variant set
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.store.SetRenderer(func(f map[string]string) (map[string]string, store.RenderStatus) {
				if strings.Contains(f["package-context.yaml"], "env: prod") {
					return f, renderStatus(1, "error", "bad", "pipeline.mutators[0] failed")
				}
				return f, store.RenderStatus{}
			})
			e.variant(appVariant)
		}, want{stalled: "False", ready: "False", readyReason: pvapi.ReasonRenderFailed, readyMsg: "updating deploy.app-prod.packagevariant-1",
			reconciling: true, retried: true, events: []string{"Normal DraftCreated"}}},
		{"render failed at creation", func(e *env) { // the blueprint does not render on its own: Porch creates no draft
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.store.SetRenderer(func(f map[string]string) (map[string]string, store.RenderStatus) {
				return f, renderStatus(1, "error", "bad", "pipeline.mutators[0] failed")
			})
			e.variant(appVariant)
		}, want{stalled: "False", ready: "False", readyReason: pvapi.ReasonRenderFailed,
			readyMsg:    `creating a clone draft of default/deploy/app-prod in workspace "packagevariant-1": package revision default/deploy.app-prod.packagevariant-1 was not created: pipeline.mutators[0] failed`,
			reconciling: true, retried: true}},
		{"deleting", func(e *env) {
			e.store.Publish(ns, "blueprints", "app", blueprint(e.t))
			e.variant(appVariant)
			e.mustReconcile("app-prod")
			e.events()
			e.store.Inject(fakestore.Fault{Op: fakestore.OpDelete, Err: errors.New("porch is down")})
			if err := e.client.Delete(context.Background(), e.get("app-prod")); err != nil {
				e.t.Fatal(err)
			}
		}, want{stalled: "False", ready: "False", readyReason: pvapi.ReasonDeleting, readyMsg: "deleting owned package revisions: deleting deploy.app-prod.packagevariant-1: porch is down",
			reconciling: true, retried: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
			tt.setup(e)
			err := e.reconcile("app-prod")
			terminal := errors.Is(err, reconcile.TerminalError(nil))
			if terminal != tt.want.terminal || (err != nil && !terminal) != tt.want.retried {
				t.Fatalf("reconcile returned %v: want terminal=%v retried=%v", err, tt.want.terminal, tt.want.retried)
			}
			conds := e.get("app-prod").Status.Conditions
			check := func(typ, status, reason, msg string) {
				c := apimeta.FindStatusCondition(conds, typ)
				if c == nil || string(c.Status) != status || (reason != "" && c.Reason != reason) || !strings.HasPrefix(c.Message, msg) {
					t.Errorf("%s = %+v, want %s %s %q...", typ, c, status, reason, msg)
				}
			}
			check(pvapi.ConditionStalled, tt.want.stalled, "", "")
			check(pvapi.ConditionReady, tt.want.ready, tt.want.readyReason, tt.want.readyMsg)
			if tt.want.stalled == "True" {
				check(pvapi.ConditionStalled, "True", "", strings.TrimPrefix(tt.want.readyMsg, "invalid packagevariant object"))
			}
			if rc := apimeta.FindStatusCondition(conds, kit.ConditionReconciling); (rc != nil && rc.Status == metav1.ConditionTrue) != tt.want.reconciling {
				t.Errorf("Reconciling = %+v, want True: %v", rc, tt.want.reconciling)
			}
			var got []string
			for _, ev := range e.events() {
				f := strings.SplitN(ev, " ", 3)
				got = append(got, f[0]+" "+f[1])
			}
			if strings.Join(got, ",") != strings.Join(tt.want.events, ",") {
				t.Errorf("events = %q, want %q", got, tt.want.events)
			}
			if tt.want.noDraft {
				if revs := e.downstream("app-prod"); len(revs) != 0 {
					t.Errorf("a stall found before the clone left drafts: %+v", revs)
				}
			}
			// A stall is recorded once: reconciling it again unchanged records nothing.
			if tt.want.terminal {
				e.stalls("app-prod")
				if ev := e.events(); len(ev) != 0 {
					t.Errorf("a steady stall recorded more Events: %q", ev)
				}
			}
		})
	}
}
