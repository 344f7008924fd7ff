package packagevariantset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// prodSet is a set over every Repository labelled env: prod.
const prodSet = `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: app
spec:
  upstream: {repo: blueprints, package: app, revision: 1}
  targets:
  - repositorySelector:
      matchLabels: {env: prod}
`

// A selector typo would remove every child: the guard removes none, stalls
// naming the count, and records it; the set's annotation lets it through.
func TestMassDeletionGuard(t *testing.T) {
	e := newEnv(t, repo("cluster-01", map[string]string{"env": "prod"}), repo("cluster-02", map[string]string{"env": "prod"}),
		repo("cluster-03", map[string]string{"env": "prod"}))
	e.set(prodSet)
	e.reconcile()
	if n := len(e.children()); n != 3 {
		t.Fatalf("%d children", n)
	}
	e.events()
	e.editSet(func(s *pvsapi.PackageVariantSet) { s.Spec.Targets[0].RepositorySelector.MatchLabels["env"] = "prd" })
	if err := e.try(); !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("the guard stalls: %v", err)
	}
	if n := len(e.children()); n != 3 {
		t.Fatalf("the guard must remove nothing, %d children left", n)
	}
	c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Stalled")
	if c == nil || c.Reason != pvsapi.ReasonMassDeletion ||
		c.Message != "the set would remove 3 of its 3 PackageVariants (more than half); none was removed: app-cluster-01-app, app-cluster-02-app, app-cluster-03-app. If that is intended, annotate the set pvkit.dev/allow-mass-deletion=true (pvctl run: --prune=all), and remove the annotation after" {
		t.Fatalf("Stalled = %+v", c)
	}
	if ev := e.events(); len(ev) != 1 || ev[0] != "Warning MassDeletion" {
		t.Fatalf("events = %q", ev)
	}
	e.editSet(func(s *pvsapi.PackageVariantSet) {
		s.Annotations = map[string]string{AllowMassDeletionAnnotation: "true"}
	})
	e.reconcile()
	if n := len(e.children()); n != 0 {
		t.Fatalf("allowed, the removal happens: %d children left", n)
	}
	if ev := e.events(); len(ev) != 1 || ev[0] != "Normal ChildRemoved" {
		t.Fatalf("events = %q", ev)
	}
}

