package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api"
	pvv1 "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store/fakestore"
	"github.com/pvkit/pvkit/orchestrator/store/storetest"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// publishV2 publishes blueprints/app v2 (nginx 1.28).
func (w *ws) publishV2() { w.t.Helper(); w.publishImage("nginx:1.28") }

// publishImage publishes examples/app with another image, the next
// revision of blueprints/app.
func (w *ws) publishImage(image string) {
	w.t.Helper()
	dir := filepath.Join(w.t.TempDir(), "app")
	files := fntest.ReadTree(w.t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: "+image, 1)
	fntest.WriteTree(w.t, dir, files)
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "app", dir)
}

// Issue 32 #4, locally: pvctl suspend records the suspension in the state;
// the run's reconcilers (the controller's) then write nothing for the set
// and its children while the upstream moves, and status says Suspended;
// pvctl resume, and the next run upgrades.
func TestSuspendResumeLocally(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "edge-useast1.app.packagevariant-1")
	contains(t, w.mustCmd(ExitOK, "suspend", "pvs/app"), "packagevariantset/app suspended: pvctl run writes nothing for it or its children until pvctl resume packagevariantset/app")
	contains(t, w.mustCmd(ExitOK, "suspend", "pvs/app"), "packagevariantset/app is suspended already")
	// app-staging keeps Porch's stale-draft stall, so that nothing is written.
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "metadata:\n", "metadata:\n  annotations:\n    pvkit.dev/draft-upgrade: stall\n", 1))
	w.publishV2()
	before := w.snapshot()
	out := w.run(ExitStalled) // app-staging, no child of the set, is not suspended: its draft is stale
	contains(t, out, "PackageVariantSet  app                   True   Suspended", "app-edge-useast1-app  True   Suspended", "app-staging           False  StaleDraft")
	if strings.Contains(out, "created draft") {
		t.Fatalf("a suspended set's child made a draft:\n%s", out)
	}
	if after := w.snapshot(); len(after) != len(before) {
		t.Errorf("the suspended run wrote to the repositories")
	}
	st := w.mustCmd(ExitOK, "status", "-o", "wide")
	contains(t, st, `PackageVariantSet app is suspended (pvkit.dev/suspend: "true")`, `its PackageVariantSet app is suspended`)
	contains(t, w.mustCmd(ExitOK, "events"), "Suspended")

	// A local reconcile is a run, refused while suspended; without -f, usage.
	code, _, errs := w.cmd("reconcile", "pvs/app", "-f", w.in)
	if code != ExitNotReady || !strings.Contains(errs, "pvctl reconcile: packagevariantset app is suspended in the last run's state: pvctl resume packagevariantset/app first") {
		t.Fatalf("reconcile while suspended: exit %d: %s", code, errs)
	}
	code, _, errs = w.cmd("reconcile", "pvs/app")
	if code != ExitUsage || !strings.Contains(errs, "a local reconcile is a pvctl run: give the files with -f") {
		t.Fatalf("reconcile without -f: exit %d: %s", code, errs)
	}

	contains(t, w.mustCmd(ExitOK, "resume", "pvs/app"), "packagevariantset/app resumed: the next pvctl run reconciles it")
	contains(t, w.mustCmd(ExitOK, "resume", "pvs/app"), "packagevariantset/app is not suspended")
	out = w.mustCmd(ExitStalled, "reconcile", "pvs/app", "-f", w.in, "-o", "wide")
	contains(t, out, "created draft edge-useast1.app.packagevariant-2 (upgrade of edge-useast1.app.packagevariant-1 to blueprints.app.v2)")
	if strings.Contains(out, "Suspended") {
		t.Errorf("resumed, the run still says Suspended:\n%s", out)
	}

	// Errors name what is wrong.
	code, _, errs = w.cmd("suspend", "pv/nosuch")
	if code != ExitNotReady || !strings.Contains(errs, "pvctl suspend: packagevariant/nosuch: not found in the last run's state (pvctl status lists them)") {
		t.Errorf("suspend nosuch: exit %d: %s", code, errs)
	}
	code, _, errs = w.cmd("suspend", "deployment/app")
	if code != ExitUsage || !strings.Contains(errs, `want packagevariant/NAME or packagevariantset/NAME, not kind "deployment"`) {
		t.Errorf("suspend deployment/app: exit %d: %s", code, errs)
	}
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "  annotations:\n", "  annotations:\n    pvkit.dev/suspend: \"true\"\n", 1))
	w.mustCmd(ExitStalled, "run", "-f", w.in)
	code, _, errs = w.cmd("resume", "pv/app-staging")
	if code != ExitNotReady || !strings.Contains(errs, `packagevariant/app-staging is suspended by its file (pvkit.dev/suspend: "true"), not by pvctl suspend: edit the file`) {
		t.Errorf("resume of a file's suspension: exit %d: %s", code, errs)
	}
}

