package packagevariantset

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Issue 57 #4's acceptance (rule set-deletion): deleting a three-wave set
// deletes the last wave first, each wave only when the one after it is
// gone, under the mass-deletion guard (its annotation lifts it); the
// finalizer goes with the last child. The order of deletions is asserted.
func TestSetDeletedWaveByWave(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.set(churnSet)
	e.reconcile()
	set := e.getSet()
	if !controllerutil.ContainsFinalizer(set, ChildrenFinalizer) || len(e.children()) != 10 {
		t.Fatalf("the set's finalizer %v, children %d", set.Finalizers, len(e.children()))
	}
	waves := map[string]string{}
	for _, w := range set.Status.Rollout.Waves {
		for _, m := range w.Members {
			waves[m] = w.Name
		}
	}
	ctx := context.Background()
	if err := e.client.Delete(ctx, set); err != nil {
		t.Fatal(err)
	}
	// The guard: wave rest is 8 of the 10 at once.
	err := e.try()
	set = e.getSet()
	stalled := apimeta.FindStatusCondition(set.Status.Conditions, pvapi.ConditionStalled)
	if err == nil || stalled == nil || stalled.Reason != pvapi.ReasonMassDeletion ||
		!strings.HasPrefix(stalled.Message, "the set is being deleted and would remove 8 of its 10 PackageVariants at once (wave rest; deletionPolicy delete: their packages go with them); none was removed: ") {
		t.Fatalf("guard: %v, %+v", err, stalled)
	}
	if n := len(e.children()); n != 10 {
		t.Fatalf("the guard held, yet %d children are left", n)
	}
	set.Annotations = map[string]string{AllowMassDeletionAnnotation: "true"}
	if err := e.client.Update(ctx, set); err != nil {
		t.Fatal(err)
	}
	var order []string // each step's deleted waves
	for step := 0; step < 10; step++ {
		before := e.children()
		err := e.try()
		var gone []string
		for name := range before {
			if _, ok := e.children()[name]; !ok {
				gone = append(gone, waves[name])
			}
		}
		if len(gone) > 0 {
			sort.Strings(gone)
			order = append(order, strings.Join(dedupe(gone), "+"))
			// A second reconcile while they are on their way out removes
			// nothing more.
			if e.try(); len(e.children()) != len(before)-len(gone) {
				t.Fatalf("step %d: more removed while wave %v was on its way out", step, gone)
			}
			e.release() // each child's own finalizer: its packages are dealt with
			continue
		}
		if err == nil {
			break // the set is gone
		}
	}
	if got := strings.Join(order, ", "); got != "rest, early, canary" {
		t.Fatalf("deleted in the order %q, want the last wave first: rest, early, canary", got)
	}
	if err := e.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "app"}, set); !apierrors.IsNotFound(err) {
		t.Fatalf("the set is still there: %v %v", err, set.Finalizers)
	}
}

// A set without a rollout removes its children at once, through the
// guard; one whose children orphan their packages carries no finalizer.
func TestSetWithoutRolloutDeletedUnderTheGuard(t *testing.T) {
	e := newEnv(t, repo("r-000", map[string]string{"env": "prod"}), repo("r-001", map[string]string{"env": "prod"}))
	e.set(strings.Split(churnSet, "  rollout:")[0])
	e.reconcile()
	ctx := context.Background()
	if err := e.client.Delete(ctx, e.getSet()); err != nil {
		t.Fatal(err)
	}
	if err := e.try(); err == nil || !strings.Contains(err.Error(), "would remove 2 of its 2 PackageVariants at once (all of them;") {
		t.Fatalf("guard: %v", err)
	}
	e.r.AllowMassDeletion = true // pvctl run --prune=all
	if err := e.try(); err == nil || !strings.Contains(err.Error(), "the set is being deleted: all of them: 2 PackageVariant(s) removed") || len(e.children()) != 0 {
		t.Fatalf("lifted: %v, %d children left", err, len(e.children()))
	}
	e.release()
	if err := e.try(); err != nil {
		t.Fatalf("the last reconcile: %v", err)
	}
	orphan := newEnv(t, repo("r-000", map[string]string{"env": "prod"}))
	orphan.set(strings.Replace(strings.Split(churnSet, "  rollout:")[0], "      matchLabels: {env: prod}\n", "      matchLabels: {env: prod}\n    template: {deletionPolicy: orphan}\n", 1))
	orphan.reconcile()
	if f := orphan.getSet().Finalizers; len(f) != 0 {
		t.Fatalf("a set whose children orphan their packages: finalizers %v", f)
	}
}

