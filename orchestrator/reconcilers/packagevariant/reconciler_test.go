package packagevariant

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	apirender "github.com/pvkit/pvkit/orchestrator/api/render"

	"github.com/pvkit/pvkit/orchestrator/api/render"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/variant"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

func TestClone(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.us-east1:5432"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")

	revs := e.downstream("app-prod")
	if len(revs) != 1 || revs[0].Lifecycle != store.Draft || revs[0].Workspace != "packagevariant-1" || !revs[0].OwnedBy(uid("app-prod")) || revs[0].Labels["env"] != "prod" {
		t.Fatalf("downstream = %+v", revs)
	}
	f := e.files(revs[0])
	contains(t, f, "package-context.yaml", "env: prod")
	contains(t, f, "Kptfile", "name: PackageVariant.app-prod.set-ns.0")
	contains(t, f, "endpoints.yaml", "db: db.us-east1:5432")
	contains(t, f, "team.yaml", "lead: alice")
	contains(t, f, "Kptfile", "message: injected resource \"web\" from cluster")
	v := e.get("app-prod")
	if !controllerutil.ContainsFinalizer(v, pv.Finalizer) || v.Status.ObservedGeneration != 1 {
		t.Fatalf("finalizer/observedGeneration: %+v", v)
	}
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonNoErrors {
		t.Fatalf("Ready = %+v", c)
	}
	if ts := v.Status.DownstreamTargets; len(ts) != 1 || ts[0].Name != revs[0].Name {
		t.Fatalf("targets = %+v", ts)
	}
}

// Reconciling an unchanged variant performs zero writes, in Porch and in
// the cluster.
func TestSteadyStateWritesNothing(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	if ev := e.events(); len(ev) != 1 || !strings.HasPrefix(ev[0], "Normal DraftCreated created draft deploy.app-prod.packagevariant-1 (clone of ") {
		t.Fatalf("the clone's Events: %q", ev)
	}
	before := e.totalWrites()
	e.mustReconcile("app-prod")
	e.mustReconcile("app-prod")
	if w := e.totalWrites() - before; w != 0 {
		t.Fatalf("two reconciles of an unchanged variant made %d writes (store calls %v)", w, e.store.Calls())
	}
	if ev := e.events(); len(ev) != 0 {
		t.Fatalf("a steady resync recorded Events: %q", ev)
	}
	// And once published, the same.
	e.store.Approve(ns, e.downstream("app-prod")[0].Name)
	e.mustReconcile("app-prod")
	e.events()
	before = e.totalWrites()
	e.mustReconcile("app-prod")
	if w := e.totalWrites() - before; w != 0 {
		t.Fatalf("a reconcile of an unchanged published variant made %d writes", w)
	}
	if ev := e.events(); len(ev) != 0 {
		t.Fatalf("a steady resync of a published variant recorded Events: %q", ev)
	}
}

func TestRemutateDraft(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.PackageContext.Data["region"] = "us-east1" })
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 {
		t.Fatalf("the draft must be updated in place: %+v", revs)
	}
	contains(t, e.files(revs[0]), "package-context.yaml", "region: us-east1")
}

func TestEditDraftForPublished(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	pub, err := e.store.Approve(ns, e.downstream("app-prod")[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.PackageContext.Data["tier"] = "gold" })
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 2 || revs[1].Workspace != "packagevariant-2" || revs[1].Lifecycle != store.Draft {
		t.Fatalf("want an edit draft: %+v", revs)
	}
	contains(t, e.files(revs[1]), "package-context.yaml", "tier: gold")
	if strings.Contains(e.files(pub)["package-context.yaml"], "tier") {
		t.Fatal("the published revision changed")
	}
	if ts := e.get("app-prod").Status.DownstreamTargets; len(ts) != 1 || ts[0].Name != revs[1].Name {
		t.Fatalf("targets must be the draft: %+v", ts)
	}
}