// pvctl wait reads the state (or a cluster) until the condition holds, of
// the object's current generation.
func TestWait(t *testing.T) {
	defer func(d time.Duration) { pollInterval = d }(pollInterval)
	pollInterval = 10 * time.Millisecond
	w := newWS(t)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "wait", "pvs/app", "--for=condition=Ready", "--timeout", "5s"), "packagevariantset/app condition met (Ready=True)")
	contains(t, w.mustCmd(ExitOK, "wait", "pv/app-staging", "--for", "condition=Stalled=false"), "packagevariant/app-staging condition met (Stalled=False)")
	code, _, errs := w.cmd("wait", "pvs/app", "--for=condition=Ready=False", "--timeout", "100ms")
	if code != ExitNotReady || !strings.Contains(errs, "pvctl wait: timed out after 100ms waiting for packagevariantset/app Ready=False; last: Ready=True Reconciled: ") {
		t.Errorf("a wait that times out: exit %d: %s", code, errs)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"wait", "pvs/app", "--for=delete"}, `--for must be condition=TYPE or condition=TYPE=STATUS, not "delete"`},
		{[]string{"wait", "pvs/app", "--for=condition=Ready=maybe"}, `--for: status "maybe" is not True, False or Unknown`},
		{[]string{"wait", "pvs/app", "--timeout", "0s"}, "--timeout must be positive, found 0s"},
		{[]string{"wait"}, "wait takes one KIND/NAME"},
	} {
		if code, _, errs := w.cmd(c.args[0], c.args[1:]...); code != ExitUsage || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d: %s", c.args, code, errs)
		}
	}
	code, _, errs = w.cmd("wait", "pv/nosuch")
	if code != ExitNotReady || !strings.Contains(errs, "pvctl wait: packagevariant nosuch: not found in the last run's state") {
		t.Errorf("wait nosuch: exit %d: %s", code, errs)
	}
}

