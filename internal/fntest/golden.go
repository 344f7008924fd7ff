package fntest

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// UpdateEnv names the environment variable that regenerates golden files.
const UpdateEnv = "PVKIT_UPDATE_GOLDEN"

// Outcome is what one run of a function produced, as stored in expected-run.yaml.
type Outcome struct {
	ExitCode int        `yaml:"exitCode"`
	Stderr   string     `yaml:"stderr,omitempty"`
	Results  fn.Results `yaml:"results,omitempty"`
}

// Run runs every case directory under dir against p.
func Run(t *testing.T, dir, name string, p krm.Processor) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		caseDir := filepath.Join(dir, e.Name())
		t.Run(e.Name(), func(t *testing.T) { runCase(t, caseDir, name, p) })
	}
	if n == 0 {
		t.Fatalf("no golden cases under %s", dir)
	}
}

func runCase(t *testing.T, dir, name string, p krm.Processor) {
	input, files := Input(t, dir)
	out, got := runOnce(name, p, input)
	update := os.Getenv(UpdateEnv) != ""
	var gotFiles map[string]string
	if got.ExitCode == 0 && files != nil {
		gotFiles = OutputFiles(t, out, files)
	}
	if update {
		writeGolden(t, dir, got, gotFiles)
		return
	}
	want := ReadOutcome(t, dir)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("run outcome differs from expected-run.yaml (-want +got):\n%s", diff)
	}
	if got.ExitCode != 0 {
		checkUntouched(t, input, out)
		return
	}
	if files != nil {
		if diff := cmp.Diff(ReadTree(t, filepath.Join(dir, "expected")), gotFiles); diff != "" {
			t.Errorf("output package differs from expected/ (-want +got):\n%s", diff)
		}
	}
	checkIdempotent(t, name, p, out)
}

// Input returns a case's input ResourceList bytes and, for a package case,
// the package files (nil for a raw resourcelist.yaml case).
func Input(t testing.TB, dir string) ([]byte, map[string]string) {
	if raw, err := os.ReadFile(filepath.Join(dir, "resourcelist.yaml")); err == nil {
		return raw, nil
	}
	files := ReadTree(t, filepath.Join(dir, "input"))
	items, err := krm.FilesToItems(files)
	if err != nil {
		t.Fatalf("input/: %v", err)
	}
	rl := &krm.ResourceList{Items: items}
	if b, err := os.ReadFile(filepath.Join(dir, "fnconfig.yaml")); err == nil {
		fc, err := yaml.Parse(string(b))
		if err != nil {
			t.Fatalf("fnconfig.yaml: %v", err)
		}
		rl.FunctionConfig = fc
	}
	b, err := rl.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b, files
}

func runOnce(name string, p krm.Processor, input []byte) ([]byte, Outcome) {
	var stdout, stderr bytes.Buffer
	code := fnmain.Run(name, p, bytes.NewReader(input), &stdout, &stderr)
	o := Outcome{ExitCode: code, Stderr: stderr.String()}
	if rl, err := krm.ParseResourceList(stdout.Bytes()); err == nil {
		o.Results = rl.Results
	}
	return stdout.Bytes(), o
}

// OutputFiles writes the items of an output ResourceList back into files.
func OutputFiles(t testing.TB, out []byte, original map[string]string) map[string]string {
	rl, err := krm.ParseResourceList(out)
	if err != nil {
		t.Fatalf("output is not a ResourceList: %v", err)
	}
	files, err := krm.ItemsToFiles(rl.Items, original)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkUntouched asserts a failed run wrote back the items it was given.
func checkUntouched(t *testing.T, input, out []byte) {
	if len(out) == 0 {
		return // nothing written at all
	}
	if diff := cmp.Diff(itemsText(t, input), itemsText(t, out)); diff != "" {
		t.Errorf("a failed run changed items (-input +output):\n%s", diff)
	}
}

// checkIdempotent runs the function on its own output: the items must come
// back unchanged and the run must succeed.
func checkIdempotent(t *testing.T, name string, p krm.Processor, out []byte) {
	rl, err := krm.ParseResourceList(out)
	if err != nil {
		t.Fatal(err)
	}
	rl.Results = nil
	again, err := rl.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	out2, o := runOnce(name, p, again)
	if o.ExitCode != 0 {
		t.Fatalf("second run failed: %s", o.Stderr)
	}
	if diff := cmp.Diff(itemsText(t, out), itemsText(t, out2)); diff != "" {
		t.Errorf("second run changed its own output (-first +second):\n%s", diff)
	}
}

func itemsText(t *testing.T, rlBytes []byte) []string {
	rl, err := krm.ParseResourceList(rlBytes)
	if err != nil {
		t.Fatalf("not a ResourceList: %v", err)
	}
	out := make([]string, len(rl.Items))
	for i, it := range rl.Items {
		out[i] = it.MustString()
	}
	return out
}

// ReadOutcome reads a case's expected-run.yaml.
func ReadOutcome(t testing.TB, dir string) Outcome {
	b, err := os.ReadFile(filepath.Join(dir, "expected-run.yaml"))
	if err != nil {
		t.Fatalf("%v (run with %s=1 to create it)", err, UpdateEnv)
	}
	var o Outcome
	if err := yaml.Unmarshal(b, &o); err != nil {
		t.Fatalf("expected-run.yaml: %v", err)
	}
	return o
}

func writeGolden(t *testing.T, dir string, o Outcome, files map[string]string) {
	b, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "expected-run.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	expected := filepath.Join(dir, "expected")
	if err := os.RemoveAll(expected); err != nil {
		t.Fatal(err)
	}
	if files != nil {
		WriteTree(t, expected, files)
	}
}

// ReadTree reads every file under root into a map keyed by slash path.
func ReadTree(t testing.TB, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// WriteTree writes files under root, in name order.
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[n]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
