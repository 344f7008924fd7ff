package e2e

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/catalog"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	sigsyaml "sigs.k8s.io/yaml"
)

// CatalogRepoEnv names a checkout of github.com/kptdev/krm-functions-catalog
// whose own e2e cases and examples TestCatalogCases also runs (make
// catalog-e2e sets it); without it only pvkit's cases in the catalog's shape
// run (orchestrator/cmd/pvkit-catalog/testdata).
const CatalogRepoEnv = "PVKIT_CATALOG_REPO"

// catalogCaseConfig is a case's .expected/config.yaml, the catalog's test
// driver's fields pvkit's functions need.
type catalogCaseConfig struct {
	ExitCode int               `json:"exitCode"`
	TestType string            `json:"testType"`
	Image    string            `json:"image"`
	Args     map[string]string `json:"args"`
	FnConfig string            `json:"fnConfig"`
	RunCount *int              `json:"runCount"`
	Skip     bool              `json:"skip"`
}

// catalogResults is the part of kpt's results file a failing case checks.
type catalogResults struct {
	ExitCode int `json:"exitCode"`
	Items    []struct {
		ExitCode int              `json:"exitCode"`
		Stderr   string           `json:"stderr,omitempty"`
		Results  []map[string]any `json:"results"`
	} `json:"items"`
}

// Issue 30: the catalog's cases (its driver's layout: a package with
// .expected/config.yaml, diff.patch, results.yaml) pass through kpt against
// pvkit's catalog executables: the exit code, the diff byte for byte (blob
// hashes included) after the function ran twice, and on failure the
// results and stderr kpt records.
func TestCatalogCases(t *testing.T) {
	needKpt(t)
	if err := fntest.EnsureCatalog(); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(os.Getenv(fntest.CatalogEnv))
	// pvkit's cases of its catalog functions, and every package under
	// examples/ a function runs on (each carries its .expected/).
	roots := []string{filepath.Join(repoRoot, "orchestrator/cmd/pvkit-catalog/testdata"), filepath.Join(repoRoot, "examples")}
	if repo := os.Getenv(CatalogRepoEnv); repo != "" {
		seen := map[string]bool{}
		for _, f := range catalog.Functions {
			if seen[f.Name] {
				continue
			}
			seen[f.Name] = true
			roots = append(roots, filepath.Join(repo, "tests", f.Name))
			examples, _ := filepath.Glob(filepath.Join(repo, "examples", f.Name+"-*"))
			roots = append(roots, examples...)
		}
	}
	n := 0
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if _, err := os.Stat(filepath.Join(p, ".expected")); err != nil {
				return nil
			}
			n++
			name, _ := filepath.Rel(filepath.Dir(repoRoot), p)
			if strings.HasPrefix(p, repoRoot) {
				name, _ = filepath.Rel(repoRoot, p)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runCatalogCase(t, p, bin)
			})
			return filepath.SkipDir
		})
	}
	if n == 0 {
		t.Fatal("no catalog cases found: the test tests nothing")
	}
}

var (
	blobLine  = regexp.MustCompile(`(?m)^index [0-9a-f]+\.\.[0-9a-f]+`)
	imageLine = regexp.MustCompile(`(?m)^(\s*-?\s*)image: (\S+)$`)
	// a case script's image and pull policy flags
	execImage  = regexp.MustCompile(`--image[= ](\S+)`)
	pullPolicy = regexp.MustCompile(`--image-pull-policy[= ]\S+`)
)

