package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/porch"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
)

// policyVariant is appVariant asking for approval with the given
// annotations.
func policyVariant(annotations string) string {
	return strings.Replace(appVariant, "  labels: {env: prod}\n", "  labels: {env: prod}\n  annotations: {"+annotations+"}\n", 1)
}

// lifecycles lists app-prod's downstream revisions as "name lifecycle N".
func (e *env) lifecycles() string {
	var out []string
	for _, r := range e.downstream("app-prod") {
		out = append(out, fmt.Sprintf("%s %s %d", r.Name, r.Lifecycle, r.Revision))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func approvingEnv(t testing.TB, onPorch bool) *env {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	if onPorch {
		e.r.Store = &porch.Store{Client: e.store.Client(e.client)}
	}
	e.r.ApproveByPolicy = true
	return e
}

// Issue 21 #5, the controller side (--approve-by-policy): initial approves
// a package's first revision only; always every one, upgrades included.
// With the memory store and with the Porch store (Porch's approval
// subresource).
func TestApproveByPolicy(t *testing.T) {
	for _, porch := range []bool{false, true} {
		for _, policy := range []string{"initial", "always"} {
			t.Run(fmt.Sprintf("%s porch=%v", policy, porch), func(t *testing.T) {
				e := approvingEnv(t, porch)
				e.store.Publish(ns, "blueprints", "app", blueprint(t))
				e.variant(policyVariant("approval.nephio.org/policy: " + policy))
				e.mustReconcile("app-prod")
				if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
					t.Fatalf("after the first reconcile: %s", got)
				}
				if evs := strings.Join(e.events(), "\n"); !strings.Contains(evs, "Normal DraftApproved approved deploy.app-prod.packagevariant-1 (approval.nephio.org/policy: "+policy+"): revision 1 of app-prod") {
					t.Fatalf("events:\n%s", evs)
				}
				e.store.Publish(ns, "blueprints", "app", blueprint(t)) // v2: an upgrade draft
				e.mustReconcile("app-prod")
				want := map[string]string{
					"initial": "deploy.app-prod.packagevariant-1 Published 1; deploy.app-prod.packagevariant-2 Draft 0",
					"always":  "deploy.app-prod.packagevariant-1 Published 1; deploy.app-prod.packagevariant-2 Published 2",
				}[policy]
				if got := e.lifecycles(); got != want {
					t.Fatalf("after the upgrade: %s, want %s", got, want)
				}
				if policy == "initial" { // the wait says the policy once (issue 62 #2)
					var b string
					for _, tg := range e.get("app-prod").Status.DownstreamTargets {
						if tg.Blocked != nil {
							b = tg.Blocked.Message
						}
					}
					if b != "Draft, not yet approved: policy initial: the package has a published revision already" {
						t.Fatalf("the wait: %q", b)
					}
				}
			})
		}
	}
}

// Not approved: the flag off; a readiness gate not True; a bad policy (a
// Warning Event, the variant still Ready); a draft a person changed since
// pvkit's last write.
func TestApproveByPolicyRefuses(t *testing.T) {
	t.Run("flag off", func(t *testing.T) {
		e := approvingEnv(t, false)
		e.r.ApproveByPolicy = false
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(policyVariant("approval.nephio.org/policy: always"))
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("%s", got)
		}
	})
	t.Run("a readiness gate not True", func(t *testing.T) {
		e := approvingEnv(t, false)
		bp := blueprint(t)
		bp["Kptfile"] = strings.Replace(bp["Kptfile"], "info:\n", "info:\n  readinessGates:\n    - conditionType: example.com/reviewed\n", 1)
		if !strings.Contains(bp["Kptfile"], "example.com/reviewed") {
			t.Fatalf("examples/app's Kptfile has no info:\n%s", bp["Kptfile"])
		}
		e.store.Publish(ns, "blueprints", "app", bp)
		e.variant(policyVariant("approval.nephio.org/policy: always"))
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("%s", got)
		}
	})
	t.Run("a bad policy", func(t *testing.T) {
		e := approvingEnv(t, false)
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(policyVariant("approval.nephio.org/policy: sometimes"))
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("%s", got)
		}
		if evs := strings.Join(e.events(), "\n"); !strings.Contains(evs, `Warning ApprovalRefused deploy.app-prod.packagevariant-1: invalid approval.nephio.org/policy annotation "sometimes": want "initial" or "always"; not approved`) {
			t.Fatalf("events:\n%s", evs)
		}
		if c := e.condition("app-prod", "Ready"); c.Status != "True" {
			t.Fatalf("Ready = %+v", c)
		}
	})
	t.Run("a person's edit", func(t *testing.T) {
		e := approvingEnv(t, false)
		e.r.ApproveByPolicy = false
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(policyVariant("approval.nephio.org/policy: always"))
		e.mustReconcile("app-prod")
		d := e.downstream("app-prod")[0]
		res, err := e.store.GetResources(context.Background(), ns, d.Name)
		if err != nil {
			t.Fatal(err)
		}
		res.Files["notes.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  by: a person\n"
		if _, err := e.store.UpdateResources(context.Background(), ns, d.Name, res); err != nil {
			t.Fatal(err)
		}
		e.r.ApproveByPolicy = true
		e.mustReconcile("app-prod")
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("a draft a person changed was approved: %s", got)
		}
	})
	// Issue 27 #4: the digest of pvkit's last write is in the variant's
	// status, which only the controller writes; the person who edits a
	// draft can also write its annotations, and pvkit.dev/last-write (where
	// it was kept before) set to the edited content's digest is ignored.
	t.Run("a person's edit with a forged digest", func(t *testing.T) {
		ctx := context.Background()
		e := approvingEnv(t, false)
		e.r.ApproveByPolicy = false
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(policyVariant("approval.nephio.org/policy: always"))
		e.mustReconcile("app-prod")
		d := e.downstream("app-prod")[0]
		res, err := e.store.GetResources(ctx, ns, d.Name)
		if err != nil {
			t.Fatal(err)
		}
		res.Files["notes.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  by: a person\n"
		if _, err := e.store.UpdateResources(ctx, ns, d.Name, res); err != nil {
			t.Fatal(err)
		}
		res, _ = e.store.GetResources(ctx, ns, d.Name)
		d = e.downstream("app-prod")[0]
		d.Annotations["pvkit.dev/last-write"] = variant.Fingerprint(res.Files)
		if err := e.store.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		e.r.ApproveByPolicy = true
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("a draft a person changed, and annotated with its new digest, was approved: %s", got)
		}
	})
}

