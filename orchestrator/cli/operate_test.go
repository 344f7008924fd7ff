package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/store"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/variant"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const missingUpstream = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: lost
spec:
  upstream: {repo: blueprints, package: nosuch}
  downstream: {repo: core-euwest1, package: lost}
`

// Issue 22 #1: pvctl events shows what the reconcilers recorded in pvctl
// run (the Events the controller records in a cluster), every run's,
// aggregated; status KIND/NAME ends with the object's events.
func TestEvents(t *testing.T) {
	w := newWS(t)
	code, _, errs := w.cmd("events")
	if code != ExitOK || errs != "No events found in default namespace.\n" {
		t.Fatalf("events before any run: exit %d, %q", code, errs)
	}
	if out := w.mustCmd(ExitOK, "events", "-o", "json"); !strings.Contains(out, `"kind": "List"`) || !strings.Contains(out, `"items": []`) {
		t.Fatalf("events -o json before any run: %q", out)
	}
	w.write("lost.yaml", missingUpstream)
	w.run(ExitStalled)
	out := w.mustCmd(ExitOK, "events")
	contains(t, out, "LAST SEEN", "TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE",
		"Normal   DraftCreated", "packagevariant/app-staging", "created draft core-euwest1.app.packagevariant-1 (clone of blueprints.app.v1)",
		"ChildCreated", "packagevariantset/app",
		"Warning  UpstreamNotFound", "packagevariant/lost")
	w.run(ExitStalled) // the same stall again: no new event, the old one kept
	var list struct {
		Kind  string         `json:"kind"`
		Items []corev1.Event `json:"items"`
	}
	if err := json.Unmarshal([]byte(w.mustCmd(ExitOK, "events", "pv/lost", "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if ev := list.Items; list.Kind != "List" || len(ev) != 1 || ev[0].Kind != "Event" || ev[0].Type != "Warning" || ev[0].Reason != "UpstreamNotFound" ||
		ev[0].InvolvedObject.Kind != "PackageVariant" || ev[0].InvolvedObject.Name != "lost" || ev[0].Count != 1 || !strings.HasPrefix(ev[0].Name, "lost.") {
		t.Fatalf("events pv/lost after two runs: %+v", list)
	}
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/lost"), "Events:\n", "Warning  UpstreamNotFound  1")
	contains(t, w.mustCmd(ExitOK, "status", "packagevariantset/app"), "Events:\n", "ChildCreated")
	// An object's events go with it.
	w.remove("lost.yaml")
	w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--prune")
	if out := w.mustCmd(ExitOK, "events", "-o", "yaml"); strings.Contains(out, "lost") {
		t.Fatalf("a deleted variant's events stay:\n%s", out)
	}
	// Issue 62 #1: a name that is not there fails as status does, not
	// "No events found" and exit 0.
	for _, name := range []string{"pv/nope", "packagevariant/lost"} {
		code, _, errs = w.cmd("events", name)
		if want := "not found in the last run's state (pvctl status lists them)"; code != ExitNotReady || !strings.Contains(errs, want) {
			t.Fatalf("events %s: exit %d, %q; want %d and %q", name, code, errs, ExitNotReady, want)
		}
	}
	code, _, errs = w.cmd("events", "configmap/x")
	if code != ExitUsage || !strings.Contains(errs, `pvctl events: want packagevariant/NAME or packagevariantset/NAME, not kind "configmap"`) {
		t.Fatalf("events configmap/x: exit %d, %q", code, errs)
	}
	code, _, errs = w.cmd("events", "-o", "csv")
	if code != ExitUsage || !strings.Contains(errs, `pvctl events: -o must be table, wide, name, json, yaml, not "csv"`) {
		t.Fatalf("events -o csv: exit %d, %q", code, errs)
	}
}

// Issue 22 #5: colour on a terminal, --color and NO_COLOR.
func TestColor(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	if out := w.mustCmd(ExitOK, "status"); strings.Contains(out, "\x1b[") {
		t.Fatalf("colour when stdout is not a terminal:\n%q", out)
	}
	out := w.mustCmd(ExitOK, "status", "--color", "always")
	contains(t, out, "\x1b[32mTrue\x1b[0m")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	col := strings.Index(lines[0], "REASON")
	for _, l := range lines[1:] { // painted throughout, header included, the columns stay aligned
		if i := strings.Index(l, "NoErrors"); i < 0 && !strings.Contains(l, "Reconciled") || i >= 0 && i != col {
			t.Errorf("misaligned row %q (REASON at %d)", l, col)
		}
	}
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--color=always"), "\x1b[32mTrue\x1b[0m")
	code, _, errs := w.cmd("status", "--color", "sometimes")
	if code != ExitUsage || !strings.Contains(errs, `--color must be auto, always or never, not "sometimes"`) {
		t.Fatalf("--color sometimes: exit %d, %q", code, errs)
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer wr.Close()
	if newPainter("auto", wr).on || newPainter("never", wr).on || !newPainter("always", wr).on {
		t.Errorf("--color on a pipe: auto and never off, always on")
	}
	tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0)
	if err != nil {
		t.Logf("no terminal here (%v): auto on a terminal not checked", err)
		return
	}
	defer tty.Close()
	t.Setenv("NO_COLOR", "")
	if !newPainter("auto", tty).on {
		t.Errorf("--color auto on a terminal: off")
	}
	t.Setenv("NO_COLOR", "1")
	if newPainter("auto", tty).on {
		t.Errorf("--color auto with NO_COLOR set: on")
	}
}

// Issue 22 #1: status and events read a cluster with --kubeconfig or
// --context: its variants, sets, PackageRevisions and Events.
func TestStatusFromCluster(t *testing.T) {
	scheme, err := local.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.NewTime(time.Now().Add(-3 * time.Minute))
	ready := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "NoErrors", Message: "ok"}}
	set := &pvsapi.PackageVariantSet{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "ops", UID: "set-uid"},
		Status: pvsapi.PackageVariantSetStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled"}}}}
	yes := true
	v := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "fleet-a", Namespace: "ops",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "config.porch.kpt.dev/v1alpha2", Kind: "PackageVariantSet", Name: "fleet", UID: "set-uid", Controller: &yes}}},
		Spec:   pv.PackageVariantSpec{Upstream: &pv.Upstream{Repo: "blueprints", Package: "app", WorkspaceName: "v1"}, Downstream: &pv.Downstream{Repo: "a", Package: "app"}},
		Status: pvapi.PackageVariantStatus{Conditions: ready, DownstreamTargets: []pvapi.DownstreamTarget{{Name: "a.app.packagevariant-1"}, {Name: "a.app.gone"}}}}
	pr := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Name: "a.app.packagevariant-1", Namespace: "ops"},
		Spec:   porchapi.PackageRevisionSpec{Lifecycle: porchapi.PackageRevisionLifecycleDraft, ReadinessGates: []porchapi.ReadinessGate{{ConditionType: "config.injection.ConfigMap.endpoints"}}},
		Status: porchapi.PackageRevisionStatus{Conditions: []porchapi.Condition{{Type: "config.injection.ConfigMap.endpoints", Status: porchapi.ConditionFalse}}}}
	event := func(name, kind, obj, typ, reason, msg string, count int32) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ops"}, LastTimestamp: now, Count: count, Type: typ, Reason: reason, Message: msg,
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: obj, Namespace: "ops"}}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(set, v, pr,
		event("e1", "PackageVariant", "fleet-a", "Normal", "DraftCreated", "created draft a.app.packagevariant-1", 1),
		event("e2", "PackageVariantSet", "fleet", "Warning", "TargetFailed", "no repository matches", 3),
		event("e3", "Pod", "web", "Normal", "Pulled", "not pvkit's", 1),
	).Build()
	var asked []string
	old := ClusterClient
	ClusterClient = func(kubeconfig, kubecontext string) (client.Client, error) {
		asked = append(asked, kubeconfig+"|"+kubecontext)
		if kubecontext == "nowhere" {
			return nil, errors.New(`loading the kubeconfig: context "nowhere" does not exist`)
		}
		return c, nil
	}
	defer func() { ClusterClient = old }()
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := Command(context.Background(), args[0], append([]string{"--repos", t.TempDir()}, args[1:]...), &out, &errb); code != want {
			t.Fatalf("pvctl %v: exit %d, want %d\n%s%s", args, code, want, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}
	out, _ := run(ExitOK, "status", "--kubeconfig", "/k", "-n", "ops")
	contains(t, out, "PackageVariantSet  fleet    True   Reconciled", "PackageVariant     fleet-a  True   NoErrors")
	out, _ = run(ExitOK, "status", "--kubeconfig", "/k", "-n", "ops", "pv/fleet-a")
	contains(t, out, "PackageVariant fleet-a (namespace ops", "Upstream:   repository blueprints, package app, workspace v1",
		`a.app.packagevariant-1: Draft; not ready: readiness gate "config.injection.ConfigMap.endpoints" not True`,
		"a.app.gone: gone", "Events:\n", "3m         Normal  DraftCreated  1      created draft a.app.packagevariant-1")
	out, _ = run(ExitOK, "status", "--context", "prod", "-n", "ops", "pvs/fleet")
	contains(t, out, "Children:\n  PackageVariant fleet-a: Ready True NoErrors", "Warning  TargetFailed  3      no repository matches")
	out, _ = run(ExitOK, "events", "--kubeconfig", "/k", "-n", "ops")
	contains(t, out, "packagevariant/fleet-a", "packagevariantset/fleet")
	if strings.Contains(out, "Pulled") {
		t.Errorf("events shows another kind's events:\n%s", out)
	}
	out, _ = run(ExitOK, "events", "--kubeconfig", "/k", "-n", "ops", "pvs/fleet", "-o", "yaml")
	contains(t, out, "count: 3", "kind: PackageVariantSet", "reason: TargetFailed")
	_, errs := run(ExitNotReady, "status", "--kubeconfig", "/k", "-n", "ops", "pv/nosuch")
	contains(t, errs, "pvctl status: packagevariant nosuch: not found in namespace ops of the cluster")
	_, errs = run(ExitNotReady, "events", "--context", "nowhere")
	contains(t, errs, `pvctl events: loading the kubeconfig: context "nowhere" does not exist`)
	if strings.Join(asked, ",") != "/k|,/k|,|prod,/k|,/k|,/k|,|nowhere" {
		t.Errorf("clusters asked for: %v", asked)
	}
}

// Issue 21 #3 in pvctl: a draft whose mutation has not run (created with
// the mutation gate, as the reconciler creates every draft, and never
// finished: a run stopped between the two writes) is refused by approve,
// naming the gate; after a run, every draft has the gate True.
func TestUnfinishedDraftIsNotApprovable(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const name = "edge-useast1.app.packagevariant-1"
	kf := w.files(name)["Kptfile"]
	contains(t, kf, "- conditionType: pvkit.dev/mutation\n")
	if i := strings.Index(kf, "- type: pvkit.dev/mutation\n"); i < 0 || !strings.HasPrefix(strings.TrimLeft(kf[i+len("- type: pvkit.dev/mutation\n"):], " "), "status: \"True\"") {
		t.Fatalf("the finished draft's mutation condition is not True:\n%s", kf)
	}
	s := w.store()
	up := ""
	for _, r := range s.All("default") {
		if r.Repository == "blueprints" {
			up = r.Name
		}
	}
	d, err := s.CreateDraft(context.Background(), store.DraftSpec{Namespace: "default", Repository: "edge-useast1", Package: "half", Workspace: "packagevariant-1",
		Task: store.Task{Type: store.Clone, Upstream: up}, ReadinessGates: []string{variant.MutationGate}})
	if err != nil {
		t.Fatal(err)
	}
	code, _, errs := w.cmd("approve", d.Name)
	if code != ExitNotReady || !strings.Contains(errs, `package revision edge-useast1.half.packagevariant-1 is not ready: readiness gate "pvkit.dev/mutation" is False`) {
		t.Fatalf("approve of an unfinished draft: exit %d, %q", code, errs)
	}
}

// Found by FuzzRunInput in CI: a YAML document that is a list or a scalar
// (not an object) made kyaml panic on its annotations; it is an input
// error naming file and object, exit 2, nothing written.
func TestInputThatIsNotAnObject(t *testing.T) {
	w := newWS(t)
	before := w.snapshot()
	w.write("list.yaml", "- group: example.com\n   CCCCCCCCCCCCCCCCC")
	w.write("text.yaml", "just some text\n")
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, ExitUsage, errs)
	}
	contains(t, errs, "list.yaml: object 0: a list, not an object (a mapping of fields: apiVersion, kind, metadata...)",
		"text.yaml: object 0: a scalar value, not an object")
	if len(w.snapshot()) != len(before) {
		t.Fatalf("an input error wrote something")
	}
}