// Against a cluster: suspend and resume patch the annotation, resume and
// reconcile ask for a reconcile and wait until the controller handled it
// (here a stand-in that handles it as the reconcilers do), reconcile
// refuses a suspended object.
func TestControlsAgainstACluster(t *testing.T) {
	defer func(d time.Duration, n func() time.Time) { pollInterval, now = d, n }(pollInterval, now)
	pollInterval = 10 * time.Millisecond
	tick := 0
	now = func() time.Time { tick++; return time.Date(2026, 11, 26, 12, 0, tick, 0, time.UTC) }
	scheme, err := pvapi.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	set := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "ops", Generation: 1},
		Status: pvsapi.PackageVariantSetStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled", ObservedGeneration: 1}}}}
	v := &pvv1.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ops", Generation: 1},
		Status: pvv1.PackageVariantStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Error", Message: "upstream gone", ObservedGeneration: 1}}}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set, v).WithStatusSubresource(set, v).Build()
	old := ClusterClient
	ClusterClient = func(string, string) (client.Client, error) { return c, nil }
	defer func() { ClusterClient = old }()
	// The controller's stand-in: it handles what is asked, as finish does.
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	// cancel stops the stand-in and waits until it has: one still in its
	// loop handled the request after it (a loaded machine, make test).
	cancel := func() { stop(); <-stopped }
	defer stop()
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			for _, o := range []client.Object{&pvsapi.PackageVariantSet{}, &pvv1.PackageVariant{}} {
				name := "app"
				if _, isSet := o.(*pvsapi.PackageVariantSet); isSet {
					name = "fleet"
				}
				if err := c.Get(ctx, types.NamespacedName{Namespace: "ops", Name: name}, o); err != nil {
					continue
				}
				at := o.GetAnnotations()[kit.ReconcileRequestAnnotation]
				switch x := o.(type) {
				case *pvsapi.PackageVariantSet:
					if x.Status.LastHandledReconcileAt != at && x.Annotations[kit.SuspendAnnotation] == "" {
						x.Status.LastHandledReconcileAt = at
						_ = c.Status().Update(ctx, x)
					}
				case *pvv1.PackageVariant:
					if x.Status.LastHandledReconcileAt != at && x.Annotations[kit.SuspendAnnotation] == "" {
						x.Status.LastHandledReconcileAt = at
						_ = c.Status().Update(ctx, x)
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Command(context.Background(), args[0], append([]string{"--repos", t.TempDir(), "--kubeconfig", "/k", "-n", "ops"}, args[1:]...), &out, &errb); code != want {
			t.Fatalf("pvctl %v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	out, _ := run(ExitOK, "suspend", "pvs/fleet")
	contains(t, out, "packagevariantset/fleet suspended")
	got := &pvsapi.PackageVariantSet{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ops", Name: "fleet"}, got); err != nil || got.Annotations[kit.SuspendAnnotation] != "true" {
		t.Fatalf("after suspend: annotations %v (%v)", got.Annotations, err)
	}
	_, errs := run(ExitNotReady, "reconcile", "pvs/fleet")
	contains(t, errs, `pvctl reconcile: PackageVariantSet fleet is suspended (pvkit.dev/suspend: "true"): pvctl resume packagevariantset/fleet first`)
	out, _ = run(ExitOK, "resume", "pvs/fleet", "--timeout", "5s")
	contains(t, out, "packagevariantset/fleet resumed\npackagevariantset/fleet reconciled: Ready=True Reconciled\n")
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ops", Name: "fleet"}, got); err != nil || got.Annotations[kit.SuspendAnnotation] != "" ||
		got.Annotations[kit.ReconcileRequestAnnotation] != "2026-11-26T12:00:01Z" {
		t.Fatalf("after resume: annotations %v (%v)", got.Annotations, err)
	}
	out, _ = run(ExitNotReady, "reconcile", "pv/app", "--timeout", "5s")
	contains(t, out, "packagevariant/app: reconcile requested at 2026-11-26T12:00:02Z\npackagevariant/app reconciled: Ready=False Error: upstream gone\n")
	_, errs = run(ExitNotReady, "reconcile", "pv/nosuch")
	contains(t, errs, "pvctl reconcile: packagevariant nosuch: not found in namespace ops of the cluster")
	_, errs = run(ExitUsage, "reconcile", "pv/app", "-f", "x")
	contains(t, errs, "-f goes with a local reconcile")
	// Nobody handles a suspended variant's request: the wait times out.
	cancel()
	_, errs = run(ExitNotReady, "resume", "pv/app", "--timeout", "50ms")
	contains(t, errs, "pvctl resume: timed out after 50ms waiting for the controller to handle the reconcile of packagevariant/app requested at 2026-11-26T12:00:03Z (is pvkit's controller running, and does it watch namespace ops?)")
	out, _ = run(ExitOK, "wait", "pvs/fleet", "--for=condition=Ready", "--timeout", "1s")
	contains(t, out, "packagevariantset/fleet condition met (Ready=True)")
	_, errs = run(ExitNotReady, "wait", "pv/app", "--timeout", "50ms")
	contains(t, errs, "pvctl wait: timed out after 50ms waiting for packagevariant/app Ready=True; last: Ready=False Error: upstream gone")
	_, errs = run(ExitNotReady, "wait", "pv/nosuch")
	contains(t, errs, "pvctl wait: packagevariant nosuch: not found in namespace ops of the cluster")
}

// Issue 32 #4: pvctl plan --kubeconfig -f previews what the controller
// would do with the files on the cluster, and writes nothing (the
// reconcile itself is local.TestPlanCluster's); its flags are checked.
func TestPlanAgainstACluster(t *testing.T) {
	scheme, err := pvapi.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mapper := apimeta.NewDefaultRESTMapper(scheme.PrioritizedVersionsAllGroups())
	for gvk := range scheme.AllKnownTypes() {
		mapper.Add(gvk, apimeta.RESTScopeNamespace)
	}
	s := fakestore.New()
	s.AddRepository("default", "east")
	s.SetDeployment("default", "blueprints", false)
	s.Publish("default", "blueprints", "app", storetest.Blueprint)
	base := fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(mapper).WithObjects(
		&porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: "east", Namespace: "default"}, Spec: porchconfig.RepositorySpec{Deployment: true}}).Build()
	old := ClusterClient
	ClusterClient = func(string, string) (client.Client, error) { return s.Client(base), nil }
	defer func() { ClusterClient = old }()
	w := newWS(t)
	dir := filepath.Join(t.TempDir(), "in")
	fntest.WriteTree(t, dir, map[string]string{"v.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata: {name: app-east}\nspec:\n  upstream: {repo: blueprints, package: app}\n  downstream: {repo: east, package: app}\n"})
	writes := s.Writes()
	code, out, errs := w.cmd("plan", "--kubeconfig", "/k", "-f", dir)
	if code != ExitChanges || !strings.Contains(out, "would create draft east.app.packagevariant-1 (clone of blueprints.app.v1)") {
		t.Fatalf("plan --kubeconfig: exit %d\n%s%s", code, out, errs)
	}
	if s.Writes() != writes {
		t.Fatalf("plan --kubeconfig wrote %d times to Porch", s.Writes()-writes)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--diff"}, "--diff goes with a local plan"},
		{[]string{"--prune"}, "--prune goes with a local plan"},
		{[]string{"--sync", "mgmt"}, "--sync goes with a local plan"},
		{[]string{"--state", "x"}, "--state goes with a local plan"},
	} {
		if code, _, errs := w.cmd("plan", append([]string{"--kubeconfig", "/k", "-f", dir}, c.args...)...); code != ExitUsage || !strings.Contains(errs, c.msg) {
			t.Errorf("plan --kubeconfig %v: exit %d: %s", c.args, code, errs)
		}
	}
	if code, _, errs := w.cmd("plan", "-f", dir, "--approve-by-policy"); code != ExitUsage || !strings.Contains(errs, "--approve-by-policy goes with --kubeconfig or --context") {
		t.Errorf("plan --approve-by-policy locally: exit %d: %s", code, errs)
	}
}