func TestUpgrade(t *testing.T) {
	for _, pinned := range []bool{true, false} {
		name := map[bool]string{true: "revision changed", false: "newer revision published"}[pinned]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			bp := blueprint(t)
			e.store.Publish(ns, "blueprints", "app", bp)
			text := appVariant
			if pinned {
				text = strings.Replace(text, "package: app}", "package: app, revision: 1}", 1)
			}
			e.variant(text)
			e.mustReconcile("app-prod")
			e.store.Approve(ns, e.downstream("app-prod")[0].Name)
			e.mustReconcile("app-prod")
			if n := len(e.downstream("app-prod")); n != 1 {
				t.Fatalf("nothing moved yet, but there are %d revisions", n)
			}
			bp2 := map[string]string{}
			for k, v := range bp {
				bp2[k] = v
			}
			bp2["deployment.yaml"] = strings.Replace(bp["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
			e.store.Publish(ns, "blueprints", "app", bp2)
			if pinned {
				e.mustReconcile("app-prod") // still pinned to 1
				if n := len(e.downstream("app-prod")); n != 1 {
					t.Fatalf("a pinned variant must not follow a new publication: %d revisions", n)
				}
				e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Upstream.Revision = 2 })
			}
			e.mustReconcile("app-prod")
			revs := e.downstream("app-prod")
			if len(revs) != 2 || revs[1].Lock == nil || revs[1].Lock.Ref != "app/v2" {
				t.Fatalf("want an upgrade draft locked to app/v2: %+v", revs)
			}
			f := e.files(revs[1])
			contains(t, f, "deployment.yaml", "nginx:1.28")
			contains(t, f, "package-context.yaml", "env: prod") // mutations re-applied
		})
	}
}

func TestUpstreamMissingThenAppearing(t *testing.T) {
	e := newEnv(t)
	e.variant(appVariant)
	e.stalls("app-prod")
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonUpstreamNotFound ||
		c.Message != `upstream package revision not found: package "app" in repository "blueprints", latest published revision` {
		t.Fatalf("Stalled = %+v", c)
	}
	if n := len(e.downstream("app-prod")); n != 0 {
		t.Fatalf("%d revisions without an upstream", n)
	}
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.mustReconcile("app-prod")
	if n := len(e.downstream("app-prod")); n != 1 {
		t.Fatalf("want a clone once the upstream appears, got %d", n)
	}
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Status != metav1.ConditionFalse {
		t.Fatalf("Stalled = %+v", c)
	}
}

func TestAdoption(t *testing.T) {
	for _, policy := range []string{"adoptExisting", "adoptNone"} {
		t.Run(policy, func(t *testing.T) {
			e := newEnv(t)
			up := e.store.Publish(ns, "blueprints", "app", blueprint(t))
			existing, err := e.store.CreateDraft(context.Background(), store.DraftSpec{Namespace: ns, Repository: "deploy", Package: "app-prod",
				Workspace: "by-hand", Labels: map[string]string{"keep": "me"}, Task: store.Task{Type: store.Clone, Upstream: up.Name}})
			if err != nil {
				t.Fatal(err)
			}
			e.variant(strings.Replace(appVariant, "labels: {env: prod}", "labels: {env: prod}\n  adoptionPolicy: "+policy, 1))
			e.mustReconcile("app-prod")
			revs := e.downstream("app-prod")
			if policy == "adoptExisting" {
				if len(revs) != 1 || !revs[0].OwnedBy(uid("app-prod")) || revs[0].Labels["env"] != "prod" || revs[0].Labels["keep"] != "me" {
					t.Fatalf("want the draft adopted: %+v", revs)
				}
				contains(t, e.files(revs[0]), "package-context.yaml", "env: prod")
				return
			}
			if len(revs) != 2 || revs[0].Name != existing.Name || revs[0].OwnedBy(uid("app-prod")) || revs[1].Workspace != "packagevariant-1" {
				t.Fatalf("adoptNone must leave the draft alone and clone: %+v", revs)
			}
		})
	}
}

// rule dotted-owners through the orchestrator: dotted names keep exactly one entry.
func TestDottedNames(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(strings.NewReplacer("name: app-prod\n", "name: my.pv\n", "name: set-ns", "name: set.ns").Replace(appVariant))
	for i := 0; i < 3; i++ {
		e.mustReconcile("my.pv")
	}
	k := e.files(e.downstream("app-prod")[0])["Kptfile"]
	if n := strings.Count(k, "PackageVariant.my.pv.set.ns.0"); n != 1 {
		t.Fatalf("want one entry, got %d:\n%s", n, k)
	}
}

