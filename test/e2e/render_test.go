package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/render"
)

// Issue 21 #1: pvctl renders a package as `kpt fn render` does. Each case
// of testdata/render is rendered by kpt (--allow-exec, the functions as
// executables) and by pkg/render with pvctl's runtime: the files must be
// byte for byte the same; a render kpt refuses, pkg/render refuses too and
// changes nothing.
func TestRenderMatchesKpt(t *testing.T) {
	needKpt(t)
	testfn := filepath.Join(binDir, "testfn")
	if _, err := os.Stat(testfn); err != nil {
		if err := fntest.GoBuild(repoRoot, testfn, "./test/e2e/testdata/testfn"); err != nil {
			t.Fatal(err)
		}
	}
	cases, err := filepath.Glob(filepath.Join(repoRoot, "test/e2e/testdata/render/*"))
	if err != nil || len(cases) < 5 {
		t.Fatalf("render cases: %v %v", cases, err)
	}
	for _, dir := range cases {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			files := fntest.ReadTree(t, dir)
			for f, content := range files {
				files[f] = strings.ReplaceAll(content, "{{bin}}", binDir)
			}
			work := filepath.Join(t.TempDir(), name)
			fntest.WriteTree(t, work, files)
			out, kptErr := exec.Command(kptPath, "fn", "render", "--allow-exec", "--truncate-output=false", work).CombinedOutput()
			byKpt := fntest.ReadTree(t, work)

			got, st, err := render.Render(context.Background(), files, render.Options{Runtime: &fnruntime.Runtime{AllowExec: true}, AllowExec: true})
			// Issue 31 #4: pvctl render DIR, in place, as kpt fn render.
			verb := filepath.Join(t.TempDir(), name)
			fntest.WriteTree(t, verb, files)
			var vout, verr bytes.Buffer
			// As kpt v1.0.0-beta.56, the kpt here: no kpt v1.0 render status.
			code := cli.Command(context.Background(), "render", []string{"--allow-exec", "--render-status=false", verb}, &vout, &verr)
			byVerb := fntest.ReadTree(t, verb)
			if (kptErr == nil) != (code == 0) || (code != 0 && code != 1) {
				t.Fatalf("pvctl render: exit %d where kpt %v\n%s%s", code, kptErr, vout.String(), verr.String())
			}
			if want := map[bool]map[string]string{true: byKpt, false: files}[kptErr == nil]; !cmp.Equal(want, byVerb) {
				t.Fatalf("pvctl render left the package otherwise than kpt (-kpt +pvctl):\n%s", cmp.Diff(want, byVerb))
			}
			if kptErr != nil {
				if err == nil {
					t.Fatalf("kpt refused the render (%v):\n%s\npkg/render did not", kptErr, out)
				}
				if !cmp.Equal(byKpt, files) {
					t.Fatalf("kpt changed the package although it failed")
				}
				t.Logf("both refuse; kpt: %s\npkg/render: %v", strings.TrimSpace(string(out)), err)
				if st.ExitCode() != 1 || (len(st.Runs) > 0 && st.Runs[len(st.Runs)-1].ExitCode == 0) {
					t.Fatalf("status of the failed render: %+v", st)
				}
				return
			}
			if err != nil {
				t.Fatalf("pkg/render refused what kpt rendered: %v\nkpt:\n%s", err, out)
			}
			if diff := cmp.Diff(byKpt, got); diff != "" {
				t.Fatalf("pkg/render differs from kpt fn render (-kpt +pkg/render):\n%s", diff)
			}
			if cmp.Equal(got, files) && name != "empty-pipeline" {
				t.Fatalf("the render changed nothing: the case tests nothing")
			}
		})
	}
}

// upstreamOrigin is a Kptfile's upstream repository URL or commit.
var upstreamOrigin = regexp.MustCompile(`(?m)^(\s+(?:repo|commit):) .*$`)

