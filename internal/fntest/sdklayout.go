package fntest

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/kptdev/krm-functions-sdk/go/fn/testhelpers"
	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/krm"
)

// The function cases in the SDK's layout, the one krm-functions-sdk's
// testhelpers.RunGoldenTests reads: a directory per case holding the
// input objects (resources.yaml, each object with the file path and index
// it came from), _fnconfig.yaml, and _expected.yaml, the ResourceList the
// function returns (regenerated with WRITE_GOLDEN_OUTPUT=1, the SDK's
// way). They are made from pvkit's own cases (testdata/<case>/input and
// fnconfig.yaml), so neither can drift from the other: PVKIT_UPDATE_GOLDEN=1
// rewrites the inputs. A case that is a raw resourcelist.yaml tests the
// ResourceList's own parsing, which the SDK's harness does before a
// function runs: it has no SDK form.

// SDKDir is where a function keeps its cases in the SDK's layout, beside
// testdata.
const SDKDir = "testdata-sdk"

// RunSDKLayout checks that sdkDir holds every case of dir in the SDK's
// layout, then runs them with the SDK's own harness.
func RunSDKLayout(t *testing.T, dir, sdkDir, name string, p krm.Processor) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	update := os.Getenv(UpdateEnv) != ""
	want := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		caseDir := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(caseDir, "resourcelist.yaml")); err == nil {
			continue
		}
		want[e.Name()] = true
		files := SDKCase(t, caseDir)
		target := filepath.Join(sdkDir, e.Name())
		if update {
			for n, c := range files {
				if err := os.MkdirAll(target, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(target, n), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		got := ReadTree(t, target)
		delete(got, "_expected.yaml")
		if diff := cmp.Diff(files, got); diff != "" {
			t.Errorf("%s is not %s in the SDK's layout (run with %s=1 WRITE_GOLDEN_OUTPUT=1) (-want +got):\n%s", target, caseDir, UpdateEnv, diff)
		}
	}
	if len(want) == 0 {
		t.Fatalf("no cases under %s: the test tests nothing", dir)
	}
	have, err := os.ReadDir(sdkDir)
	if err != nil {
		t.Fatalf("%v (run with %s=1 WRITE_GOLDEN_OUTPUT=1 to make the SDK's layout)", err, UpdateEnv)
	}
	for _, e := range have {
		if !want[e.Name()] {
			if update {
				if err := os.RemoveAll(filepath.Join(sdkDir, e.Name())); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s: no case %s in %s", filepath.Join(sdkDir, e.Name()), e.Name(), dir)
		}
	}
	if update && os.Getenv("WRITE_GOLDEN_OUTPUT") == "" {
		t.Fatalf("%s rewritten; WRITE_GOLDEN_OUTPUT=1 writes their _expected.yaml", sdkDir)
	}
	testhelpers.RunGoldenTests(t, sdkDir, SDKProcessor(name, p))
	for _, c := range slices.Sorted(maps.Keys(want)) { // the same function, the same words
		b, err := os.ReadFile(filepath.Join(sdkDir, c, "_expected.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rl, err := fn.ParseResourceList(b)
		if err != nil {
			t.Fatalf("%s/_expected.yaml: %v", c, err)
		}
		if diff := cmp.Diff(resultLines(ReadOutcome(t, filepath.Join(dir, c)).Results), resultLines(rl.Results)); diff != "" {
			t.Errorf("%s: the SDK's harness saw other results than %s/expected-run.yaml (-pvkit +sdk):\n%s", c, filepath.Join(dir, c), diff)
		}
	}
}

// resultLines are the results' severities and messages, sorted: the SDK's
// harness sorts the items before the function meets them, so problems
// found item by item come in another order.
func resultLines(rs fn.Results) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.Severity)+": "+r.Message)
	}
	sort.Strings(out)
	return out
}

// SDKCase is a pvkit case in the SDK's layout: resources.yaml and, when
// the case has a function config, _fnconfig.yaml.
func SDKCase(t testing.TB, caseDir string) map[string]string {
	input, _ := Input(t, caseDir)
	rl, err := krm.ParseResourceList(input)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, it := range rl.Items {
		docs = append(docs, it.MustString())
	}
	out := map[string]string{"resources.yaml": strings.Join(docs, "---\n")}
	if b, err := os.ReadFile(filepath.Join(caseDir, "fnconfig.yaml")); err == nil {
		out["_fnconfig.yaml"] = string(b)
	}
	return out
}

// SDKProcessor is a pvkit function as the SDK's harness runs one: the
// ResourceList through the function's own main (fnmain.Run), the output
// read back; false when the function failed (its error results say why).
func SDKProcessor(name string, p krm.Processor) fn.ResourceListProcessor {
	return fn.ResourceListProcessorFunc(func(rl *fn.ResourceList) (bool, error) {
		in, err := rl.ToYAML()
		if err != nil {
			return false, err
		}
		var out, stderr bytes.Buffer
		code := fnmain.Run(name, p, bytes.NewReader(in), &out, &stderr)
		got, err := fn.ParseResourceList(out.Bytes())
		if err != nil {
			return false, fmt.Errorf("%s (exit %d, stderr %q): its output: %w", name, code, stderr.String(), err)
		}
		*rl = *got
		return code == 0, nil
	})
}
