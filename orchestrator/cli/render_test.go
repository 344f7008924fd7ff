package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/pkg/render"
)

// guarded is a blueprint whose own pipeline refuses env: prod (a starlark
// validator of the kpt catalog, run offline): its clone renders, a
// variant's write of env: prod does not.
var guarded = map[string]string{
	"Kptfile": `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: guarded
pipeline:
  mutators:
  - image: gcr.io/kpt-fn/apply-replacements:v0.1.1
    configPath: replacements.yaml
  validators:
  - image: ghcr.io/kptdev/krm-functions-catalog/starlark:v0.4.3
    configPath: no-prod.yaml
`,
	"no-prod.yaml": `apiVersion: fn.kpt.dev/v1alpha1
kind: StarlarkRun
metadata:
  name: no-prod
  annotations:
    config.kubernetes.io/local-config: "true"
source: |
  for r in ctx.resource_list["items"]:
    if r["kind"] == "ConfigMap" and r["metadata"]["name"] == "kptfile.kpt.dev" and r.get("data", {}).get("env") == "prod":
      fail("env prod is not allowed in this package")
`,
	"replacements.yaml": `apiVersion: fn.kpt.dev/v1alpha1
kind: ApplyReplacements
metadata:
  name: instance
  annotations:
    config.kubernetes.io/local-config: "true"
replacements:
- source:
    kind: ConfigMap
    name: kptfile.kpt.dev
    fieldPath: data.name
  targets:
  - select:
      kind: ConfigMap
      name: settings
    fieldPaths:
    - data.instance
    options:
      create: true
`,
	"settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n",
}

func guardedVariant(name, env string) string {
	return `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: ` + name + `
spec:
  upstream: {repo: blueprints, package: guarded}
  downstream: {repo: core-euwest1, package: ` + name + `}
  packageContext:
    data: {env: ` + env + `}
`
}

// Issue 21 #1: pvctl renders each draft it writes, as Porch does. A
// pipeline that fails on the variant's write is RenderFailed with the
// render status, and its draft is not approvable; one that works is
// rendered (the blueprint's replacement ran in the clone and after the
// write).
func TestRenderFailedAndRendered(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "guarded")
	fntest.WriteTree(t, pkg, guarded)
	w.mustCmd(ExitOK, "publish", "--no-render", "--repo", "blueprints", "--package", "guarded", pkg) // it renders only as the variant makes it
	w.write("guarded-prod.yaml", guardedVariant("guarded-prod", "prod"))
	w.write("guarded-dev.yaml", guardedVariant("guarded-dev", "dev"))
	out := w.run(ExitNotReady)
	contains(t, out, "guarded-prod          False  RenderFailed",
		"function ghcr.io/kptdev/krm-functions-catalog/starlark:v0.4.3 failed: fail: env prod is not allowed in this package",
		"guarded-dev           True   NoErrors")
	// The failed write left the draft as the clone made it, its mutation
	// gate False; approve refuses it (its variant is RenderFailed).
	code, _, errs := w.cmd("approve", "core-euwest1.guarded-prod.packagevariant-1")
	if code != ExitNotReady || !strings.Contains(errs, "is not ready: its PackageVariant guarded-prod is not Ready (RenderFailed") {
		t.Fatalf("approve of the unrendered draft: exit %d\n%s", code, errs)
	}
	if g := w.files("core-euwest1.guarded-prod.packagevariant-1")["Kptfile"]; !strings.Contains(g, "conditionType: pvkit.dev/mutation") || !strings.Contains(g, "status: \"False\"") {
		t.Fatalf("the draft's mutation gate:\n%s", g)
	}
	st := w.mustCmd(ExitOK, "status", "packagevariant/guarded-prod")
	contains(t, st, "RenderFailed", "ghcr.io/kptdev/krm-functions-catalog/starlark:v0.4.3", "exit code 1")
	dev := w.files("core-euwest1.guarded-dev.packagevariant-1")
	contains(t, dev["settings.yaml"], "instance: guarded-dev") // the blueprint's own render, in the clone
	contains(t, dev["package-context.yaml"], "env: dev")
	contains(t, dev["Kptfile"], "status: \"True\"")
}