// An injected object changing gives an updated draft.
func TestInjectedObjectChanges(t *testing.T) {
	cm := endpoints("us-east1-endpoints", "db-1:5432")
	e := newEnv(t, cm, team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	cm.Data["db"] = "db-2:5432"
	if err := e.client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 {
		t.Fatalf("%+v", revs)
	}
	contains(t, e.files(revs[0]), "endpoints.yaml", "db: db-2:5432")
}

func TestValidation(t *testing.T) {
	e := newEnv(t)
	e.stored(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: bad
spec:
  upstream: {package: app}
  packageContext:
    data: {name: x}
  pipeline:
    mutators:
    - name: no-image
`)
	e.stalls("bad")
	c := e.condition("bad", pvapi.ConditionStalled)
	want := "`spec.upstream.repo` must not be empty; `spec.downstream` must be set; " +
		"`spec.packageContext.data` must not contain the reserved key \"name\" (kpt and Porch set it); " +
		"`spec.pipeline.mutators[0]` must specify one of `image` or `exec`"
	if c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonValidationError || c.Message != want {
		t.Fatalf("Stalled = %+v\nwant message %s", c, want)
	}
	if r := e.condition("bad", pvapi.ConditionReady); r.Status != metav1.ConditionFalse || r.Message != "invalid packagevariant object" {
		t.Fatalf("Ready = %+v", r)
	}
}

// rule draft-upgrade: with pvkit.dev/draft-upgrade: stall (Porch's
// behaviour), a draft made from another upstream is reported, not upgraded.
func TestStaleDraftStallsWhenAsked(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	v := e.variant(appVariant)
	v.Annotations = map[string]string{DraftUpgradeAnnotation: "stall"}
	if err := e.client.Update(context.Background(), v); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	before := e.files(e.downstream("app-prod")[0])
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.stalls("app-prod")
	c := e.condition("app-prod", pvapi.ConditionReady)
	want := `draft deploy.app-prod.packagevariant-1 was made from upstream app app/v1, but the PackageVariant wants app/v2; PackageVariant app-prod asks for Porch's behaviour (pvkit.dev/draft-upgrade: "stall"): approve or delete the draft`
	if c.Status != metav1.ConditionFalse || c.Reason != pvapi.ReasonStaleDraft || c.Message != want {
		t.Fatalf("Ready = %+v\nwant message %s", c, want)
	}
	if after := e.files(e.downstream("app-prod")[0]); !maps.Equal(before, after) {
		t.Fatal("a stalled stale draft must not be written")
	}
	// A typo is read as stall, and named.
	e.annotate("app-prod", DraftUpgradeAnnotation, "inplace")
	e.stalls("app-prod")
	if c := e.condition("app-prod", pvapi.ConditionReady); !strings.Contains(c.Message, `has pvkit.dev/draft-upgrade: "inplace", neither "in-place" nor "stall" (read as "stall" until fixed)`) {
		t.Fatalf("Ready = %+v", c)
	}
}

// clonedAppProd is app-prod reconciled once on the blueprint, and its draft.
func clonedAppProd(t *testing.T) (*env, store.Revision) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.prod"), team("web", "ana"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	return e, e.downstream("app-prod")[0]
}

// editedStaleDraft is app-prod's draft of v1 with a person's edit of its
// deployment (from to to), and v2 of the blueprint published with a new
// image: the draft is stale.
func editedStaleDraft(t *testing.T, from, to string) (*env, store.Revision, map[string]string) {
	e, d := clonedAppProd(t)
	edited := e.files(d)
	edited["deployment.yaml"] = strings.Replace(edited["deployment.yaml"], from, to, 1)
	e.store.SetFiles(ns, d.Name, edited)
	v2 := blueprint(t)
	v2["deployment.yaml"] = strings.Replace(v2["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.store.Publish(ns, "blueprints", "app", v2)
	return e, d, edited
}

// rule draft-upgrade: a stale unapproved draft is upgraded in place: the
// upstream's change arrives, a person's edit of another field stays, the
// variant's mutations are applied again, the lock moves, and no second
// draft is made.
func TestStaleDraftUpgradedInPlace(t *testing.T) {
	e, d, _ := editedStaleDraft(t, "replicas: 1", "replicas: 5")
	e.events()
	e.mustReconcile("app-prod")

	revs := e.downstream("app-prod")
	if len(revs) != 1 || revs[0].Name != d.Name {
		t.Fatalf("want the one draft upgraded where it is, got %+v", revs)
	}
	if revs[0].Lock == nil || revs[0].Lock.Ref != "app/v2" {
		t.Fatalf("the draft's lock must move to app/v2: %+v", revs[0].Lock)
	}
	files := e.files(revs[0])
	contains(t, files, "deployment.yaml", "nginx:1.28")
	contains(t, files, "deployment.yaml", "replicas: 5")
	contains(t, files, "Kptfile", "name: PackageVariant.app-prod.set-ns.0")
	contains(t, files, "Kptfile", "ref: app/v2")
	contains(t, files, "package-context.yaml", "env: prod")
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
	evs := strings.Join(e.events(), "\n")
	if !strings.Contains(evs, "Normal DraftUpgradedInPlace upgraded draft deploy.app-prod.packagevariant-1 in place from app app/v1 to app/v2") ||
		strings.Contains(evs, "DraftUpdated") { // one write, one Event (an Event is a request too: a fleet's release sent two per variant)
		t.Fatalf("events:\n%s", evs)
	}
	// Converged: the next reconcile writes nothing.
	w := e.totalWrites()
	e.mustReconcile("app-prod")
	if got := e.totalWrites(); got != w {
		t.Fatalf("a converged in-place upgrade must write nothing again, %d writes", got-w)
	}
}

// Issue 47 #1: a draft read different from the variant's last write of it
// is Edited in the variant's status, and stays so when the variant writes
// it again (the edit is still in it): what a deletion of the variant would
// lose is known from its status.
func TestEditedDraftIsSaid(t *testing.T) {
	e, d := clonedAppProd(t)
	edited := func() bool {
		t.Helper()
		for _, dt := range e.get("app-prod").Status.DownstreamTargets {
			if dt.Name == d.Name {
				if dt.LastWrite == "" {
					t.Fatalf("no last write recorded for %s", d.Name)
				}
				return dt.Edited
			}
		}
		t.Fatalf("no status entry for %s", d.Name)
		return false
	}
	if edited() {
		t.Fatal("a draft only the variant wrote is Edited")
	}
	files := e.files(d)
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "replicas: 1", "replicas: 5", 1)
	e.store.SetFiles(ns, d.Name, files)
	e.mustReconcile("app-prod")
	if !edited() {
		t.Fatal("a person's edit is not Edited")
	}
	files = e.files(d) // the variant writes again (its package context undone): the edit stays in it
	files["package-context.yaml"] = strings.Replace(files["package-context.yaml"], "env: prod", "env: oops", 1)
	e.store.SetFiles(ns, d.Name, files)
	e.mustReconcile("app-prod")
	if contains(t, e.files(d), "package-context.yaml", "env: prod"); !edited() {
		t.Fatal("Edited was cleared by the variant's own write")
	}
}

// Issue 47 #9: an upstream that adds a readiness gate conflicted with
// pvkit's own gate in every unapproved draft (UpgradeConflict on
// info.readinessGates, with no person's edit anywhere). Gates merge by
// condition type: the draft gets the upstream's gate and keeps pvkit's.
func TestUpstreamGateMergesWithPvkitsGate(t *testing.T) {
	e, d, _ := editedStaleDraft(t, "replicas: 1", "replicas: 1")
	if gates := e.files(d)["Kptfile"]; !strings.Contains(gates, "conditionType: "+variant.MutationGate) {
		t.Fatalf("the draft carries no gate of pvkit's:\n%s", gates)
	}
	v3 := blueprint(t)
	v3["deployment.yaml"] = strings.Replace(v3["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	v3["Kptfile"] = strings.Replace(v3["Kptfile"], "\ninfo:\n", "\ninfo:\n  readinessGates:\n  - conditionType: example.com/reviewed\n", 1)
	if !strings.Contains(v3["Kptfile"], "example.com/reviewed") {
		t.Fatalf("the blueprint's Kptfile has no info:\n%s", v3["Kptfile"])
	}
	e.store.Publish(ns, "blueprints", "app", v3)
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || revs[0].Lock == nil || revs[0].Lock.Ref != "app/v3" {
		t.Fatalf("want the draft upgraded in place to v3: %+v (%+v)", revs, e.condition("app-prod", pvapi.ConditionReady))
	}
	files := e.files(revs[0])
	contains(t, files, "Kptfile", "conditionType: example.com/reviewed")
	contains(t, files, "Kptfile", "conditionType: "+variant.MutationGate)
}

// rule draft-upgrade: a field the person and the upstream both changed,
// differently, stalls the upgrade, naming file, object and field, and the
// draft is left as it was.
func TestStaleDraftConflictStalls(t *testing.T) {
	e, d, edited := editedStaleDraft(t, "nginx:1.27", "nginx:1.27-patched")
	e.stalls("app-prod")
	c := e.condition("app-prod", pvapi.ConditionReady)
	want := "draft deploy.app-prod.packagevariant-1 cannot be upgraded in place from blueprints.app.v1 to blueprints.app.v2: 1 field(s) changed in the draft and upstream differently: deployment.yaml: Deployment/web spec.template.spec.containers[name=web].image: the upstream changed nginx:1.27 to nginx:1.28, the draft has nginx:1.27-patched; make the draft agree with the new upstream (or undo the edit), or approve or delete the draft"
	if c.Reason != pvapi.ReasonUpgradeConflict || c.Message != want {
		t.Fatalf("Ready = %+v\nwant %s", c, want)
	}
	if after := e.files(e.downstream("app-prod")[0]); !maps.Equal(edited, after) {
		t.Fatal("a conflicting upgrade must leave the draft as it was")
	}
	// The person makes the draft agree: the upgrade goes through.
	edited["deployment.yaml"] = strings.Replace(edited["deployment.yaml"], "nginx:1.27-patched", "nginx:1.28", 1)
	e.store.SetFiles(ns, d.Name, edited)
	e.mustReconcile("app-prod")
	if l := e.downstream("app-prod")[0].Lock; l == nil || l.Ref != "app/v2" {
		t.Fatalf("lock after the fix: %+v", l)
	}
}

// Owned revisions of a previous downstream are pruned.
func TestDownstreamChangePrunes(t *testing.T) {
	e := newEnv(t)
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Downstream.Package = "app-prod-2" })
	e.mustReconcile("app-prod")
	if n := len(e.downstream("app-prod")); n != 0 {
		t.Fatalf("the old downstream's draft must be deleted, %d left", n)
	}
	if n := len(e.downstream("app-prod-2")); n != 1 {
		t.Fatalf("want a clone of the new downstream, got %d", n)
	}
}

// renderStatus is what Porch's function runner reports for the pipeline of
// examples/app: set-namespace's result, and its exit code.
func renderStatus(exitCode int, severity, msg, errText string) store.RenderStatus {
	return store.RenderStatus{Err: errText, Result: render.ResultList{
		TypeMeta: metav1.TypeMeta{APIVersion: "kpt.dev/v1", Kind: "FunctionResultList"},
		ExitCode: exitCode,
		Items: []*render.ResultListItem{{Image: "gcr.io/kpt-fn/set-namespace:v0.4.1", ExitCode: exitCode,
			Results: []render.ResultItem{{Message: msg, Severity: severity}}}},
	}}
}

// Porch's render result reaches status.downstreamTargets whole: each
// function's image, results and exit code, on success and on failure.
func TestRenderStatusInDownstreamTargets(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		if strings.Contains(files["package-context.yaml"], "region") {
			return files, renderStatus(1, "error", `namespace "prod,eu" is not a valid namespace`, "fn.render: pipeline.mutators[0] failed with exit code 1")
		}
		return files, renderStatus(0, "info", "namespace [prod] updated 3 resources", "")
	})
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	draft := e.downstream("app-prod")[0]
	ts := e.get("app-prod").Status.DownstreamTargets
	if len(ts) != 1 || ts[0].Name != draft.Name || ts[0].RenderStatus.Err != "" || ts[0].RenderStatus.Result.ExitCode != 0 ||
		len(ts[0].RenderStatus.Result.Items) != 1 || ts[0].RenderStatus.Result.Items[0].Results[0].Message != "namespace [prod] updated 3 resources" {
		t.Fatalf("a successful render is not carried into status: %+v", ts)
	}

	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.PackageContext.Data["region"] = "eu" })
	err := e.reconcile("app-prod")
	if !errors.Is(err, store.ErrRenderFailed) {
		t.Fatalf("a failed render must be returned (and so retried), got %v", err)
	}
	c := e.condition("app-prod", pvapi.ConditionReady)
	if c.Status != metav1.ConditionFalse || c.Reason != pvapi.ReasonRenderFailed ||
		c.Message != "updating "+draft.Name+": package revision default/"+draft.Name+" was not updated: fn.render: pipeline.mutators[0] failed with exit code 1: render failed" {
		t.Fatalf("Ready = %+v", c)
	}
	ts = e.get("app-prod").Status.DownstreamTargets
	if len(ts) != 1 {
		t.Fatalf("targets = %+v", ts)
	}
	rs := ts[0].RenderStatus
	if rs.Err != "fn.render: pipeline.mutators[0] failed with exit code 1" || rs.Result.ExitCode != 1 || len(rs.Result.Items) != 1 ||
		rs.Result.Items[0].Image != "gcr.io/kpt-fn/set-namespace:v0.4.1" || rs.Result.Items[0].ExitCode != 1 ||
		rs.Result.Items[0].Results[0].Severity != "error" || rs.Result.Items[0].Results[0].Message != `namespace "prod,eu" is not a valid namespace` {
		t.Fatalf("the failed render is not in status: %+v", rs)
	}
	if strings.Contains(e.files(e.downstream("app-prod")[0])["package-context.yaml"], "region") {
		t.Fatal("Porch writes nothing when the render fails")
	}
}