func runCatalogCase(t *testing.T, src, bin string) {
	var cfg catalogCaseConfig
	if b, err := os.ReadFile(filepath.Join(src, ".expected/config.yaml")); err == nil {
		if err := sigsyaml.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
	}
	if cfg.Skip {
		t.Skip("the case says skip")
	}
	work := filepath.Join(t.TempDir(), filepath.Base(src))
	files := fntest.ReadTree(t, src)
	for p := range files {
		if strings.HasPrefix(p, ".expected/") {
			delete(files, p)
		}
	}
	// kpt runs the images as executables (pvkit's, or the proxy's builds
	// bin/catalog/config.yaml maps): the Kptfile names them so (before the
	// baseline commit, so the diff is the functions' only). A case whose
	// image nothing here can run is skipped, saying so.
	script, scriptErr := os.ReadFile(filepath.Join(src, ".expected/exec.sh"))
	plainRender := cfg.TestType != "eval" && scriptErr != nil
	renders := plainRender || strings.Contains(string(script), "kpt fn render")
	asImages := maps.Clone(files)
	executables, err := fnruntime.LoadExecutables(os.Getenv(fntest.CatalogEnv), "")
	if err != nil {
		t.Fatal(err)
	}
	executable := func(image string) string {
		if name := fnruntime.Builtin(image); name != "" { // pvkit's own four
			return filepath.Join(binDir, name)
		}
		if f := catalog.Resolve(image); f != nil {
			return filepath.Join(bin, f.Executable)
		}
		return executables[image]
	}
	toExec := func(k string) string {
		return imageLine.ReplaceAllStringFunc(k, func(line string) string {
			m := imageLine.FindStringSubmatch(line)
			exe := executable(m[2])
			if exe == "" && !renders {
				return line // the case does not render the package
			}
			if exe == "" {
				t.Skipf("%s: image %s is built neither by pvkit nor from the module proxy here", src, m[2])
			}
			return m[1] + "exec: " + exe
		})
	}
	rewritten := false // the Kptfile names this machine's executables
	if k, ok := files["Kptfile"]; ok {
		files["Kptfile"] = toExec(k)
		rewritten = files["Kptfile"] != k
	}
	fntest.WriteTree(t, work, files)
	git(t, work, "init", "-q")
	git(t, work, "add", "-A")
	git(t, work, "-c", "user.email=e2e@pvkit", "-c", "user.name=e2e", "commit", "-q", "-m", "case")
	results := filepath.Join(t.TempDir(), "results")
	args := []string{"fn", "render", "--allow-exec", "--results-dir", results, "--truncate-output=false", work}
	if cfg.TestType == "eval" {
		exe := executable(cfg.Image)
		if exe == "" {
			t.Skipf("%s: image %s is built neither by pvkit nor from the module proxy here", src, cfg.Image)
		}
		args = []string{"fn", "eval", "--exec", exe, "--results-dir", results, "--truncate-output=false", work}
		if cfg.FnConfig != "" {
			// relative to .expected, where the case's config is
			args = append(args, "--fn-config", filepath.Join(src, ".expected", cfg.FnConfig))
		}
		args = append(args, "--")
		keys := make([]string, 0, len(cfg.Args))
		for k := range cfg.Args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			args = append(args, k+"="+cfg.Args[k])
		}
	}
	command := func() *exec.Cmd { return exec.Command(kptPath, args...) }
	if scriptErr == nil && strings.Contains(string(script), "docker run") {
		t.Skipf("%s: its script runs images with docker run, which needs a registry", src)
	}
	if scriptErr == nil {
		// The case's own command lines (kpt fn eval --image ... -- args,
		// kpt fn render, kpt pkg init), with the executable for the image
		// and this kpt.
		text := execImage.ReplaceAllStringFunc(string(script), func(flag string) string {
			image := execImage.FindStringSubmatch(flag)[1]
			exe := executable(image)
			if exe == "" {
				t.Skipf("%s: image %s is built neither by pvkit nor from the module proxy here", src, image)
			}
			return "--exec " + exe
		})
		text = pullPolicy.ReplaceAllString(text, "")
		text = strings.ReplaceAll(text, "kpt fn eval", kptPath+" fn eval")
		text = strings.ReplaceAll(text, "kpt fn render", kptPath+" fn render --allow-exec")
		text = strings.ReplaceAll(text, "kpt pkg", kptPath+" pkg")
		args = []string{"(.expected/exec.sh)"}
		command = func() *exec.Cmd {
			cmd := exec.Command("bash", "-c", text)
			cmd.Dir = work
			// where the script's kpt writes its results, and pvkit's
			// function executables (a package naming them as bin/<name>)
			cmd.Env = append(os.Environ(), "RESULTS_DIR="+results, "PVKIT_BIN="+binDir)
			return cmd
		}
	}
	runs := 2
	if cfg.RunCount != nil {
		runs = *cfg.RunCount
	}
	code := 0
	var out []byte
	var firstResults []byte // the results of the first run (a second changes nothing)
	for i := 0; i < runs && code == 0; i++ {
		var err error
		out, err = command().CombinedOutput()
		code = 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			firstResults, _ = os.ReadFile(filepath.Join(results, "results.yaml"))
		}
	}
	if code != cfg.ExitCode {
		t.Fatalf("kpt %s: exit %d, want %d\n%s", strings.Join(args, " "), code, cfg.ExitCode, out)
	}
	if plainRender {
		pvctlRendersAsKpt(t, work, asImages, toExec, runs, code)
	}
	if code == 0 {
		git(t, work, "add", "-A")
		got := git(t, work, "diff", "--cached")
		if rewritten && strings.HasPrefix(src, filepath.Join(repoRoot, "examples")+"/") {
			// The Kptfile names this machine's executables: the diff says
			// them as {{catalog}} and {{bin}} (the longer first: the
			// catalog may be under bin), and its blob hashes, which hash
			// the paths, are not compared.
			for _, d := range [][2]string{{bin, "{{catalog}}"}, {binDir, "{{bin}}"}} {
				if d[0] != "" {
					got = strings.ReplaceAll(got, d[0]+"/", d[1]+"/")
				}
			}
			got = blobLine.ReplaceAllString(got, "index {{blobs}}")
		}
		if os.Getenv("PVKIT_CATALOG_UPDATE") != "" && strings.HasPrefix(src, repoRoot) {
			// pvkit's own cases only; read every new patch before committing it
			if err := os.WriteFile(filepath.Join(src, ".expected/diff.patch"), []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(filepath.Join(src, ".expected/diff.patch"))
		if err != nil && strings.HasPrefix(src, filepath.Join(repoRoot, "examples")+"/") {
			t.Fatalf("%s: every example's case has .expected/diff.patch", src)
		}
		if err == nil && strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
			t.Fatalf("the diff after kpt %s differs from %s (-want +got):\n%s", strings.Join(args, " "), src,
				cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(got)))
		}
	}
	gotB := firstResults
	if code != 0 { // the failing run's
		if gotB, err = os.ReadFile(filepath.Join(results, "results.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	var want, got catalogResults
	if err := sigsyaml.Unmarshal(gotB, &got); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PVKIT_CATALOG_UPDATE") != "" && strings.HasPrefix(src, filepath.Join(repoRoot, "examples")+"/") {
		// what the test compares, in kpt's results file's shape (no
		// executable paths: they are this machine's)
		b, err := sigsyaml.Marshal(map[string]any{"apiVersion": "kpt.dev/v1", "kind": "FunctionResultList", "metadata": map[string]any{"name": "fnresults"},
			"exitCode": got.ExitCode, "items": got.Items})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, ".expected/results.yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantB, err := os.ReadFile(filepath.Join(src, ".expected/results.yaml"))
	if err != nil {
		if strings.HasPrefix(src, filepath.Join(repoRoot, "examples")+"/") {
			t.Fatalf("%s: every example's case has .expected/results.yaml", src)
		}
		return
	}
	if err := sigsyaml.Unmarshal(wantB, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("kpt's results differ from %s (-want +got):\n%s\nkpt said:\n%s", src, diff, out)
	}
}

// pvctlRendersAsKpt: pvctl render, running pvkit's catalog functions in
// process by their image names, leaves the package as kpt left it running
// them as executables (the Kptfile compared with its images named as
// executables), or, where kpt failed, fails too and changes nothing.
func pvctlRendersAsKpt(t *testing.T, byKpt string, files map[string]string, toExec func(string) string, runs, kptCode int) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(byKpt))
	fntest.WriteTree(t, dir, files)
	code := 0
	var stdout, stderr bytes.Buffer
	for i := 0; i < runs && code == 0; i++ {
		stdout.Reset()
		stderr.Reset()
		code = cli.Command(context.Background(), "render", []string{"--render-status=false", dir}, &stdout, &stderr) // as the kpt here, v1.0.0-beta.56
	}
	got := fntest.ReadTree(t, dir)
	if kptCode != 0 {
		if code != 1 || !cmp.Equal(files, got) {
			t.Fatalf("kpt failed (exit %d); pvctl render exit %d, want 1 and the package unchanged (-before +after):\n%s\n%s%s",
				kptCode, code, cmp.Diff(files, got), stdout.String(), stderr.String())
		}
		return
	}
	if code != 0 {
		t.Fatalf("pvctl render: exit %d where kpt rendered:\n%s%s", code, stdout.String(), stderr.String())
	}
	if k, ok := got["Kptfile"]; ok {
		got["Kptfile"] = toExec(k)
	}
	want := fntest.ReadTree(t, byKpt)
	if k, ok := want["Kptfile"]; ok { // an image a function added names it as pvctl's does
		want["Kptfile"] = toExec(k)
	}
	delete(want, ".git")
	for p := range want {
		if strings.HasPrefix(p, ".git/") {
			delete(want, p)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("pvctl render (in process) differs from kpt fn render (executables) (-kpt +pvctl):\n%s", diff)
	}
}

// git runs git in dir and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Issue 46 #2: kpt's conditional steps and configRef, in cases of kpt's
// fn-render shape (test/e2e/kptmain, README there): kpt v1.0.0-beta.56
// refuses both fields, so pvctl render (the renderer of pvctl run and the
// controller) renders each twice; the exit code, what stderr holds and the
// package's diff are the case's.
func TestKptMainFieldCases(t *testing.T) {
	root := filepath.Join(repoRoot, "test", "e2e", "kptmain")
	cases, err := filepath.Glob(filepath.Join(root, "*", ".expected"))
	if err != nil || len(cases) < 4 {
		t.Fatalf("cases in %s: %v %v: the test tests nothing", root, cases, err)
	}
	for _, expected := range cases {
		src := filepath.Dir(expected)
		t.Run(filepath.Base(src), func(t *testing.T) {
			var cfg struct {
				ExitCode int    `json:"exitCode"`
				StdErr   string `json:"stdErr"`
			}
			b, err := os.ReadFile(filepath.Join(expected, "config.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := sigsyaml.UnmarshalStrict(b, &cfg); err != nil {
				t.Fatal(err)
			}
			files := fntest.ReadTree(t, src)
			for p := range files {
				if strings.HasPrefix(p, ".expected/") {
					delete(files, p)
				}
			}
			work := filepath.Join(t.TempDir(), filepath.Base(src))
			fntest.WriteTree(t, work, files)
			git(t, work, "init", "-q")
			git(t, work, "add", "-A")
			git(t, work, "-c", "user.email=e2e@pvkit", "-c", "user.name=e2e", "commit", "-q", "-m", "case")
			for i := 0; i < 2; i++ { // twice: the second changes nothing
				var out, errb bytes.Buffer
				code := cli.Command(context.Background(), "render", []string{work}, &out, &errb)
				wantCode := cfg.ExitCode
				if wantCode != 0 {
					wantCode = cli.ExitNotReady
				}
				if code != wantCode || !strings.Contains(errb.String(), strings.TrimSpace(cfg.StdErr)) {
					t.Fatalf("run %d: pvctl render: exit %d, want %d and stderr holding %q:\n%s%s", i+1, code, wantCode, cfg.StdErr, out.String(), errb.String())
				}
			}
			git(t, work, "add", "-A")
			got := git(t, work, "diff", "--cached")
			if os.Getenv("PVKIT_CATALOG_UPDATE") != "" {
				if err := os.WriteFile(filepath.Join(expected, "diff.patch"), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, _ := os.ReadFile(filepath.Join(expected, "diff.patch"))
			if strings.TrimSpace(got) != strings.TrimSpace(string(want)) {
				t.Fatalf("the diff after pvctl render (-want +got):\n%s", cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(got)))
			}
		})
	}
}

// Every package under examples/ whose pipeline runs a function carries its
// kpt e2e runner case (.expected/ and the .krmignore that hides it from
// kpt), which TestCatalogCases runs.
func TestExamplesCarryTheirCase(t *testing.T) {
	n := 0
	err := filepath.WalkDir(filepath.Join(repoRoot, "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "Kptfile" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !regexp.MustCompile(`(?m)^\s+(mutators|validators):`).Match(b) {
			return nil
		}
		n++
		dir := filepath.Dir(p)
		rel, _ := filepath.Rel(repoRoot, dir)
		for _, f := range []string{".expected/config.yaml", ".expected/results.yaml"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s runs functions and has no %s", rel, f)
			}
		}
		if k, err := os.ReadFile(filepath.Join(dir, ".krmignore")); err != nil || !strings.Contains(string(k), ".expected") {
			t.Errorf("%s: no .krmignore holding .expected (kpt would read the case as the package's resources)", rel)
		}
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("%d example packages run functions (%v): the test tests nothing", n, err)
	}
}