// A function nothing here can run: the render fails naming the image and
// the ways to run it; --no-render is the explicit way out.
func TestRenderWithoutRuntime(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "odd")
	files := map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: odd\npipeline:\n  mutators:\n  - image: registry.example.com/no/such-function:v1\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
	}
	fntest.WriteTree(t, pkg, files)
	w.mustCmd(ExitOK, "publish", "--no-render", "--repo", "blueprints", "--package", "odd", pkg) // an image no way runs: the render that fails is the test's
	w.write("odd.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: odd\nspec:\n  upstream: {repo: blueprints, package: odd}\n  downstream: {repo: core-euwest1, package: odd}\n")
	code, out, _ := w.cmd("run", "-o", "wide", "-f", w.in, "--function-runner", "")
	if code != ExitNotReady || !strings.Contains(out, `no runtime for image "registry.example.com/no/such-function:v1"`) && !strings.Contains(out, "registry.example.com/no/such-function:v1") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--no-render")
	contains(t, out, "odd                   True   NoErrors")
}

// The render flags refuse a typo before anything is written.
func TestRenderFlagTypos(t *testing.T) {
	w := newWS(t)
	before := w.snapshot()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--image-pull-policy", "Nevr"}, `pvctl run: --image-pull-policy must be Always, IfNotPresent or Never, not "Nevr"`},
		{[]string{"--function-config", filepath.Join(w.in, "nope.yaml")}, "pvctl run: --function-config: open " + filepath.Join(w.in, "nope.yaml") + ": no such file or directory"},
		{[]string{"--render-timeout", "0s"}, "pvctl run: --render-timeout must be positive, found 0s (--no-render renders nothing)"},
		{[]string{"--timeout", "-1s"}, "pvctl run: --timeout must not be negative, found -1s"},
	} {
		code, _, errs := w.cmd("run", append([]string{"-f", w.in}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("run %v: exit %d, %q; want %d, %q", tt.args, code, errs, ExitUsage, tt.want)
		}
	}
	if after := w.snapshot(); len(after) != len(before) {
		t.Fatalf("a refused run wrote to the repositories: %d files, was %d", len(after), len(before))
	}
}

// Issue 27 #5: a run past its --timeout stops where it is, saves what it
// did, says so and exits 1 (not ready); the next run goes on.
func TestRunTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for a 2 s --timeout")
	}
	w := newWS(t)
	w.slowVariant()
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--allow-exec", "--timeout", "2s")
	if code != ExitNotReady || !strings.Contains(errs, "pvctl run: stopped after 1 reconcile passes: the run's --timeout (2s) passed; what it did is saved, run again to go on") {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	if st := w.stateFile(); len(st.Variants) < 4 {
		t.Fatalf("the state of a stopped run: %d variants", len(st.Variants))
	}
}