// Issue 21 #4: when the package's own pipeline undoes the variant's
// mutation on every render (env: dev in the pipeline, env: prod in the
// variant), the variant stalls with RenderConflict after one write, naming
// the files and the pipeline, and writes nothing more for the same inputs;
// a change of the variant tries once more. (On a real Porch this loop made
// 430 writes in 5 minutes.)
func TestRenderConflictStopsWriting(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		out := map[string]string{}
		for k, v := range files {
			out[k] = v
		}
		out["package-context.yaml"] = strings.Replace(out["package-context.yaml"], "env: prod", "env: dev", 1)
		return out, store.RenderStatus{}
	})
	e.variant(appVariant)
	err := e.reconcile("app-prod")
	var stall *kit.Stalling
	if !errors.As(err, &stall) || stall.Reason != pvapi.ReasonRenderConflict {
		t.Fatalf("err = %v, want a RenderConflict stall", err)
	}
	c := e.condition("app-prod", pvapi.ConditionReady)
	if c.Reason != pvapi.ReasonRenderConflict || !strings.Contains(c.Message, "undid the variant's mutation of package-context.yaml: its Kptfile pipeline") {
		t.Fatalf("Ready = %+v", c)
	}
	writes := e.store.Calls()["updateResources"]
	for i := 0; i < 5; i++ {
		_ = e.reconcile("app-prod")
	}
	if w := e.store.Calls()["updateResources"]; w != writes {
		t.Fatalf("the variant wrote %d more times after RenderConflict", w-writes)
	}
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != pvapi.ReasonRenderConflict {
		t.Fatalf("Stalled = %+v", c)
	}
	// A change of the variant: one more attempt (and the same stall).
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Labels["tier"] = "web" })
	_ = e.reconcile("app-prod")
	if w := e.store.Calls()["updateResources"]; w != writes+1 {
		t.Fatalf("after a change of the variant: %d writes, want one more than %d", w, writes)
	}
}