// Issue 21 #1: a draft pvctl run renders is what `kpt fn render` makes of
// the same draft unrendered (pvctl run --no-render), byte for byte: the
// blueprint's pipeline (apply-replacements and a starlark validator of the
// kpt catalog, offline) run by kpt as executables: the released
// apply-replacements v0.1.1 built from the module proxy, where pvctl runs
// pvkit's own in process.
func TestPvctlRenderMatchesKpt(t *testing.T) {
	needKpt(t)
	if err := fntest.EnsureCatalog(); err != nil {
		t.Fatal(err)
	}
	catalog := filepath.Dir(os.Getenv(fntest.CatalogEnv))
	blueprint := filepath.Join(repoRoot, "test/e2e/testdata/pvctl-render/guarded")
	variant := "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: guarded-dev\nspec:\n" +
		"  upstream: {repo: blueprints, package: guarded}\n  downstream: {repo: deploy, package: guarded-dev}\n  packageContext:\n    data: {env: dev}\n"
	pull := func(render bool) map[string]string {
		dir := t.TempDir()
		repos, in := filepath.Join(dir, "repos"), filepath.Join(dir, "in")
		fntest.WriteTree(t, in, map[string]string{"variant.yaml": variant,
			"repos.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: deploy\nspec:\n  deployment: true\n"})
		pvctl(t, 0, repos, "publish", "--repo", "blueprints", "--package", "guarded", blueprint)
		args := []string{"-f", in}
		if !render {
			args = append(args, "--no-render")
		}
		pvctl(t, 0, repos, "run", args...)
		out := filepath.Join(dir, "pulled")
		pvctl(t, 0, repos, "pull", "deploy.guarded-dev.packagevariant-1", out)
		files := fntest.ReadTree(t, out)
		// The provenance record follows pvctl's render (rule provenance-record):
		// it holds, rendered or not; kpt leaves the record it was given,
		// so the record is not compared.
		if _, err := provenance.Check(files, nil); err != nil {
			t.Fatalf("the draft's provenance (render %v): %v", render, err)
		}
		delete(files, provenance.FileName)
		// Each pull has repositories of its own: the upstream's URL and
		// commit (the publish's time) are the pull's, not the render's.
		files["Kptfile"] = upstreamOrigin.ReplaceAllString(files["Kptfile"], "$1 ORIGIN")
		return files
	}
	rendered, unrendered := pull(true), pull(false)
	if cmp.Equal(rendered, unrendered) {
		t.Fatal("the render changed nothing: the test tests nothing")
	}
	// kpt runs the same functions as executables: the Kptfile names them
	// so for kpt, and back afterwards.
	images := map[string]string{
		"gcr.io/kpt-fn/apply-replacements:v0.1.1":              filepath.Join(catalog, "apply-replacements-v0.1.1"),
		"ghcr.io/kptdev/krm-functions-catalog/starlark:v0.4.3": filepath.Join(catalog, "starlark-v0.4.3"),
	}
	swap := func(kptfile string, toExec bool) string {
		for image, exe := range images {
			if toExec {
				kptfile = strings.ReplaceAll(kptfile, "image: "+image, "exec: "+exe)
			} else {
				kptfile = strings.ReplaceAll(kptfile, "exec: "+exe, "image: "+image)
			}
		}
		return kptfile
	}
	work := filepath.Join(t.TempDir(), "guarded-dev")
	unrendered["Kptfile"] = swap(unrendered["Kptfile"], true)
	fntest.WriteTree(t, work, unrendered)
	if out, err := exec.Command(kptPath, "fn", "render", "--allow-exec", "--truncate-output=false", work).CombinedOutput(); err != nil {
		t.Fatalf("kpt fn render: %v\n%s", err, out)
	}
	byKpt := fntest.ReadTree(t, work)
	byKpt["Kptfile"] = swap(byKpt["Kptfile"], false)
	if diff := cmp.Diff(byKpt, rendered); diff != "" {
		t.Fatalf("pvctl's rendered draft differs from kpt fn render of the unrendered one (-kpt +pvctl):\n%s", diff)
	}
}

// pvctl runs a pvctl command on the repositories in process and checks
// its exit code.
func pvctl(t *testing.T, want int, repos, name string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Command(context.Background(), name, append([]string{"--repos", repos}, args...), &out, &errb); code != want {
		t.Fatalf("pvctl %s %v: exit %d, want %d\n%s\n%s", name, args, code, want, out.String(), errb.String())
	}
	return out.String()
}

// pvctl render of examples/render/app writes kpt v1.0's render status into
// its Kptfile (rule: kpt-render-status), golden: the package's diff after
// two renders, its executables said as {{bin}} and its blob hashes, which
// hash those paths, left out (PVKIT_CATALOG_UPDATE=1 rewrites it).
func TestPvctlRenderWritesKptStatus(t *testing.T) {
	files := fntest.ReadTree(t, filepath.Join(repoRoot, "examples", "render", "app"))
	for p, c := range files {
		if strings.HasPrefix(p, ".expected/") {
			delete(files, p)
			continue
		}
		files[p] = strings.ReplaceAll(c, "exec: bin/", "exec: "+binDir+"/")
	}
	work := filepath.Join(t.TempDir(), "app")
	fntest.WriteTree(t, work, files)
	git(t, work, "init", "-q")
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.email=e2e@pvkit", "-c", "user.name=e2e", "commit", "-q", "-m", "case")
	for i := 0; i < 2; i++ { // the first render prepends the variant's function, the second runs it
		var out, errb bytes.Buffer
		if code := cli.Command(context.Background(), "render", []string{"--allow-exec", work}, &out, &errb); code != 0 {
			t.Fatalf("pvctl render %d: exit %d\n%s%s", i+1, code, out.String(), errb.String())
		}
	}
	git(t, work, "add", "-A")
	got := strings.ReplaceAll(git(t, work, "diff", "--cached"), binDir, "{{bin}}")
	got = blobLine.ReplaceAllString(got, "index {{blobs}}")
	golden := filepath.Join(repoRoot, "test/e2e/testdata/pvctl-render/render-app.diff.patch")
	if os.Getenv("PVKIT_CATALOG_UPDATE") != "" {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Fatalf("pvctl render of examples/render/app (-want +got):\n%s", diff)
	}
	for _, s := range []string{"+    - type: Rendered\n+      status: \"True\"\n+      reason: RenderSuccess\n", "+  renderStatus:\n+    mutationSteps:\n+      - name: PackageVariant.app-dev.stamp.0\n"} {
		if !strings.Contains(got, s) {
			t.Fatalf("the diff holds no %q:\n%s", s, got)
		}
	}
}