// release removes the finalizer of every child being deleted, as each
// child's own controller does once its packages are dealt with.
func (e *env) release() {
	e.t.Helper()
	var l pvapi.PackageVariantList
	if err := e.client.List(context.Background(), &l, client.InNamespace(ns)); err != nil {
		e.t.Fatal(err)
	}
	for i := range l.Items {
		c := &l.Items[i]
		if c.DeletionTimestamp.IsZero() {
			continue
		}
		controllerutil.RemoveFinalizer(c, pv.Finalizer)
		if err := e.client.Update(context.Background(), c); client.IgnoreNotFound(err) != nil {
			e.t.Fatal(err)
		}
	}
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// canaryFleet is ten repositories labelled env: prod, r-003 the canary
// (churnSet's waves: canary, early, rest).
func canaryFleet() []client.Object {
	var objs []client.Object
	for i := 0; i < 10; i++ {
		labels := map[string]string{"env": "prod"}
		if i == 3 {
			labels["ring"] = "canary"
		}
		objs = append(objs, repo(fmt.Sprintf("r-%03d", i), labels))
	}
	return objs
}

// groupedSet is churnSet over a group: the group package blueprints/
// free5gc names two members of the catalog, so each of the ten targets
// is a unit of two children (rule package-groups).
var groupedSet = strings.NewReplacer("  name: app\n", "  name: app\n  annotations: {pvkit.dev/allow-mass-deletion: \"true\"}\n",
	"  upstream: {repo: blueprints, package: app}\n", "  group: {repo: blueprints, package: free5gc}\n").Replace(churnSet)

// publishGroup publishes the members and the group package of groupedSet.
func (e *env) publishGroup() {
	e.t.Helper()
	st := e.r.Store.(*fakestore.Store)
	for _, m := range []string{"upf", "smf"} {
		st.Publish(ns, "catalog", "free5gc-"+m, storetest.Blueprint)
	}
	st.Publish(ns, "blueprints", "free5gc", map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"group.yaml": "apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata:\n  name: free5gc\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n" +
			"spec:\n  members:\n  - {name: upf, upstream: {repo: catalog, package: free5gc-upf, revision: 1}}\n  - {name: smf, upstream: {repo: catalog, package: free5gc-smf, revision: 1}}\n",
	})
}

// A grouped set's waves move targets, each with its members' children
// (one rollout over units): deleting a grouped three-wave set removes the
// last wave's targets first, every member of a target in the same step,
// each wave only once the one after it is gone. A wave's members are
// targets, not children: read as child names, the whole set went in one
// step.
func TestGroupedSetDeletedWaveByWave(t *testing.T) {
	e := newEnv(t, canaryFleet()...)
	e.publishGroup()
	e.set(groupedSet)
	e.reconcile()
	set := e.getSet()
	if n := len(e.children()); n != 20 || set.Status.Rollout == nil {
		t.Fatalf("children %d (want 20: ten targets of two members), rollout %+v", n, set.Status.Rollout)
	}
	waveOf := map[string]string{} // target -> wave
	for _, w := range set.Status.Rollout.Waves {
		for _, m := range w.Members {
			waveOf[m] = w.Name
		}
	}
	if waveOf["r-003"] != "canary" || len(waveOf) != 10 {
		t.Fatalf("the waves' members are not the targets: %v", waveOf)
	}
	if err := e.client.Delete(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	var order []string
	for step := 0; step < 10; step++ {
		before := e.children()
		err := e.try()
		var gone []string
		targets := map[string]int{}
		for name, c := range before {
			if _, ok := e.children()[name]; !ok {
				gone = append(gone, waveOf[c.Spec.Downstream.Repo])
				targets[c.Spec.Downstream.Repo]++
			}
		}
		for tg, n := range targets {
			if n != 2 {
				t.Fatalf("step %d: %d of target %s's two members removed: a target's members go together", step, n, tg)
			}
		}
		if len(gone) > 0 {
			sort.Strings(gone)
			order = append(order, strings.Join(dedupe(gone), "+"))
			e.release()
			continue
		}
		if err == nil {
			break
		}
	}
	if got := strings.Join(order, ", "); got != "rest, early, canary" {
		t.Fatalf("deleted in the order %q, want the last wave first: rest, early, canary", got)
	}
}