// e2e-porch (TestInjectionChangeAndUpgradeKeepsManualEdit, under load):
// the injected ConfigMap changed while the variant wrote the draft, so the
// check of the write (the chain run again on the rendered draft) read the
// new object and would change endpoints.yaml again. That is the input's
// change, not Porch's render undoing the mutation: no RenderConflict, no
// stall, and the next reconcile writes the new value.
func TestInjectedObjectChangedDuringTheWriteIsNoConflict(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	changed := false
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		if !changed && strings.Contains(files["endpoints.yaml"], "db: db") {
			changed = true
			if err := e.cluster.Update(context.Background(), endpoints("us-east1-endpoints", "db2")); err != nil {
				t.Error(err)
			}
		}
		return files, store.RenderStatus{}
	})
	e.variant(appVariant)
	if err := e.reconcile("app-prod"); err != nil {
		t.Fatalf("the write whose input changed meanwhile: %v", err)
	}
	if !changed {
		t.Fatal("the ConfigMap was not changed during the write")
	}
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Status == metav1.ConditionTrue {
		t.Fatalf("Stalled = %+v", c)
	}
	e.mustReconcile("app-prod")
	ds := e.downstream("app-prod")
	if len(ds) != 1 {
		t.Fatalf("downstream revisions: %+v", ds)
	}
	contains(t, e.files(ds[0]), "endpoints.yaml", "db: db2")
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", c)
	}
}

