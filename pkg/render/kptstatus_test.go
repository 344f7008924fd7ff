package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/pkg/krm"
)

// reportingLabel labels as setLabel does and reports it, as the catalog's
// set-labels reports.
func reportingLabel(rl *krm.ResourceList) error {
	if err := setLabel(rl); err != nil {
		return err
	}
	rl.Results = append(rl.Results, &fn.Result{Severity: fn.Info, Message: fmt.Sprintf("set %d labels in total", len(rl.Items))})
	return nil
}

// refuse is a validator that fails with an error result naming a resource.
func refuse(rl *krm.ResourceList) error {
	rl.Results = append(rl.Results, &fn.Result{Severity: fn.Error, Message: "missing properties 'selector'",
		ResourceRef: &fn.ResourceRef{APIVersion: "v1", Kind: "ConfigMap", Name: "a"}, Field: &fn.Field{Path: "spec", ProposedValue: 3},
		File: &fn.File{Path: "a.yaml"}})
	return errors.New("function failure")
}

// statusRuntime runs reportingLabel and refuse; refuse, as a function
// that fails does, writes its results and exits 1.
var statusRuntime = resultsOnFailure{goRuntime{"example.com/label:v1": reportingLabel}}

type resultsOnFailure struct{ goRuntime }

func (r resultsOnFailure) Runner(ctx context.Context, f Function) (Runner, error) {
	if f.Image != "example.com/refuse:v1" {
		return r.goRuntime.Runner(ctx, f)
	}
	return func(in io.Reader, out io.Writer) error {
		b, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		rl, err := krm.ParseResourceList(b)
		if err != nil {
			return err
		}
		ferr := refuse(rl)
		o, err := rl.Bytes()
		if err != nil {
			return err
		}
		if _, err := out.Write(o); err != nil {
			return err
		}
		return &ExitError{Code: 1, Stderr: ferr.Error()}
	}, nil
}

// With KptStatus a render writes kpt v1.0's render status into the root
// Kptfile: the Rendered condition last (an earlier Rendered replaced, other
// conditions kept), each step with its exit code and results, a validator
// among the validation steps, a skipped step as exit code 0 with its
// reason; the rest of the Kptfile stays as it was (its comment too), and a
// second render changes nothing.
func TestKptStatusOnSuccess(t *testing.T) {
	files := map[string]string{
		"Kptfile": kptfile("app", "# the pipeline\npipeline:\n  mutators:\n    - image: example.com/label:v1\n      name: labels\n      configMap:\n        tier: backend\n"+
			"    - image: example.com/label:v1\n      configMap:\n        never: \"yes\"\n      when: resources.exists(r, r.kind == 'Secret')\n"+
			"  validators:\n    - image: example.com/label:v1\n      configMap:\n        v: \"1\"\n"+
			"status:\n  conditions:\n    - type: Rendered\n      status: \"False\"\n      reason: RenderFailed\n      message: old\n    - type: config.injection.ConfigMap.a\n      status: \"True\"\n"),
		"a.yaml": fmt.Sprintf(cm, "a"),
	}
	out, _, err := Render(context.Background(), files, Options{Runtime: statusRuntime, KptStatus: true})
	if err != nil {
		t.Fatal(err)
	}
	want := kptfile("app", "# the pipeline\npipeline:\n  mutators:\n    - image: example.com/label:v1\n      name: labels\n      configMap:\n        tier: backend\n"+
		"    - image: example.com/label:v1\n      configMap:\n        never: \"yes\"\n      when: resources.exists(r, r.kind == 'Secret')\n"+
		"  validators:\n    - image: example.com/label:v1\n      configMap:\n        v: \"1\"\n"+
		`status:
  conditions:
    - type: config.injection.ConfigMap.a
      status: "True"
    - type: Rendered
      status: "True"
      reason: RenderSuccess
  renderStatus:
    mutationSteps:
      - name: labels
        image: example.com/label:v1
        exitCode: 0
        results:
          - message: set 2 labels in total
            severity: info
      - image: example.com/label:v1
        exitCode: 0
        results:
          - message: 'skipped: `+"`pipeline.mutators[1].when`"+` is false (honoured as kpt''s main branch does; kpt v1.0.0-beta.56 and Porch v1.5.3 refuse the field)'
            severity: info
    validationSteps:
      - image: example.com/label:v1
        exitCode: 0
        results:
          - message: set 2 labels in total
            severity: info
`)
	if diff := cmp.Diff(want, out["Kptfile"]); diff != "" {
		t.Fatalf("the Kptfile (-want +got):\n%s", diff)
	}
	again, _, err := Render(context.Background(), out, Options{Runtime: statusRuntime, KptStatus: true})
	if err != nil || !cmp.Equal(out, again) {
		t.Fatalf("the second render (%v) changed (-first +second):\n%s", err, cmp.Diff(out, again))
	}
	// Without KptStatus, as kpt v1.0.0-beta.56: no status written, and
	// kpt v1.0's refused.
	plain, _, err := Render(context.Background(), files, Options{Runtime: statusRuntime})
	if err != nil || plain["Kptfile"] != files["Kptfile"] {
		t.Fatalf("without KptStatus (%v): the Kptfile\n%s", err, plain["Kptfile"])
	}
	_, _, err = Render(context.Background(), out, Options{Runtime: statusRuntime})
	if err == nil || !strings.Contains(err.Error(), "Kptfile: `status.renderStatus` is kpt v1.0's render status, which kpt v1.0.0-beta.56 and Porch v1.5.3 refuse") {
		t.Fatalf("a Kptfile with kpt v1.0's render status, rendered as Porch v1.5.3: %v", err)
	}
}