// Issue 31 #2: one writer per repositories directory: a second run is
// refused at once, naming the holder, and writes nothing; plan needs no
// lock. A run interrupted (Ctrl-C) stops where it is, saves its state and
// says how far it got.
func TestOneWriterAndInterrupt(t *testing.T) {
	w := newWS(t)
	release, err := local.Lock(w.repos, "run")
	if err != nil {
		t.Fatal(err)
	}
	before := w.snapshot()
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in)
	host, _ := os.Hostname()
	want := fmt.Sprintf("pvctl run: the repositories directory %s is in use by pvctl run (pid %d on %s, since ", w.repos, os.Getpid(), host)
	if code != ExitUsage || !strings.Contains(errs, want) || !strings.Contains(errs, "nothing was written: wait for it, or stop it") {
		t.Fatalf("a second writer: exit %d\n%s\nwant exit 2 and %s", code, errs, want)
	}
	for _, verb := range [][]string{{"publish", "--repo", "blueprints", "--package", "other", filepath.Join(fntest.RepoRoot(), "examples", "app")}, {"approve", "x"}} {
		if code, _, errs := w.cmd(verb[0], verb[1:]...); code != ExitUsage || !strings.Contains(errs, "is in use by pvctl run") {
			t.Fatalf("%s while locked: exit %d, %s", verb[0], code, errs)
		}
	}
	if d := cmp.Diff(before, w.snapshot()); d != "" {
		t.Fatalf("a refused writer wrote:\n%s", d)
	}
	w.mustCmd(ExitChanges, "plan", "-f", w.in) // plan writes nothing, and needs no lock
	release()

	w.slowVariant()
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(2*time.Second, func() { cancel(ErrInterrupted) }) // Ctrl-C, as pvctl's main delivers it
	var out, errb bytes.Buffer
	code = Command(ctx, "run", []string{"--repos", w.repos, "-f", w.in, "--allow-exec"}, &out, &errb)
	if code != ExitInterrupted || !regexp.MustCompile(`pvctl run: interrupted after \d+ changes; what it did is saved, run again to go on`).MatchString(errb.String()) {
		t.Fatalf("interrupted: exit %d, want %d\n%s", code, ExitInterrupted, errb.String())
	}
	// The variant it stopped reads Interrupted, not RenderFailed.
	st := w.mustCmd(ExitOK, "status", "pv/slow")
	contains(t, st, "Ready=False  Interrupted: stopped before it finished (interrupted); the next reconcile goes on")
	if strings.Contains(st, "RenderFailed") {
		t.Fatalf("an interrupted render reads failed:\n%s", st)
	}
	if st := w.stateFile(); len(st.Variants) < 4 {
		t.Fatalf("the state of an interrupted run: %d variants", len(st.Variants))
	}
}

// slowVariant publishes blueprints/slow, whose pipeline sleeps 30 s (an
// exec function: runs need --allow-exec), and asks for a variant of it.
func (w *ws) slowVariant() {
	w.t.Helper()
	slow := filepath.Join(w.t.TempDir(), "slow")
	fntest.WriteTree(w.t, slow, map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: slow\npipeline:\n  mutators:\n  - exec: /bin/sleep 30\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slow\n",
	})
	w.mustCmd(ExitOK, "publish", "--no-render", "--repo", "blueprints", "--package", "slow", slow) // a function that stalls: the run's render is the test's
	w.write("slow.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: slow\nspec:\n"+
		"  upstream: {repo: blueprints, package: slow}\n  downstream: {repo: core-euwest1, package: slow}\n")
}