// e2e-porch (TestPorchRendersPvkitImages, one CI run in four): the status
// patch of the reconcile that wrote and found the render conflict lost to
// a concurrent update of the variant; the next reconcile found the
// conflict in its memo and left the targets as they were, so the status
// never named the render. The memo gave that write's targets back; since
// issue 61 #1 the patch that conflicts is rebased and written, and the
// memo keeps names only.
func TestRenderConflictRecordedAfterALostStatusPatch(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		out := map[string]string{}
		for k, v := range files {
			out[k] = v
		}
		out["package-context.yaml"] = strings.Replace(out["package-context.yaml"], "env: prod", "env: dev", 1)
		return out, store.RenderStatus{Result: apirender.ResultList{Items: []*apirender.ResultListItem{{Image: "pvkit/package-context:dev"}}}}
	})
	e.variant(appVariant)
	e.conflicts.Next(1) // the writing reconcile's status patch conflicts
	_, _ = e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: clientKey("app-prod")})
	ts := e.get("app-prod").Status.DownstreamTargets
	if len(ts) != 1 || len(ts[0].RenderStatus.Result.Items) != 1 || ts[0].RenderStatus.Result.Items[0].Image != "pvkit/package-context:dev" {
		t.Fatalf("the render of the write is not in the status after the conflict: %+v", ts)
	}
	_ = e.reconcile("app-prod") // the memo's reconcile keeps it
	ts = e.get("app-prod").Status.DownstreamTargets
	if len(ts) != 1 || len(ts[0].RenderStatus.Result.Items) != 1 || ts[0].RenderStatus.Result.Items[0].Image != "pvkit/package-context:dev" {
		t.Fatalf("the render of the write is not in the status: %+v", ts)
	}
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Reason != pvapi.ReasonRenderConflict {
		t.Fatalf("Stalled = %+v", c)
	}
}