// A failed render with KptStatus writes the root Kptfile's status (the
// error, the steps up to the failing one, kpt's error summary) and leaves
// every other file as it was; with kpt.dev/save-on-render-failure it saves
// the resources as the pipeline left them (the mutators' work before a
// failing validator) and removes nothing.
func TestKptStatusOnFailure(t *testing.T) {
	pipeline := "pipeline:\n  mutators:\n    - image: example.com/label:v1\n      configMap:\n        tier: backend\n    - image: example.com/label:v1\n      configMap:\n        drop: \"yes\"\n" +
		"  validators:\n    - image: example.com/refuse:v1\n"
	wantStatus := `status:
  conditions:
    - type: Rendered
      status: "False"
      reason: RenderFailed
      message: 'package .: ` + "`pipeline.validators[0]`" + `: function example.com/refuse:v1 failed: missing properties ''selector'' (exit code 1: function failure)'
  renderStatus:
    mutationSteps:
      - image: example.com/label:v1
        exitCode: 0
        results:
          - message: set 2 labels in total
            severity: info
      - image: example.com/label:v1
        exitCode: 0
        results:
          - message: set 2 labels in total
            severity: info
    validationSteps:
      - image: example.com/refuse:v1
        stderr: function failure
        exitCode: 1
        results:
          - message: missing properties 'selector'
            severity: error
            resourceRef:
              apiVersion: v1
              kind: ConfigMap
              name: a
            field:
              path: spec
              proposedValue: "3"
            file:
              path: a.yaml
        errorResults:
          - message: missing properties 'selector'
            severity: error
            resourceRef:
              apiVersion: v1
              kind: ConfigMap
              name: a
            field:
              path: spec
              proposedValue: "3"
            file:
              path: a.yaml
    errorSummary: 'example.com/refuse:v1: exit code 1'
`
	for _, save := range []bool{false, true} {
		t.Run(fmt.Sprintf("save-on-render-failure %v", save), func(t *testing.T) {
			kf := kptfile("app", pipeline)
			if save {
				kf = strings.Replace(kf, "  name: app\n", "  name: app\n  annotations:\n    kpt.dev/save-on-render-failure: \"true\"\n", 1)
			}
			files := map[string]string{"Kptfile": kf, "a.yaml": fmt.Sprintf(cm, "a")}
			out, st, err := Render(context.Background(), files, Options{Runtime: statusRuntime, KptStatus: true})
			if err == nil || st.Err != err.Error() || out == nil {
				t.Fatalf("a failing validator: files %v, err %v", out, err)
			}
			if got := out["Kptfile"]; got != kf+wantStatus {
				t.Fatalf("the Kptfile (-want +got):\n%s", cmp.Diff(kf+wantStatus, got))
			}
			wantA := files["a.yaml"]
			if save {
				wantA = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    tier: backend\n    drop: \"yes\"\ndata:\n  k: v\n"
			}
			if out["a.yaml"] != wantA || len(out) != 2 {
				t.Fatalf("a.yaml after the failed render (save %v):\n%s\nfiles %v", save, out["a.yaml"], keys(out))
			}
			// Without KptStatus a failed render leaves nothing to write.
			if plain, _, err := Render(context.Background(), files, Options{Runtime: statusRuntime}); plain != nil || err == nil {
				t.Fatalf("without KptStatus: files %v, err %v", plain, err)
			}
		})
	}
}