// Issue 47 #1: the guard counted one reconcile: repositories losing the
// selected label a few at a time (5, then 2, 1, 1, 1 of 10) removed every
// child and its drafts with no confirmation. The loss counts from the most
// children the set had since the guard was last lifted (peakChildren): the
// reconcile that would leave less than half stalls, naming the children
// and the drafts that hold someone's edits; lifting the guard takes the new
// size as the baseline.
func TestMassDeletionGuardCountsOverTime(t *testing.T) {
	var repos []client.Object
	for i := 1; i <= 10; i++ {
		repos = append(repos, repo(fmt.Sprintf("cluster-%02d", i), map[string]string{"env": "prod"}))
	}
	e := newEnv(t, repos...)
	e.set(prodSet)
	e.reconcile()
	if n := len(e.children()); n != 10 || e.getSet().Status.PeakChildren != 10 {
		t.Fatalf("%d children, peak %d", n, e.getSet().Status.PeakChildren)
	}
	// A person's edit of cluster-08's draft, as its variant's status says it.
	edited := &pvapi.PackageVariant{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app-cluster-08-app"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Status.DownstreamTargets = []pvapi.DownstreamTarget{{Name: "cluster-08.app.packagevariant-1", LastWrite: "sha256:x", Edited: true}}
	if err := e.client.Status().Update(context.Background(), edited); err != nil {
		t.Fatal(err)
	}
	unlabel := func(names ...int) {
		for _, i := range names {
			r := &porchconfig.Repository{}
			if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("cluster-%02d", i)}, r); err != nil {
				t.Fatal(err)
			}
			r.Labels = nil
			if err := e.client.Update(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	unlabel(1, 2, 3, 4, 5) // half: allowed, as before
	e.reconcile()
	if n := len(e.children()); n != 5 {
		t.Fatalf("5 of 10 removed: %d children left", n)
	}
	unlabel(6, 7) // 7 of the 10 lost: stalls, nothing removed
	if err := e.try(); !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("the guard stalls: %v", err)
	}
	if n := len(e.children()); n != 5 {
		t.Fatalf("the guard must remove nothing, %d children left", n)
	}
	c := apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Stalled")
	want := "the set would remove 2 of its 5 PackageVariants, leaving 3 of the 10 it had since its mass-deletion guard was last lifted (status.peakChildren; more than half lost); none was removed: app-cluster-06-app, app-cluster-07-app"
	if c == nil || c.Reason != pvsapi.ReasonMassDeletion || !strings.HasPrefix(c.Message, want) {
		t.Fatalf("Stalled = %+v", c)
	}
	// The drafts with someone's edits are named.
	unlabel(8)
	e.try()
	c = apimeta.FindStatusCondition(e.getSet().Status.Conditions, "Stalled")
	if c == nil || !strings.Contains(c.Message, "; drafts that hold someone's edits and would go with them: cluster-08.app.packagevariant-1 (app-cluster-08-app's)") {
		t.Fatalf("Stalled = %+v", c)
	}
	// Lifted: the removal happens, and the new size is the baseline.
	e.editSet(func(s *pvsapi.PackageVariantSet) {
		s.Annotations = map[string]string{AllowMassDeletionAnnotation: "true"}
	})
	e.reconcile()
	if n := len(e.children()); n != 2 || e.getSet().Status.PeakChildren != 2 {
		t.Fatalf("lifted: %d children, peak %d", n, e.getSet().Status.PeakChildren)
	}
}

// One Event per action and reconcile, naming the first ten children.
func TestRecordSteps(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	r := &Reconciler{Recorder: rec}
	var steps []pvsexpand.Step
	for i := 0; i < 12; i++ {
		steps = append(steps, pvsexpand.Step{Action: pvsexpand.Create, Name: fmt.Sprintf("app-%02d", i), Where: fmt.Sprintf("repository r%02d", i)})
	}
	steps = append(steps, pvsexpand.Step{Action: pvsexpand.Remove, Name: "old"})
	r.recordSteps(&pvsapi.PackageVariantSet{}, steps)
	close(rec.Events)
	var got []string
	for ev := range rec.Events {
		got = append(got, ev)
	}
	want := []string{
		"Normal ChildCreated created 12 PackageVariants: app-00 (target repository r00), app-01 (target repository r01), app-02 (target repository r02), app-03 (target repository r03), app-04 (target repository r04), app-05 (target repository r05), app-06 (target repository r06), app-07 (target repository r07), app-08 (target repository r08), app-09 (target repository r09) and 2 more",
		"Normal ChildRemoved removed 1 PackageVariant: old (its target is gone)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A fan-out's children are written Workers at a time, not one round trip
// after another; the Event keeps the plan's order.
func TestChildrenWrittenConcurrently(t *testing.T) {
	var repos []client.Object
	for i := 0; i < 12; i++ {
		repos = append(repos, repo(fmt.Sprintf("r%02d", i), map[string]string{"env": "prod"}))
	}
	e := newEnv(t, repos...)
	e.r.Workers = 4
	var mu sync.Mutex
	inflight, most := 0, 0
	e.set("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: app\nspec:\n  upstream: {repo: blueprints, package: app}\n" +
		"  targets:\n  - repositorySelector:\n      matchLabels: {env: prod}\n")
	e.onCreate = func() {
		mu.Lock()
		inflight++
		most = max(most, inflight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		inflight--
		mu.Unlock()
	}
	e.reconcile()
	if len(e.children()) != 12 {
		t.Fatalf("%d children, want 12", len(e.children()))
	}
	if most < 2 || most > 4 {
		t.Fatalf("at most %d creates at once, want 2 to 4 (Workers)", most)
	}
	var ev string
	select {
	case ev = <-e.rec.Events:
	default:
	}
	if !strings.Contains(ev, "created 12 PackageVariants: app-r00-app (target `spec.targets[0].repositorySelector` (Repository \"r00\", package \"app\")), app-r01-app") {
		t.Fatalf("the Event does not keep the plan's order: %q", ev)
	}
}

// A status patch that loses to a newer write is rebased and written (issue
// 61 #1); one that loses every time is no error: the set is reconciled
// again shortly, and that run patches the status.
func TestStatusPatchLostIsRequeued(t *testing.T) {
	e := newEnv(t, repo("r1", map[string]string{"env": "prod"}))
	e.set("apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: app\nspec:\n  upstream: {repo: blueprints, package: app}\n" +
		"  targets:\n  - repositorySelector:\n      matchLabels: {env: prod}\n")
	e.conflicts.Next(1 + kit.StatusRebases)
	res, err := e.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: "app"}})
	if err != nil || res.RequeueAfter != kit.StatusLostRetry {
		t.Fatalf("a lost status patch: %+v, %v; want a requeue after %v and no error", res, err, kit.StatusLostRetry)
	}
	e.reconcile()
	var set pvsapi.PackageVariantSet
	if err := e.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "app"}, &set); err != nil {
		t.Fatal(err)
	}
	if c := apimeta.FindStatusCondition(set.Status.Conditions, "Ready"); c == nil || c.Status != metav1.ConditionTrue {
		t.Fatalf("Ready after the retry: %+v", set.Status.Conditions)
	}
	if len(e.children()) != 1 {
		t.Fatalf("%d children, want 1", len(e.children()))
	}
}