// The controller's side of rule blueprint-runs-last (pvctl's:
// cli TestBlueprintOverridesVariantWarned): the variant prepends
// set-namespace {namespace: prod}, the blueprint's own set-namespace runs
// after it; the variant is Ready with BlueprintOverrides and one Warning
// Event, and loses the condition when it no longer prepends what the
// blueprint undoes.
func TestBlueprintOverridesCondition(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	bp := blueprint(t)
	bp["Kptfile"] = strings.Replace(bp["Kptfile"], "  mutators:\n", "  mutators:\n    - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n      configMap:\n        namespace: web\n", 1)
	e.store.Publish(ns, "blueprints", "app", bp)
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	c := e.condition("app-prod", ConditionBlueprintOverrides)
	if c.Status != metav1.ConditionTrue || c.Reason != ReasonFunctionRunsAgain || !strings.Contains(c.Message, "the blueprint's own set-namespace (`pipeline.mutators[1]`) runs after the variant's (`pipeline.mutators[0]`") {
		t.Fatalf("BlueprintOverrides = %+v", c)
	}
	if r := e.condition("app-prod", pvapi.ConditionReady); r.Status != metav1.ConditionTrue {
		t.Fatalf("Ready = %+v", r)
	}
	if evs := strings.Join(e.events(), "\n"); strings.Count(evs, "Warning BlueprintOverrides") != 1 {
		t.Fatalf("events:\n%s", evs)
	}
	e.mustReconcile("app-prod")
	if evs := e.events(); len(evs) != 0 {
		t.Fatalf("the warning was recorded again: %v", evs)
	}
	// The variant sets labels instead: nothing the blueprint undoes.
	e.edit("app-prod", func(v *pvapi.PackageVariant) {
		v.Spec.Pipeline.Mutators[0].Image, v.Spec.Pipeline.Mutators[0].ConfigMap = "gcr.io/kpt-fn/set-labels:v0.2", map[string]string{"tier": "web"}
	})
	e.mustReconcile("app-prod")
	if c := apimeta.FindStatusCondition(e.get("app-prod").Status.Conditions, ConditionBlueprintOverrides); c != nil {
		t.Fatalf("the blueprint no longer overrides, the condition stays: %+v", c)
	}
}