// Issue 31 #4: pvctl render DIR renders a blueprint in place with pvctl's
// runtime (the catalog's apply-replacements offline), writing kpt v1.0's
// render status into the Kptfile; a directory with no Kptfile is a usage
// error; a render that fails exits 1, says which function failed and why,
// and writes only the Kptfile's render status (--render-status=false:
// nothing). A blueprint with kpt v1.0's render status is one Porch v1.5.3
// renders no clone of: publish leaves the status out and says so.
func TestRenderVerb(t *testing.T) {
	w := newWS(t)
	dir := filepath.Join(t.TempDir(), "app")
	bp := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	fntest.WriteTree(t, dir, bp)
	out := w.mustCmd(ExitOK, "render", dir)
	contains(t, out, "Successfully executed 1 function in "+dir)
	if again := w.mustCmd(ExitOK, "render", dir); !strings.Contains(again, "0 files changed") {
		t.Fatalf("a second render changed files:\n%s", again)
	}
	kf, err := os.ReadFile(filepath.Join(dir, "Kptfile"))
	if err != nil || !strings.Contains(string(kf), "    - type: Rendered\n      status: \"True\"\n      reason: RenderSuccess\n  renderStatus:\n    mutationSteps:\n      - image: gcr.io/kpt-fn/apply-replacements:v0.1.1\n        exitCode: 0\n") {
		t.Fatalf("the Kptfile after pvctl render (%v):\n%s", err, kf)
	}
	code, _, errs := w.cmd("publish", "--check-render", "--repo", "blueprints", "--package", "rendered", dir)
	if code != ExitOK || !strings.Contains(errs, "note: "+dir+"/Kptfile's kpt v1.0 render status (the Rendered condition, renderStatus) left out") {
		t.Fatalf("publish --check-render of a Kptfile with kpt v1.0's render status: exit %d\n%s", code, errs)
	}
	pulled := filepath.Join(t.TempDir(), "pulled")
	w.mustCmd(ExitOK, "pull", "blueprints.rendered.v1", pulled)
	if got, _ := os.ReadFile(filepath.Join(pulled, "Kptfile")); string(got) != bp["Kptfile"] {
		t.Fatalf("the published Kptfile is not the blueprint's without its render status (-want +got):\n%s", cmp.Diff(bp["Kptfile"], string(got)))
	}
	// The draft renderer, as Porch v1.5.3, refuses a Kptfile that holds it.
	_, _, rerr := render.Render(context.Background(), map[string]string{"Kptfile": string(kf)}, render.Options{})
	if rerr == nil || !strings.Contains(rerr.Error(), "Kptfile: `status.renderStatus` is kpt v1.0's render status, which kpt v1.0.0-beta.56 and Porch v1.5.3 refuse") {
		t.Fatalf("rendering a Kptfile with kpt v1.0's render status as Porch v1.5.3: %v", rerr)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	fntest.WriteTree(t, plain, bp)
	contains(t, w.mustCmd(ExitOK, "render", "--render-status=false", plain), "Successfully executed 1 function in "+plain)
	if kf, _ := os.ReadFile(filepath.Join(plain, "Kptfile")); string(kf) != bp["Kptfile"] {
		t.Fatalf("--render-status=false changed the Kptfile:\n%s", kf)
	}
	if code, _, errs := w.cmd("render", t.TempDir()); code != ExitUsage || !strings.Contains(errs, "no Kptfile") {
		t.Fatalf("no Kptfile: exit %d %s", code, errs)
	}
	broken := filepath.Join(t.TempDir(), "broken")
	bp["package-context.yaml"] = strings.Replace(bp["package-context.yaml"], "  name: app", "  nom: app", 1)
	fntest.WriteTree(t, broken, bp)
	before := fntest.ReadTree(t, broken)
	code, _, errs = w.cmd("render", "--render-status=false", broken)
	if code != ExitNotReady || !strings.Contains(errs, "did not render (nothing was written)") || !strings.Contains(errs, "apply-replacements:v0.1.1: exit code 1") {
		t.Fatalf("a failing render: exit %d\n%s", code, errs)
	}
	if after := fntest.ReadTree(t, broken); !cmp.Equal(before, after) {
		t.Fatalf("a failed render wrote:\n%s", cmp.Diff(before, after))
	}
	code, _, errs = w.cmd("render", broken)
	if code != ExitNotReady || !strings.Contains(errs, "did not render (only the Kptfile's render status was written)") {
		t.Fatalf("a failing render, kpt v1.0's status: exit %d\n%s", code, errs)
	}
	after := fntest.ReadTree(t, broken)
	if !strings.Contains(after["Kptfile"], "      status: \"False\"\n      reason: RenderFailed\n") || !strings.Contains(after["Kptfile"], "    errorSummary: 'gcr.io/kpt-fn/apply-replacements:v0.1.1: exit code 1'\n") {
		t.Fatalf("the Kptfile after a failed render:\n%s", after["Kptfile"])
	}
	delete(after, "Kptfile")
	delete(before, "Kptfile")
	if !cmp.Equal(before, after) {
		t.Fatalf("a failed render wrote more than the Kptfile's status:\n%s", cmp.Diff(before, after))
	}
}

// Issue 31 #4, issue 46 #1: publish checks what Porch would find on every
// clone: a directory without a Kptfile is refused (exit 2). A blueprint
// whose clone does not render is published as git would put it there, with
// a warning naming the function, the reason and what the clone will need
// (a required injection point); --check-render refuses it (exit 1) and
// nothing is published; --no-render does not render at all.
func TestPublishChecksTheBlueprint(t *testing.T) {
	w := newWS(t)
	noKptfile := filepath.Join(t.TempDir(), "nokptfile")
	fntest.WriteTree(t, noKptfile, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"})
	if code, _, errs := w.cmd("publish", "--repo", "blueprints", "--package", "nok", noKptfile); code != ExitUsage || !strings.Contains(errs, "holds no Kptfile") {
		t.Fatalf("no Kptfile: exit %d %s", code, errs)
	}
	// It reads a key only a variant sets (data.region): its own package
	// context has it, the one Porch generates for each clone does not. And
	// it holds a WorkloadCluster injection point, as Nephio's blueprints do.
	bp := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	bp["package-context.yaml"] = strings.Replace(bp["package-context.yaml"], "  name: app", "  name: app\n  region: here", 1)
	bp["replacements.yaml"] = strings.Replace(bp["replacements.yaml"], "fieldPath: data.name", "fieldPath: data.region", 1)
	bp["workload-cluster.yaml"] = "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: example\n  annotations:\n    kpt.dev/config-injection: required\nspec:\n  clusterName: example\n"
	if !strings.Contains(bp["replacements.yaml"], "data.region") || !strings.Contains(bp["package-context.yaml"], "region: here") {
		t.Fatal("examples/app changed: the test tests nothing")
	}
	contains(t, w.mustCmd(ExitOK, "render", writeTemp(t, bp)), "Successfully executed 1 function") // it renders on its own
	broken := filepath.Join(t.TempDir(), "broken")
	fntest.WriteTree(t, broken, bp)
	code, _, errs := w.cmd("publish", "--check-render", "--repo", "blueprints", "--package", "broken", broken)
	if code != ExitNotReady || !strings.Contains(errs, "data.region") || !strings.Contains(errs, "does not render as a clone of it would (Porch renders every clone, with a package context of its own)") || !strings.Contains(errs, "nothing was published (--check-render)") {
		t.Fatalf("--check-render, a blueprint that does not render: exit %d\n%s", code, errs)
	}
	if strings.Contains(strings.Join(w.revisions(), "\n"), "broken") {
		t.Fatal("the broken blueprint was published under --check-render")
	}
	code, out, errs := w.cmd("publish", "--repo", "blueprints", "--package", "broken", broken)
	if code != ExitOK || !strings.Contains(out, "published blueprints.broken.v1") {
		t.Fatalf("publish of a blueprint whose clone does not render: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"warning: a clone of " + broken + " will not render as it is: package .: `pipeline.mutators[0]`: function gcr.io/kpt-fn/apply-replacements:v0.1.1 failed",
		"data.region",
		"warning: a clone of " + broken + " will need the package context key(s) canary, region set (package-context.yaml has them; the context Porch generates for a clone holds name and package-path only",
		"warning: a clone of " + broken + " will need WorkloadCluster \"example\" injected (workload-cluster.yaml: a required injection point, condition config.injection.WorkloadCluster.example",
		"--check-render refuses a package whose clone does not render",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("publish's warnings lack %q:\n%s", want, errs)
		}
	}
	if code, _, errs := w.cmd("publish", "--check-render", "--no-render", "--repo", "blueprints", "--package", "broken", broken); code != ExitUsage || !strings.Contains(errs, "--check-render and --no-render exclude each other") {
		t.Fatalf("--check-render --no-render: exit %d %s", code, errs)
	}
	contains(t, w.mustCmd(ExitOK, "publish", "--no-render", "--repo", "blueprints", "--package", "other", broken), "published blueprints.other.v1")
}

// writeTemp writes files into a new directory and returns it.
func writeTemp(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pkg")
	fntest.WriteTree(t, dir, files)
	return dir
}

// Issue 31 #4: push renders as Porch renders every push: the draft holds
// the rendered package (the blueprint's replacement runs again on the
// person's edit), and a push whose render fails is refused, writing
// nothing; --no-render pushes the files as they are.
func TestPushRenders(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	name := "edge-useast1.app.packagevariant-1"
	dir := filepath.Join(t.TempDir(), "pulled")
	w.mustCmd(ExitOK, "pull", name, dir)
	dep := filepath.Join(dir, "deployment.yaml")
	b := readFile(t, dep)
	if !strings.Contains(b, "    instance: app\n") {
		t.Fatalf("the draft has no rendered instance label:\n%s", b)
	}
	edited := strings.Replace(strings.Replace(b, "    instance: app\n", "", 1), "replicas: 1", "replicas: 2", 1)
	if err := os.WriteFile(dep, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", name, dir)
	got := w.files(name)["deployment.yaml"]
	contains(t, got, "    instance: app\n", "replicas: 2")

	ctxFile := filepath.Join(dir, "package-context.yaml")
	if err := os.WriteFile(ctxFile, []byte(strings.Replace(readFile(t, ctxFile), "  name: app", "  nom: app", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := w.files(name)
	code, _, errs := w.cmd("push", name, dir)
	if code != ExitNotReady || !strings.Contains(errs, "render") {
		t.Fatalf("a push that does not render: exit %d\n%s", code, errs)
	}
	if after := w.files(name); !cmp.Equal(before, after) {
		t.Fatalf("a refused push wrote:\n%s", cmp.Diff(before, after))
	}
	w.mustCmd(ExitOK, "push", "--no-render", name, dir)
	contains(t, w.files(name)["package-context.yaml"], "nom: app")
}

// Issue 31 #4: a clone whose render fails for want of a package-context key
// the variant sets (data.region) can never render: the variant stalls
// (exit 4) saying the blueprint must render on its own and how, instead of
// being retried for ever.
func TestCloneNeedingAVariantKeyStalls(t *testing.T) {
	w := newWS(t)
	bp := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	bp["replacements.yaml"] = strings.Replace(bp["replacements.yaml"], "fieldPath: data.name", "fieldPath: data.region", 1)
	w.mustCmd(ExitOK, "publish", "--no-render", "--repo", "blueprints", "--package", "app", writeTemp(t, bp))
	code, out, _ := w.cmd("run", "-o", "wide", "-f", w.in)
	if code != ExitStalled {
		t.Fatalf("exit %d, want %d (stalled)\n%s", code, ExitStalled, out)
	}
	contains(t, out, "app-staging           False  RenderFailed",
		"the blueprint must render on its own: Porch renders every clone with a package context of name and package-path only, before the variant writes `region` into it")
}

// What a function writes is as untrusted as the package: pvctl render
// refuses a file path a function gives that is a .git look-alike (a hook
// would run on the user's next commit), writing nothing; --dry-run shows
// the diff a render would make and writes nothing.
func TestRenderVerbWritesOnlyWhatItMay(t *testing.T) {
	w := newWS(t)
	dir := writeTemp(t, fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app")))
	before := fntest.ReadTree(t, dir)
	out := w.mustCmd(ExitOK, "render", "--dry-run", dir)
	contains(t, out, "+++ "+dir+"/deployment.yaml", "+    instance: app", "(dry run: nothing was written)")
	if after := fntest.ReadTree(t, dir); !cmp.Equal(before, after) {
		t.Fatalf("--dry-run wrote:\n%s", cmp.Diff(before, after))
	}

	script := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\ncat <<'X'\napiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"+
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: hook\n    annotations:\n      config.kubernetes.io/path: .git/hooks/pre-commit\n"+
		"      internal.config.kubernetes.io/path: .git/hooks/pre-commit\nX\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	evil := writeTemp(t, map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: evil\npipeline:\n  mutators:\n  - exec: " + script + "\n"})
	code, _, errs := w.cmd("render", "--allow-exec", evil)
	if code == ExitOK || !strings.Contains(errs, `the render wrote the file ".git/hooks/pre-commit"`) || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("a function writing a git hook: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(evil, ".git")); !os.IsNotExist(err) {
		t.Fatalf("the hook was written: %v", err)
	}
}

// Issue 46 #2: pvctl render (the renderer pvctl run and the controller
// use) honours kpt's conditional steps and configRef as kpt's main branch
// does, and says so: the step its author conditioned off does not put
// tier: prod into the Deployment's selector; the skipped step is named.
func TestRenderHonoursWhenAndConfigRef(t *testing.T) {
	w := newWS(t)
	bp := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	bp["Kptfile"] = strings.Replace(bp["Kptfile"], "  mutators:\n", "  mutators:\n"+
		"    - image: gcr.io/kpt-fn/set-labels:v0.2.0\n      configMap:\n        tier: prod\n      when: resources.exists(r, r.kind == 'ConfigMap' && r.metadata.name == 'prod-marker')\n"+
		"    - image: gcr.io/kpt-fn/set-annotations:v0.1.4\n      configRef:\n        kind: ConfigMap\n        name: owner\n", 1)
	bp["owner.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owner\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  owner: team-a\n"
	dir := writeTemp(t, bp)
	code, out, errs := w.cmd("render", dir)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	contains(t, out, "Successfully executed 2 functions in "+dir)
	contains(t, errs, `[SKIPPED] "gcr.io/kpt-fn/set-labels:v0.2.0" (when is false: resources.exists(r, r.kind == 'ConfigMap' && r.metadata.name == 'prod-marker'))`)
	got := fntest.ReadTree(t, dir)
	if strings.Contains(got["deployment.yaml"], "tier: prod") {
		t.Fatalf("the step conditioned off ran:\n%s", got["deployment.yaml"])
	}
	if !strings.Contains(got["deployment.yaml"], "owner: team-a") {
		t.Fatalf("the configRef step did not get its config:\n%s", got["deployment.yaml"])
	}
}

// A package's .expected/ (its kpt e2e runner case, beside a .krmignore) is
// the package's test, not its content: publish leaves it out and says so.
func TestPublishLeavesOutExpectations(t *testing.T) {
	w := newWS(t)
	bp := fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	if bp[".expected/config.yaml"] == "" || bp[".krmignore"] != ".expected\n" {
		t.Fatal("examples/app carries no kpt e2e runner case: the test tests nothing")
	}
	dir := writeTemp(t, bp)
	code, out, errs := w.cmd("publish", "--repo", "blueprints", "--package", "withcase", dir)
	if code != ExitOK || !strings.Contains(errs, "note: "+dir+"/.expected and its .krmignore (4 files) left out: kpt's e2e runner's expectations of the package, not its content") {
		t.Fatalf("publish: exit %d\n%s%s", code, out, errs)
	}
	pulled := filepath.Join(t.TempDir(), "pulled")
	w.mustCmd(ExitOK, "pull", "blueprints.withcase.v1", pulled)
	got := fntest.ReadTree(t, pulled)
	if _, ok := got[".expected/config.yaml"]; ok || got[".krmignore"] != "" || got["Kptfile"] != bp["Kptfile"] {
		t.Fatalf("the published package: %v", slices.Sorted(maps.Keys(got)))
	}
}
