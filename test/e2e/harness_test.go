package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
)

// functions are the binaries the cases use.
var functions = fntest.Functions

var (
	repoRoot string // the module root
	binDir   string // built binaries, shared by every case
	kptPath  string
)

func TestMain(m *testing.M) {
	repoRoot = fntest.RepoRoot()
	var err error
	if kptPath, err = exec.LookPath("kpt"); err != nil {
		// Each test skips itself (needKpt), so go test reports SKIP, not ok.
		os.Exit(m.Run())
	}
	tmp, err := os.MkdirTemp("", "pvkit-e2e-bin-")
	if err != nil {
		panic(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // pvctl's render runs the functions as nobody when root
		panic(err)
	}
	binDir = filepath.Join(tmp, "bin")
	if err := fntest.BuildFunctions(binDir, functions...); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// kptCase is one end-to-end scenario.
type kptCase struct {
	name string
	// pkg is the example package the runs work on, relative to the
	// repository root; the work directory mirrors that layout.
	pkg string
	// setup edits the copied package before the run (optional).
	setup func(t *testing.T, pkgDir string)
	// runs are kpt invocations; "{pkg}" stands for the package path and
	// "{configs}" for test/e2e/testdata/configs.
	runs [][]string
	// fail means the last run must fail and leave the package untouched.
	fail bool
	// images runs every function as its image (pvkit/<fn>:dev, never
	// pulled) instead of its binary, and expects exactly what the exec runs
	// of case expect recorded: the same package and the same kpt output.
	images bool
	expect string
}

var execArg = regexp.MustCompile(`^bin/([a-z-]+)$`)

// asImages turns a kpt invocation with --exec bin/<fn> into one with
// --image pvkit/<fn>:dev, pulling nothing.
func asImages(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--exec" && i+1 < len(args):
			out = append(out, "--image", "pvkit/"+execArg.FindStringSubmatch(args[i+1])[1]+":dev", "--image-pull-policy", "never")
			i++
		case args[i] == "render":
			out = append(out, args[i], "--image-pull-policy", "Never")
		default:
			out = append(out, args[i])
		}
	}
	return out
}

var imageName = regexp.MustCompile(`pvkit/([a-z-]+):dev`)
var execLine = regexp.MustCompile(`exec: bin/([a-z-]+)`)

// fromImages maps what an image run printed or wrote back to what the exec
// run of the same case did.
func fromImages(s string) string {
	s = imageName.ReplaceAllString(s, "bin/$1")
	return strings.ReplaceAll(s, "image: bin/", "exec: bin/")
}

var durations = regexp.MustCompile(`in [0-9.]+(ms|s|µs)`)

// emptyStderrLine is the empty last line kpt prints under "Stderr:" for
// exec functions but not for containers.
var emptyStderrLine = regexp.MustCompile(`(?m)^\s+""\n`)

func runCase(t *testing.T, c kptCase) {
	work := t.TempDir()
	if err := os.Symlink(binDir, filepath.Join(work, "bin")); err != nil {
		t.Fatal(err)
	}
	// The whole examples/ tree is copied so fn-config paths such as
	// examples/app-prod.yaml work as they do from the repository root.
	// Each package's .expected/ (its kpt e2e runner case, TestCatalogCases)
	// is left out: these cases expect their own.
	examples := fntest.ReadTree(t, filepath.Join(repoRoot, "examples"))
	for p := range examples {
		if strings.Contains("/"+p, "/.expected/") {
			delete(examples, p)
		}
	}
	fntest.WriteTree(t, filepath.Join(work, "examples"), examples)
	pkgDir := filepath.Join(work, filepath.FromSlash(c.pkg))
	if c.setup != nil {
		c.setup(t, pkgDir)
	}
	before := fntest.ReadTree(t, pkgDir)
	var transcript strings.Builder
	var lastErr error
	for _, args := range c.runs {
		run := args
		if c.images {
			run = asImages(args)
		}
		out, err := kpt(work, c.pkg, run)
		if c.images {
			out = fromImages(out)
		}
		fmt.Fprintf(&transcript, "$ kpt %s\n%s", strings.Join(args, " "), normalise(out, work))
		if err != nil {
			fmt.Fprintf(&transcript, "(exit: %v)\n", err)
		}
		lastErr = err
	}
	dir := filepath.Join(repoRoot, "test", "e2e", "testdata", c.name)
	if c.expect != "" {
		dir = filepath.Join(repoRoot, "test", "e2e", "testdata", c.expect)
	}
	after := fntest.ReadTree(t, pkgDir)
	if c.images {
		for k, v := range after {
			after[k] = fromImages(v)
		}
		for k, v := range before {
			before[k] = fromImages(v)
		}
	}
	if os.Getenv(fntest.UpdateEnv) != "" && !c.images {
		if (lastErr != nil) != c.fail {
			t.Fatalf("cannot record: the last run's failure is %v, want %v\n%s", lastErr, c.fail, transcript.String())
		}
		os.RemoveAll(dir)
		files := map[string]string{"kpt-output.txt": transcript.String()}
		if !c.fail {
			for k, v := range after {
				files["expected/"+k] = v
			}
		}
		fntest.WriteTree(t, dir, files)
		return
	}
	want, _ := os.ReadFile(filepath.Join(dir, "kpt-output.txt"))
	if diff := cmp.Diff(string(want), transcript.String()); diff != "" {
		t.Errorf("kpt output differs from %s/kpt-output.txt (-want +got):\n%s", c.name, diff)
	}
	if c.fail {
		if lastErr == nil {
			t.Fatalf("the last kpt run succeeded; it must fail")
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("a failed run changed the package (-before +after):\n%s", diff)
		}
		return
	}
	if lastErr != nil {
		t.Fatalf("kpt failed: %v\n%s", lastErr, transcript.String())
	}
	if diff := cmp.Diff(fntest.ReadTree(t, filepath.Join(dir, "expected")), after); diff != "" {
		t.Errorf("package differs from %s/expected (-want +got):\n%s", c.name, diff)
	}
	last := c.runs[len(c.runs)-1]
	if c.images {
		last = asImages(last)
	}
	if _, err := kpt(work, c.pkg, last); err != nil {
		t.Fatalf("second run failed: %v", err)
	}
	again := fntest.ReadTree(t, pkgDir)
	if c.images {
		for k, v := range again {
			again[k] = fromImages(v)
		}
	}
	if diff := cmp.Diff(after, again); diff != "" {
		t.Errorf("running the last command again changed the package (-first +second):\n%s", diff)
	}
}

// kpt runs one kpt command in the work directory and returns its combined output.
func kpt(work, pkg string, args []string) (string, error) {
	expanded := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "{pkg}", pkg)
		expanded[i] = strings.ReplaceAll(a, "{configs}", filepath.Join(repoRoot, "test", "e2e", "testdata", "configs"))
	}
	cmd := exec.Command(kptPath, expanded...)
	cmd.Dir = work
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func normalise(out, work string) string {
	out = strings.ReplaceAll(out, work, "<work>")
	out = strings.ReplaceAll(out, filepath.Join(repoRoot, "test", "e2e", "testdata", "configs"), "<configs>")
	out = durations.ReplaceAllString(out, "in <t>")
	out = emptyStderrLine.ReplaceAllString(out, "")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// needKpt skips the test when TestMain found no kpt on PATH.
func needKpt(t *testing.T) {
	t.Helper()
	if kptPath == "" {
		t.Skip("kpt is not on PATH; install kpt v1 to run the end-to-end tests")
	}
}