// The controller's side of rule blueprint-renders-alone (pvctl's:
// cli TestCloneNeedingAVariantKeyStalls): Porch refuses the clone because
// its render needs data.env, which only the variant sets; the variant
// stalls instead of retrying.
func TestCloneNeedingAVariantKeyStallsInTheController(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		return nil, store.RenderStatus{Err: "fieldPath `data.env` is missing for replacement source ConfigMap.[noVer].[noGrp]/kptfile.kpt.dev.[noNs]:data.env"}
	})
	e.variant(appVariant)
	err := e.reconcile("app-prod")
	var stall *kit.Stalling
	if !errors.As(err, &stall) || stall.Reason != pvapi.ReasonRenderFailed || !strings.Contains(err.Error(), "the blueprint must render on its own") {
		t.Fatalf("err = %v, want a RenderFailed stall", err)
	}
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Status != metav1.ConditionTrue {
		t.Fatalf("Stalled = %+v", c)
	}
}

// rule floating-versions: spec.upstream.semver follows the newest published
// version in range: v1.4.2 is taken, v2.0.0 is not; an unapproved draft
// moves in place, a published downstream through an upgrade draft.
func TestSemverUpstream(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db.prod"), team("web", "ana"))
	tag := func(version string, n int, image string) {
		files := blueprint(t)
		files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", image, 1)
		e.store.Restore(store.Revision{Namespace: ns, Name: store.RevisionName("blueprints", "app", version), Repository: "blueprints",
			Package: "app", Workspace: version, Revision: n, Lifecycle: store.Published}, files)
	}
	tag("v1.3.0", 1, "nginx:1.3")
	e.variant(strings.Replace(appVariant, "upstream: {repo: blueprints, package: app}", `upstream: {repo: blueprints, package: app, semver: "1"}`, 1))
	e.mustReconcile("app-prod")
	d := e.downstream("app-prod")[0]
	if d.Lock == nil || d.Lock.Ref != "app/v1" {
		t.Fatalf("clone of v1.3.0: lock %+v", d.Lock)
	}
	tag("v2.0.0", 2, "nginx:2.0")
	tag("v1.4.2", 3, "nginx:1.4")
	e.mustReconcile("app-prod")
	revs := e.downstream("app-prod")
	if len(revs) != 1 || revs[0].Lock.Ref != "app/v3" {
		t.Fatalf("the draft must move in place to v1.4.2 (revision 3), not to v2.0.0: %+v", revs)
	}
	contains(t, e.files(revs[0]), "deployment.yaml", "nginx:1.4")
	if _, err := e.store.Approve(ns, revs[0].Name); err != nil {
		t.Fatal(err)
	}
	tag("v1.5.0", 4, "nginx:1.5")
	e.mustReconcile("app-prod")
	var draft *store.Revision
	for _, r := range e.downstream("app-prod") {
		if !r.Lifecycle.IsPublished() {
			draft = &r
		}
	}
	if draft == nil || draft.Lock.Ref != "app/v4" {
		t.Fatalf("want an upgrade draft to v1.5.0: %+v", e.downstream("app-prod"))
	}
	// A range nothing is published in stalls, saying what it asked for.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Upstream.Semver = "~3.1" })
	e.stalls("app-prod")
	if c := e.condition("app-prod", pvapi.ConditionReady); c.Reason != pvapi.ReasonUpstreamNotFound || !strings.Contains(c.Message, `the newest published version in semver range "~3.1"`) {
		t.Fatalf("Ready = %+v", c)
	}
	// A range that does not parse is a validation error naming the field.
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Upstream.Semver = ">=x.y" })
	_ = e.reconcile("app-prod") // stalled already: no new terminal error
	if c := e.condition("app-prod", pvapi.ConditionStalled); c.Reason != pvapi.ReasonValidationError || !strings.Contains(c.Message, "spec.upstream.semver") || !strings.Contains(c.Message, `">=x.y": improper constraint: >=x.y`) {
		t.Fatalf("Stalled = %+v", c)
	}
}