// Issue 20 #4: observedGeneration says "decided": a reconcile that Porch
// failed (retried) leaves it where it was; the next, successful one sets it.
func TestObservedGenerationOnlyWhenSettled(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.store.Inject(fakestore.Fault{Op: fakestore.OpList, Err: errors.New("the server is currently unable to handle the request")})
	if err := e.reconcile("app-prod"); err == nil {
		t.Fatal("a Porch failure was not reported")
	}
	if v := e.get("app-prod"); v.Status.ObservedGeneration != 0 || v.Generation == 0 {
		t.Fatalf("after a retried failure: generation %d, observed %d; want observed 0", v.Generation, v.Status.ObservedGeneration)
	}
	e.mustReconcile("app-prod")
	if v := e.get("app-prod"); v.Status.ObservedGeneration != v.Generation {
		t.Fatalf("after success: generation %d, observed %d", v.Generation, v.Status.ObservedGeneration)
	}
}

// Found on real Porch (e2e-porch TestApproveByPolicyOnPorch): the update
// that annotates a finished draft for approval conflicted, the reconcile
// failed, and with it the status patch that would have recorded the
// draft's digest; every later reconcile found nothing to write, so the
// draft was never approved. The digest is remembered by the reconciler
// from its write.
func TestApprovalSurvivesALostAnnotationUpdate(t *testing.T) {
	e := approvingEnv(t, false)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	e.store.Inject(fakestore.Fault{Op: fakestore.OpUpdate, Err: fmt.Errorf("the object has been modified: %w", store.ErrConflict)})
	if err := e.reconcile("app-prod"); err == nil || !strings.Contains(err.Error(), "annotating the finished draft") {
		t.Fatalf("the first reconcile: %v", err)
	}
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("after the retry: %s", got)
	}
}

