package local

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/reconcilers"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/pkg/provenance"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 28 #2, the parity test: the same inputs through the controller's
// wiring (the reconcilers as the manager builds them, reconcilers.New,
// driven as its queues would drive them, on the embedded cluster and a git
// store of their own) and through pvctl run give the same drafts (byte for
// byte), the same lifecycles (approvals), conditions and Events, over a
// scenario with clones (a set's and a variant's), approval by policy, a
// stall, an injected object that changes, an upgrade, and a person's edit.
// It fails when either side's approval or mutation differs: the two hosts
// may differ only in what they are, not in what they do.
func TestControllerAndPvctlAgree(t *testing.T) {
	root := t.TempDir()
	in, pvctlRepos, ctrlRepos := filepath.Join(root, "in"), filepath.Join(root, "pvctl"), filepath.Join(root, "controller")
	files := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "local"))
	files["app-staging.yaml"] = strings.Replace(files["app-staging.yaml"], "spec:\n", "spec:\n  annotations:\n    approval.nephio.org/policy: always\n", 1)
	files["delayed.yaml"] = strings.NewReplacer("name: app-staging", "name: delayed", "    package: app\n  packageContext", "    package: delayed\n  packageContext",
		"    package: app\n  downstream", "    package: app\n    revision: 1\n  downstream",
		"spec:\n", "spec:\n  annotations:\n    approval.nephio.org/policy: always\n    approval.nephio.org/delay: 1h\n").Replace(examplesFile(t, "app-staging.yaml"))
	files["edited.yaml"] = strings.Replace(files["delayed.yaml"], "delayed", "edited", 2)
	files["stalled.yaml"] = "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: stalled\nspec:\n" +
		"  upstream: {repo: blueprints, package: nosuch}\n  downstream: {repo: core-euwest1, package: stalled}\n"
	fntest.WriteTree(t, in, files)
	now := time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC) // far from the wall clock: a side that reads it differs
	clock := stepClock{&now}
	// Both sides' blueprints are published at the test's time: commits made
	// at the wall clock's differed when a second passed between the two
	// (the locks' commits then differ; seen under a full go test ./...).
	blueprint := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	for _, dir := range []string{pvctlRepos, ctrlRepos} {
		publishTo(t, dir, "blueprints", "app", blueprint, clock)
	}
	ctl := newControllerHost(t, in, ctrlRepos, clock)
	pvctl := func() {
		t.Helper()
		if _, err := Run(context.Background(), RunOptions{Repos: pvctlRepos, Files: []string{in}, Namespace: "default", Clock: clock}); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(step string) {
		t.Helper()
		pvctl()
		ctl.settle()
		if d := cmp.Diff(revisionsOf(t, pvctlRepos), revisionsOf(t, ctrlRepos)); d != "" {
			t.Fatalf("%s: the drafts differ (-pvctl +controller):\n%s", step, d)
		}
		st, err := state.Read(filepath.Join(pvctlRepos, state.File))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(conditionsOf(st.Variants, st.Sets), ctl.conditions()); d != "" {
			t.Fatalf("%s: the conditions differ (-pvctl +controller):\n%s", step, d)
		}
		var pvctlEvents []string
		for _, e := range st.Events {
			pvctlEvents = append(pvctlEvents, fmt.Sprintf("%s/%s %s %s %s", e.Kind, e.Name, e.Type, e.Reason, e.Message))
		}
		if d := cmp.Diff(dedup(pvctlEvents), dedup(ctl.events)); d != "" {
			t.Fatalf("%s: the Events differ (-pvctl +controller):\n%s", step, d)
		}
	}

	compare("clone")
	if revs := strings.Join(revisionsOf(t, ctrlRepos)["names"], " "); !strings.Contains(revs, "core-euwest1.app.packagevariant-1 Published 1") {
		t.Fatalf("the scenario tests no approval: %s", revs)
	}

	// An injected object changes (in the files; in the cluster).
	files["cluster-objects.yaml"] = strings.Replace(files["cluster-objects.yaml"], "db.eu-west1.internal:5432", "db2.eu-west1.internal:5432", 1)
	fntest.WriteTree(t, in, files)
	ctl.apply(t, in)
	compare("injection change")

	// An upgrade.
	blueprint["deployment.yaml"] = strings.Replace(blueprint["deployment.yaml"], "image: nginx:1.27", "image: nginx:1.28", 1)
	for _, dir := range []string{pvctlRepos, ctrlRepos} {
		publishTo(t, dir, "blueprints", "app", blueprint, clock)
	}
	compare("upgrade")

	// A person's edit of a draft that asks to be approved after a delay;
	// the delay passes: the draft nobody edited is approved, the edited one
	// is left to a person, by both.
	for _, dir := range []string{pvctlRepos, ctrlRepos} {
		gs := openStore(t, dir)
		for _, r := range gs.All("default") {
			if r.Lifecycle == store.Draft && r.Package == "edited" {
				res, err := gs.GetResources(context.Background(), "default", r.Name)
				if err != nil {
					t.Fatal(err)
				}
				res.Files["notes.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes\ndata:\n  by: a person\n"
				if err := gs.PushFiles(context.Background(), "default", r.Name, res); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	now = now.Add(2 * time.Hour)
	compare("a person's edit, the delay passed")
	names := strings.Join(revisionsOf(t, ctrlRepos)["names"], "\n")
	for _, want := range []string{"core-euwest1.delayed.packagevariant-1 Published 1", "core-euwest1.edited.packagevariant-1 Draft 0"} {
		if !strings.Contains(names, want) {
			t.Fatalf("the scenario does not show %q:\n%s", want, names)
		}
	}
	if len(ctl.events) == 0 {
		t.Fatal("no Events compared")
	}
}

func examplesFile(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "examples", "local", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stepClock is a clock the test moves.
type stepClock struct{ t *time.Time }

func (c stepClock) Now() time.Time { return *c.t }

// controllerHost is the controller's side: the reconcilers as the manager
// builds them, on an embedded cluster and a git store, driven to a steady
// state as the manager's queues would drive them.
type controllerHost struct {
	t      *testing.T
	c      *cluster
	gs     *gitstore.Store
	opts   reconcilers.Options
	events []string
	repos  []gitstore.Repository // as pvctl registers them
}

func newControllerHost(t *testing.T, in, repos string, clock kit.Clock) *controllerHost {
	input, err := readInput([]string{in}, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The repositories as pvctl registers them (repositories(): Porch's
	// spec.deployment and branch from the Repository objects).
	found, missing, err := repositories(repos, "default", input, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range missing {
		if err := gitstore.Init(r.GitDir, ""); err != nil {
			t.Fatal(err)
		}
	}
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := clusterObjects(input, &state.State{}) // the files' objects, with their UIDs
	h := &controllerHost{t: t}
	h.c = newCluster(scheme, newPruner(PruneAll), func(string, ...any) {}, objs...)
	h.opts = reconcilers.Options{Client: h.c, Clock: clock, Recorder: recorderFunc(h.record), Kinds: mustKinds(t, input), ApproveByPolicy: true}
	h.repos = append(found, missing...)
	return h
}

// apply updates the cluster's other objects from the files.
func (h *controllerHost) apply(t *testing.T, in string) {
	input, err := readInput([]string{in}, "default", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range input.others {
		cur := o.DeepCopyObject().(client.Object)
		if err := h.c.Get(context.Background(), client.ObjectKeyFromObject(o), cur); err != nil {
			t.Fatal(err)
		}
		o.SetResourceVersion(cur.GetResourceVersion())
		if err := h.c.Update(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
}

// settle reconciles every set and variant until a pass writes nothing,
// reading the repositories afresh, as a controller's store does.
func (h *controllerHost) settle() {
	h.t.Helper()
	ctx := context.Background()
	gs, err := gitstore.Open("default", h.repos)
	if err != nil {
		h.t.Fatal(err)
	}
	gs.SetClock(h.opts.Clock.Now)
	h.gs = gs
	o := h.opts
	o.Store = h.gs
	pv, pvs := reconcilers.New(o)
	for pass := 0; pass < 10; pass++ {
		before := h.c.Writes() + len(h.gs.All("default"))
		var sets pvsapi.PackageVariantSetList
		if err := h.c.List(ctx, &sets); err != nil {
			h.t.Fatal(err)
		}
		for _, s := range sets.Items {
			_, _ = pvs.Reconcile(ctx, request(s.Namespace, s.Name))
		}
		var variants pvapi.PackageVariantList
		if err := h.c.List(ctx, &variants); err != nil {
			h.t.Fatal(err)
		}
		for _, v := range variants.Items {
			_, _ = pv.Reconcile(ctx, request(v.Namespace, v.Name))
		}
		if h.c.Writes()+len(h.gs.All("default")) == before && pass > 0 {
			return
		}
	}
	h.t.Fatal("the controller's side did not settle")
}

func (h *controllerHost) record(obj runtime.Object, typ, reason, message string) {
	m, err := apimeta.Accessor(obj)
	if err != nil {
		return
	}
	kind := "PackageVariant"
	if _, ok := obj.(*pvsapi.PackageVariantSet); ok {
		kind = "PackageVariantSet"
	}
	h.events = append(h.events, fmt.Sprintf("%s/%s %s %s %s", kind, m.GetName(), typ, reason, message))
}

func (h *controllerHost) conditions() []string {
	var variants pvapi.PackageVariantList
	var sets pvsapi.PackageVariantSetList
	if err := h.c.List(context.Background(), &variants); err != nil {
		h.t.Fatal(err)
	}
	if err := h.c.List(context.Background(), &sets); err != nil {
		h.t.Fatal(err)
	}
	return conditionsOf(variants.Items, sets.Items)
}

// conditionsOf are the objects' conditions and downstream targets, sorted.
func conditionsOf(variants []pvapi.PackageVariant, sets []pvsapi.PackageVariantSet) []string {
	var out []string
	for _, v := range variants {
		for _, c := range v.Status.Conditions {
			out = append(out, fmt.Sprintf("PackageVariant/%s %s=%s %s: %s", v.Name, c.Type, c.Status, c.Reason, c.Message))
		}
		for _, d := range v.Status.DownstreamTargets {
			out = append(out, fmt.Sprintf("PackageVariant/%s target %s lastWrite=%t", v.Name, d.Name, d.LastWrite != ""))
		}
	}
	for _, s := range sets {
		for _, c := range s.Status.Conditions {
			out = append(out, fmt.Sprintf("PackageVariantSet/%s %s=%s %s: %s", s.Name, c.Type, c.Status, c.Reason, c.Message))
		}
	}
	sort.Strings(out)
	return out
}

// revisionsOf are a repositories directory's revisions ("names": name,
// lifecycle and number) and each one's files, by name.
func revisionsOf(t *testing.T, dir string) map[string][]string {
	gs := openStore(t, dir)
	out := map[string][]string{}
	for _, r := range gs.All("default") {
		out["names"] = append(out["names"], fmt.Sprintf("%s %s %d", r.Name, r.Lifecycle, r.Revision))
		res, err := gs.GetResources(context.Background(), "default", r.Name)
		if err != nil {
			t.Fatal(err)
		}
		for name, content := range res.Files {
			if name == provenance.FileName {
				// Its digests cover the Kptfile, which names the side's
				// own repositories directory, and its builder is the
				// side's: each side's must hold, over the same files.
				content = recordSummary(res.Files)
			}
			// The upstream's URL names the side's own repositories directory.
			content = strings.ReplaceAll(content, "file://"+filepath.ToSlash(dir)+"/", "file://REPOS/")
			out[r.Name] = append(out[r.Name], name+"\n"+content)
		}
		sort.Strings(out[r.Name])
	}
	sort.Strings(out["names"])
	return out
}

func openStore(t *testing.T, dir string, clock ...kit.Clock) *gitstore.Store {
	t.Helper()
	repos, err := gitstore.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := gitstore.Open("default", repos)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clock {
		gs.SetClock(c.Now)
	}
	return gs
}

func publishTo(t *testing.T, dir, repo, pkg string, files map[string]string, clock ...kit.Clock) {
	t.Helper()
	gitDir := filepath.Join(dir, repo+".git")
	if _, err := os.Stat(gitDir); os.IsNotExist(err) {
		if err := gitstore.Init(gitDir, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := openStore(t, dir, clock...).PublishFiles("default", repo, pkg, files); err != nil {
		t.Fatal(err)
	}
}

func mustKinds(t *testing.T, in *input) kit.ReadableKinds {
	k, err := in.readableKinds(nil)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// recorderFunc is a record.EventRecorder calling f.
type recorderFunc func(obj runtime.Object, typ, reason, message string)

func (f recorderFunc) Event(obj runtime.Object, typ, reason, message string) {
	f(obj, typ, reason, message)
}
func (f recorderFunc) Eventf(obj runtime.Object, typ, reason, format string, a ...any) {
	f(obj, typ, reason, fmt.Sprintf(format, a...))
}
func (f recorderFunc) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, a ...any) {
	f(obj, typ, reason, fmt.Sprintf(format, a...))
}

// Issue 27 #4: approval by policy decides from facts the editor cannot
// write. A person with push rights who commits to a draft under a message
// that looks like pvctl's ("pvctl: update ...") is still a person: the
// draft's content is compared with the digest its variant's status (the
// state file) keeps, not read from commit messages. (Measured on the code
// before: approved once the delay passed.) The run's clock decides the
// delay, and stamps the draft's creation.
func TestApprovalCannotBeForgedByACommitMessage(t *testing.T) {
	root := t.TempDir()
	in, repos := filepath.Join(root, "in"), filepath.Join(root, "repos")
	files := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "local"))
	for _, name := range []string{"app-staging.yaml", "fleet-set.yaml"} {
		delete(files, name)
	}
	for _, name := range []string{"forged", "untouched"} {
		files[name+".yaml"] = strings.NewReplacer("name: app-staging", "name: "+name, "    package: app\n  packageContext", "    package: "+name+"\n  packageContext",
			"spec:\n", "spec:\n  annotations:\n    approval.nephio.org/policy: always\n    approval.nephio.org/delay: 1h\n").Replace(examplesFile(t, "app-staging.yaml"))
	}
	fntest.WriteTree(t, in, files)
	publishTo(t, repos, "blueprints", "app", fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app")))
	now := time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC)
	run := func() string {
		t.Helper()
		rep, err := Run(context.Background(), RunOptions{Repos: repos, Files: []string{in}, Namespace: "default", Clock: stepClock{&now}})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(rep.Changes, "\n")
	}
	if out := run(); strings.Contains(out, "approved") {
		t.Fatalf("approved before the delay:\n%s", out)
	}
	// The person's commit: one more file in the package, under pvctl's words.
	git := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_DIR="+filepath.Join(repos, "core-euwest1.git"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		cmd.Stdin = strings.NewReader(stdin)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v: %s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	const draft, branch = "core-euwest1.forged.packagevariant-1", "refs/heads/drafts/forged/packagevariant-1"
	blob := git("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: backdoor\ndata:\n  by: a person\n", "hash-object", "-w", "--stdin")
	pkg := git(git("", "ls-tree", branch+":forged")+"\n100644 blob "+blob+"\tbackdoor.yaml\n", "mktree")
	var root2 []string
	for _, l := range strings.Split(git("", "ls-tree", branch), "\n") {
		if strings.HasSuffix(l, "\tforged") {
			l = "040000 tree " + pkg + "\tforged"
		}
		root2 = append(root2, l)
	}
	commit := git("", "commit-tree", "-p", branch, "-m", "pvctl: update "+draft, git(strings.Join(root2, "\n")+"\n", "mktree"))
	git("", "update-ref", branch, commit)

	now = now.Add(2 * time.Hour) // the delay, met
	out := run()
	if strings.Contains(out, "approved "+draft) {
		t.Fatalf("a draft a person changed was approved by policy:\n%s", out)
	}
	if !strings.Contains(out, "approved core-euwest1.untouched.packagevariant-1") {
		t.Fatalf("the draft nobody changed was not approved once the delay passed:\n%s", out)
	}
}

// recordSummary is what the parity test compares of a provenance record:
// whether it holds for its package, and the files and variant it names.
func recordSummary(files map[string]string) string {
	res, err := provenance.Check(files, nil)
	if err != nil {
		return "does not hold: " + err.Error()
	}
	var names []string
	for _, s := range res.Record.Statement.Subject {
		names = append(names, s.Name)
	}
	v := res.Record.Statement.Predicate.BuildDefinition.ExternalParameters.Variant
	return fmt.Sprintf("holds: variant %s/%s generation %d; %s", v.Namespace, v.Name, v.Generation, strings.Join(names, " "))
}