// A step that cannot run is kpt's pre-execution failure: exit code 1 and
// its executionError, no results; the render's error summary names it.
func TestKptStatusOfAStepThatCannotRun(t *testing.T) {
	files := map[string]string{"Kptfile": kptfile("app", "pipeline:\n  mutators:\n    - image: example.com/label:v1\n      configMap:\n        a: b\n    - exec: ./fn\n"), "a.yaml": fmt.Sprintf(cm, "a")}
	out, _, err := Render(context.Background(), files, Options{Runtime: statusRuntime, KptStatus: true})
	if err == nil {
		t.Fatal("rendered with exec not allowed")
	}
	const want = `  renderStatus:
    mutationSteps:
      - exec: ./fn
        executionError: '` + "`pipeline.mutators[1]`" + ` (exec "./fn"): exec functions run only when allowed (kpt: --allow-exec)'
        exitCode: 1
    errorSummary: './fn: ` + "`pipeline.mutators[1]`" + ` (exec "./fn"): exec functions run only when allowed (kpt: --allow-exec)'
`
	if !strings.HasSuffix(out["Kptfile"], want) || out["a.yaml"] != files["a.yaml"] {
		t.Fatalf("the Kptfile:\n%s\nwant it to end with\n%s", out["Kptfile"], want)
	}
}