// Issue 29 #5: what holds a draft back from approval by policy shows in
// the variant's status, ApprovalWaiting, with a message that does not
// change while nothing does (the time a delay is due, not how long ago the
// draft was made); a delay that starts is one Normal Event; a bad
// annotation is reason ApprovalRefused; once approved, the condition goes.
func TestApprovalWaitingInStatus(t *testing.T) {
	e := approvingEnv(t, false)
	now := testNow
	e.store.SetClock(func() time.Time { return now })
	e.r.Clock = clockFunc(func() time.Time { return now })
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always, approval.nephio.org/delay: 1h"))
	e.mustReconcile("app-prod")
	want := "deploy.app-prod.packagevariant-1 is approved at 2026-11-22T01:00:00Z (approval.nephio.org/delay: 1h)"
	c := e.condition("app-prod", pvapi.ConditionApprovalWaiting)
	if c.Status != "True" || c.Reason != pvapi.ReasonApprovalPending || c.Message != want {
		t.Fatalf("ApprovalWaiting = %+v", c)
	}
	if evs := e.events(); !slices.Contains(evs, "Normal ApprovalPending "+want) {
		t.Fatalf("events: %v", evs)
	}
	now = now.Add(10 * time.Minute)
	writes := e.writes
	e.mustReconcile("app-prod")
	if c2 := e.condition("app-prod", pvapi.ConditionApprovalWaiting); c2.Message != want || e.writes != writes {
		t.Fatalf("a later reconcile changed the status (%d writes): %+v", e.writes-writes, c2)
	}
	if evs := e.events(); len(evs) != 0 {
		t.Fatalf("the pending delay was recorded again: %v", evs)
	}
	now = now.Add(time.Hour)
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("after the delay: %s", got)
	}
	if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, pvapi.ConditionApprovalWaiting); c != nil {
		t.Fatalf("approved, ApprovalWaiting stays: %+v", c)
	}

	bad := approvingEnv(t, false)
	bad.store.Publish(ns, "blueprints", "app", blueprint(t))
	bad.variant(policyVariant("approval.nephio.org/policy: always, approval.nephio.org/delay: soon"))
	bad.mustReconcile("app-prod")
	if c := bad.condition("app-prod", pvapi.ConditionApprovalWaiting); c.Reason != pvapi.ReasonApprovalRefused ||
		c.Message != `deploy.app-prod.packagevariant-1: invalid approval.nephio.org/delay annotation "soon": time: invalid duration "soon"` {
		t.Fatalf("a bad delay: %+v", c)
	}
	if c := bad.condition("app-prod", "Ready"); c.Status != "True" {
		t.Fatalf("Ready = %+v", c)
	}
}

type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }

// Issue 33: a person rejects a draft (Proposed, then Draft again: Porch
// records nothing else). The variant tells it from the lifecycle it read
// before (DownstreamTarget.Lifecycle), marks the target Rejected with a
// Warning Event, and approval by policy leaves the draft to a person until
// it is proposed again. An upgrade in place, which moves a proposed draft
// back to Draft itself, is not a rejection, and ends one.
func TestRejectedDraft(t *testing.T) {
	ctx := context.Background()
	e := approvingEnv(t, false)
	now := testNow
	e.r.Clock = clockFunc(func() time.Time { return now })
	e.store.SetClock(func() time.Time { return now })
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: always, approval.nephio.org/delay: 1h"))
	e.mustReconcile("app-prod")
	target := func() pvapi.DownstreamTarget {
		t.Helper()
		ts := e.get("app-prod").Status.DownstreamTargets
		if len(ts) != 1 {
			t.Fatalf("targets: %+v", ts)
		}
		return ts[0]
	}
	if tg := target(); tg.Lifecycle != "Draft" || tg.Rejected() {
		t.Fatalf("a new draft: %+v", tg)
	}
	move := func(lc store.Lifecycle) {
		t.Helper()
		revs := e.downstream("app-prod")
		d := revs[len(revs)-1] // the newest
		d.Lifecycle = lc
		if err := e.store.Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		e.mustReconcile("app-prod")
	}
	move(store.Proposed) // a person proposes it; its delay runs
	if tg := target(); tg.Lifecycle != "Proposed" || tg.Rejected() {
		t.Fatalf("proposed: %+v", tg)
	}
	e.events()
	move(store.Draft) // and another rejects it
	if tg := target(); tg.Lifecycle != "Draft" || !tg.Rejected() {
		t.Fatalf("rejected: %+v", tg)
	}
	if evs := strings.Join(e.events(), "\n"); !strings.Contains(evs, "Warning DraftRejected draft deploy.app-prod.packagevariant-1 was rejected (Proposed, then Draft again): approval by policy leaves it to a person") {
		t.Fatalf("events:\n%s", evs)
	}
	now = now.Add(2 * time.Hour) // the delay is over: still left to a person
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
		t.Fatalf("a rejected draft was approved by policy: %s", got)
	}
	if c := e.condition("app-prod", pvapi.ConditionApprovalWaiting); c.Status != "True" || !strings.Contains(c.Message, "deploy.app-prod.packagevariant-1 was rejected: left to a person (propose it again)") {
		t.Fatalf("ApprovalWaiting = %+v", c)
	}
	if c := e.condition("app-prod", "Ready"); c.Status != "True" {
		t.Fatalf("Ready = %+v", c)
	}
	move(store.Proposed) // proposed again: approved
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("proposed again: %s", got)
	}

	// An upgrade in place moves a proposed draft back to Draft: the
	// variant's own move, no rejection.
	e.store.Publish(ns, "blueprints", "app", blueprint(t)) // v2: an upgrade draft, its delay running
	now = now.Add(time.Minute)
	e.mustReconcile("app-prod")
	move(store.Proposed)
	e.events()
	e.store.Publish(ns, "blueprints", "app", blueprint(t)) // v3 while v2's draft is proposed
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	for _, tg := range e.get("app-prod").Status.DownstreamTargets {
		if tg.Rejected() {
			t.Fatalf("an upgrade in place taken for a rejection: %+v", tg)
		}
	}
	if evs := strings.Join(e.events(), "\n"); !strings.Contains(evs, "DraftUpgradedInPlace") || strings.Contains(evs, "DraftRejected") {
		t.Fatalf("events:\n%s", evs)
	}
}

// rule wave-approval, the controller side: a variant whose spec.approval
// names the upstream its draft was made from is approved as policy always
// would approve it, with the same guards (a draft a person edited waits);
// an approval of another upstream approves nothing. With the memory store
// and with the Porch store.
func TestWaveApprovalApprovesTheDraftOfItsUpstream(t *testing.T) {
	for _, onPorch := range []bool{false, true} {
		e := approvingEnv(t, onPorch)
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(appVariant)
		e.edit("app-prod", func(v *pvapi.PackageVariant) {
			v.Spec.Approval = &pv.WaveApproval{UpstreamRef: "app/v9", By: "wave canary of PackageVariantSet app"}
		})
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("porch=%v: an approval of another upstream approved: %s", onPorch, got)
		}
		// A person edits the draft: an approval of its upstream waits.
		d := e.downstream("app-prod")[0]
		res, err := e.store.GetResources(context.Background(), ns, d.Name)
		if err != nil {
			t.Fatal(err)
		}
		res.Files["notes.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  by: a person\n"
		if _, err := e.store.UpdateResources(context.Background(), ns, d.Name, res); err != nil {
			t.Fatal(err)
		}
		e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Approval.UpstreamRef = "app/v1" })
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Draft 0" {
			t.Fatalf("porch=%v: a wave approval approved a draft a person edited: %s", onPorch, got)
		}
	}
	e := approvingEnv(t, false)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.edit("app-prod", func(v *pvapi.PackageVariant) {
		v.Spec.Approval = &pv.WaveApproval{UpstreamRef: "app/v1", By: "wave canary of PackageVariantSet app"}
	})
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("the wave's approval: %s", got)
	}
	if ev := strings.Join(e.events(), "\n"); !strings.Contains(ev, "DraftApproved approved deploy.app-prod.packagevariant-1 (wave canary of PackageVariantSet app): revision 1 of app-prod") {
		t.Fatalf("events:\n%s", ev)
	}
}