// kpt.dev/bfs-rendering renders top-down (kpt v1.0, Porch v1.5.3): the
// root's pipeline first, on every package's resources, then each
// subpackage's on its own and its descendants', so the deepest label wins
// where bottom-up the root's does. With save-on-render-failure, a failing
// subpackage keeps what the packages before it rendered.
func TestTopDownRendering(t *testing.T) {
	label := func(v string) string {
		return "pipeline:\n  mutators:\n    - image: example.com/label:v1\n      configMap:\n        level: " + v + "\n"
	}
	files := map[string]string{
		"Kptfile":            kptfile("root", label("root")),
		"cm.yaml":            fmt.Sprintf(cm, "root"),
		"sub/Kptfile":        kptfile("sub", label("sub")),
		"sub/cm.yaml":        fmt.Sprintf(cm, "sub"),
		"sub/nested/Kptfile": kptfile("nested", label("nested")),
		"sub/nested/cm.yaml": fmt.Sprintf(cm, "nested"),
		"other/Kptfile":      kptfile("other", ""),
		"other/cm.yaml":      fmt.Sprintf(cm, "other"),
	}
	levels := func(out map[string]string) string {
		var got []string
		for _, f := range []string{"cm.yaml", "other/cm.yaml", "sub/cm.yaml", "sub/nested/cm.yaml"} {
			_, after, _ := strings.Cut(out[f], "level: ")
			v, _, _ := strings.Cut(after, "\n")
			got = append(got, f+"="+v)
		}
		return strings.Join(got, " ")
	}
	out, _, err := Render(context.Background(), files, Options{Runtime: statusRuntime})
	if err != nil || levels(out) != "cm.yaml=root other/cm.yaml=root sub/cm.yaml=root sub/nested/cm.yaml=root" {
		t.Fatalf("bottom-up (%v): %s", err, levels(out))
	}
	files["Kptfile"] = strings.Replace(files["Kptfile"], "  name: root\n", "  name: root\n  annotations:\n    kpt.dev/bfs-rendering: \"true\"\n", 1)
	out, st, err := Render(context.Background(), files, Options{Runtime: statusRuntime})
	if err != nil || levels(out) != "cm.yaml=root other/cm.yaml=root sub/cm.yaml=sub sub/nested/cm.yaml=nested" {
		t.Fatalf("top-down (%v): %s", err, levels(out))
	}
	if len(st.Runs) != 3 || st.Runs[0].Results[0].Message != "set 8 labels in total" || st.Runs[1].Results[0].Message != "set 4 labels in total" || st.Runs[2].Results[0].Message != "set 2 labels in total" {
		t.Fatalf("top-down runs: the root saw every package's resources, nested its own: %+v", st.Runs)
	}
	again, _, err := Render(context.Background(), out, Options{Runtime: statusRuntime})
	if err != nil || !cmp.Equal(out, again) {
		t.Fatalf("the second top-down render (%v) changed:\n%s", err, cmp.Diff(out, again))
	}
	// sub fails: saved, the root's labels stay, nested never ran.
	files["Kptfile"] = strings.Replace(files["Kptfile"], "  annotations:\n", "  annotations:\n    kpt.dev/save-on-render-failure: \"true\"\n", 1)
	files["sub/Kptfile"] = kptfile("sub", label("sub")+"  validators:\n    - image: example.com/refuse:v1\n")
	out, st, err = Render(context.Background(), files, Options{Runtime: statusRuntime, KptStatus: true})
	if err == nil || !strings.HasPrefix(err.Error(), "package sub: `pipeline.validators[0]`: function example.com/refuse:v1 failed") {
		t.Fatalf("a failing subpackage, top-down: %v", err)
	}
	if levels(out) != "cm.yaml=root other/cm.yaml=root sub/cm.yaml=sub sub/nested/cm.yaml=sub" || len(st.Runs) != 3 || !st.Runs[2].Validator {
		t.Fatalf("saved on failure, top-down: %s, %d ran", levels(out), st.Executed())
	}
}

// What a render status adds, WithoutKptStatus takes away: the Kptfile as
// it was before the render, byte for byte, other conditions kept.
func TestWithoutKptStatus(t *testing.T) {
	for _, before := range []string{
		kptfile("app", "# the pipeline\npipeline:\n  mutators:\n    - image: example.com/label:v1\n      configMap:\n        tier: backend\n"),
		kptfile("app", "pipeline:\n  mutators:\n  - image: example.com/label:v1\n    configMap:\n      tier: backend\nstatus:\n  conditions:\n  - type: config.injection.ConfigMap.a\n    status: \"True\"\n"),
	} {
		out, _, err := Render(context.Background(), map[string]string{"Kptfile": before, "a.yaml": fmt.Sprintf(cm, "a")}, Options{Runtime: statusRuntime, KptStatus: true})
		if err != nil || !strings.Contains(out["Kptfile"], "renderStatus") {
			t.Fatalf("render (%v):\n%s", err, out["Kptfile"])
		}
		got, had, err := WithoutKptStatus(out["Kptfile"])
		if err != nil || !had || got != before {
			t.Fatalf("WithoutKptStatus (had %v, %v) (-before +got):\n%s", had, err, cmp.Diff(before, got))
		}
		if again, had, err := WithoutKptStatus(got); err != nil || had || again != got {
			t.Fatalf("WithoutKptStatus of a Kptfile without it: had %v, %v\n%s", had, err, again)
		}
	}
}