// CI (fresh-clone run 41, TestWaveApprovalOnPorch): Porch answered the
// first write of a draft pvkit had just created with an error ("remote not
// found") although the write landed. The next reconcile had nothing to
// write, so no write of the draft was ever recorded, and approval by
// policy waited for a person forever: "a person changed it since its
// variant's last write". A write whose answer was an error but whose
// effect is in the draft is now recorded as pvkit's.
func TestWriteThatLandedDespiteAnErrorIsTheVariants(t *testing.T) {
	e := approvingEnv(t, false)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.store.Inject(fakestore.Fault{Op: fakestore.OpUpdateResources, Err: errors.New("Internal error occurred: remote not found"), After: true})
	e.variant(policyVariant("approval.nephio.org/policy: always"))
	if err := e.reconcile("app-prod"); err == nil || !strings.Contains(err.Error(), "remote not found") {
		t.Fatalf("the write's error: %v", err)
	}
	_ = e.reconcile("app-prod")
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("the draft pvkit wrote is not approved by policy: %s; %+v", got, e.get("app-prod").Status.DownstreamTargets)
	}
}

// Approval by policy reads the listing the downstream step made when that
// step wrote nothing (rule listing-reused): a draft waiting on its policy
// costs one listing of the variant's revisions a reconcile, not two; a
// reconcile that wrote lists again, so the draft it made is approved in
// the same reconcile.
func TestApprovalByPolicyReusesTheDownstreamListing(t *testing.T) {
	e := approvingEnv(t, false)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(policyVariant("approval.nephio.org/policy: initial"))
	e.store.ResetCalls()
	e.mustReconcile("app-prod")
	if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1" {
		t.Fatalf("after the first reconcile: %s", got)
	}
	if n := e.store.Calls()[fakestore.OpListOwned]; n != 2 {
		t.Fatalf("the reconcile that made the draft listed the variant's revisions %d times, want 2 (once again after its writes)", n)
	}
	e.store.Publish(ns, "blueprints", "app", blueprint(t)) // v2: an upgrade draft, which initial leaves for a person
	e.mustReconcile("app-prod")
	for i := 0; i < 2; i++ {
		e.store.ResetCalls()
		e.mustReconcile("app-prod")
		if got := e.lifecycles(); got != "deploy.app-prod.packagevariant-1 Published 1; deploy.app-prod.packagevariant-2 Draft 0" {
			t.Fatalf("steady: %s", got)
		}
		calls := e.store.Calls()
		if n := calls[fakestore.OpListOwned]; n != 1 {
			t.Fatalf("a steady reconcile listed the variant's revisions %d times, want 1", n)
		}
		if w := e.store.Writes(); w != 0 {
			t.Fatalf("a steady reconcile wrote %d times", w)
		}
	}
	if w := e.get("app-prod").Status.DownstreamTargets; len(w) != 1 || w[0].Blocked == nil || !strings.Contains(w[0].Blocked.Message, "policy initial") {
		t.Fatalf("the waiting draft's target: %+v", w)
	}
}
