package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// goRuntime runs functions written in Go, by image name.
type goRuntime map[string]func(rl *krm.ResourceList) error

func (g goRuntime) Runner(_ context.Context, f Function) (Runner, error) {
	fn, ok := g[f.Image]
	if !ok {
		return nil, fmt.Errorf("no runtime for image %q", f.Image)
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
		if err := fn(rl); err != nil {
			return &ExitError{Code: 1, Stderr: err.Error()}
		}
		o, err := rl.Bytes()
		if err != nil {
			return err
		}
		_, err = out.Write(o)
		return err
	}, nil
}

// setLabel labels every resource but the Kptfile with the config's data.
func setLabel(rl *krm.ResourceList) error {
	if rl.FunctionConfig == nil {
		return errors.New("no functionConfig")
	}
	data := rl.FunctionConfig.GetDataMap()
	for _, it := range rl.Items {
		if it.GetKind() == "Kptfile" {
			continue
		}
		labels := krm.EnsureMap(krm.EnsureMap(it.YNode(), "metadata"), "labels")
		for _, k := range krm.SortedKeys(data) {
			krm.SetField(labels, k, krm.StringNode(data[k]))
		}
	}
	return nil
}

func kptfile(name, pipeline string) string {
	return "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n" + pipeline
}

const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  k: v\n"

func TestRenderMutatorsSubpackagesAndSelectors(t *testing.T) {
	files := map[string]string{
		"Kptfile":     kptfile("root", "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n    configMap:\n      tier: web\n    selectors:\n    - kind: ConfigMap\n"),
		"a.yaml":      fmt.Sprintf(cm, "a"),
		"svc.yaml":    "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n",
		"README.md":   "# not KRM\n",
		"sub/Kptfile": kptfile("sub", "pipeline:\n  mutators:\n  - image: set-labels:v0.1\n    configMap:\n      sub: \"yes\"\n"),
		"sub/b.yaml":  fmt.Sprintf(cm, "b"),
	}
	out, st, err := Render(context.Background(), files, Options{Runtime: goRuntime{"gcr.io/kpt-fn/set-labels:v0.1": setLabel}})
	if err != nil {
		t.Fatal(err)
	}
	// The subpackage first (its own pipeline: every resource), then the
	// root's on the ConfigMaps only.
	want := map[string]string{
		"a.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    tier: web\ndata:\n  k: v\n",
		"svc.yaml":    files["svc.yaml"],
		"README.md":   files["README.md"],
		"sub/b.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels:\n    sub: \"yes\"\n    tier: web\ndata:\n  k: v\n",
		"Kptfile":     files["Kptfile"],
		"sub/Kptfile": files["sub/Kptfile"],
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Fatalf("rendered files (-want +got):\n%s", diff)
	}
	if len(st.Runs) != 2 || st.Runs[0].Image != "gcr.io/kpt-fn/set-labels:v0.1" || st.Err != "" || st.ExitCode() != 0 {
		t.Fatalf("status = %+v", st)
	}
}

// configPath gives the function the config as the pipeline has left it; a
// generator's new resources get a file of their own; a file whose every
// resource was deleted is removed.
func TestRenderConfigPathGenerateAndDelete(t *testing.T) {
	files := map[string]string{
		"Kptfile":     kptfile("p", "pipeline:\n  mutators:\n  - image: example.com/edit-config:v1\n  - image: example.com/label:v1\n    configPath: labels.yaml\n  - image: example.com/generate:v1\n  - image: example.com/drop:v1\n    configMap:\n      name: gone\n"),
		"labels.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  team: a\n",
		"gone.yaml":   fmt.Sprintf(cm, "gone"),
		"keep.yaml":   fmt.Sprintf(cm, "keep"),
	}
	rt := goRuntime{
		"example.com/edit-config:v1": func(rl *krm.ResourceList) error { // the config file, changed by an earlier function
			for _, it := range rl.Items {
				if it.GetName() == "labels" {
					krm.SetField(krm.Field(it.YNode(), "data"), "team", krm.StringNode("b"))
				}
			}
			return nil
		},
		"example.com/label:v1": func(rl *krm.ResourceList) error {
			if got := rl.FunctionConfig.GetDataMap()["team"]; got != "b" {
				return fmt.Errorf("config as read: team %q, want the pipeline's b", got)
			}
			return nil
		},
		"example.com/generate:v1": func(rl *krm.ResourceList) error {
			rl.Items = append(rl.Items, yaml.MustParse(fmt.Sprintf(cm, "made")))
			return nil
		},
		"example.com/drop:v1": func(rl *krm.ResourceList) error {
			name := rl.FunctionConfig.GetDataMap()["name"]
			var kept []*yaml.RNode
			for _, it := range rl.Items {
				if it.GetName() != name {
					kept = append(kept, it)
				}
			}
			rl.Items = kept
			return nil
		},
	}
	out, st, err := Render(context.Background(), files, Options{Runtime: rt})
	if err != nil {
		t.Fatalf("%v\n%+v", err, st)
	}
	if _, ok := out["gone.yaml"]; ok {
		t.Errorf("gone.yaml is still there:\n%s", out["gone.yaml"])
	}
	if !strings.Contains(out["labels.yaml"], "team: b") || out["keep.yaml"] != files["keep.yaml"] {
		t.Errorf("labels.yaml or keep.yaml:\n%s\n%s", out["labels.yaml"], out["keep.yaml"])
	}
	if out["configmap_made.yaml"] != fmt.Sprintf(cm, "made") {
		t.Errorf("the generated resource's file: %v", keys(out))
	}
	if len(st.Runs) != 4 {
		t.Errorf("runs = %+v", st.Runs)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A render that fails leaves the package as it was and says why, with the
// runs up to the failing one in the status: a step that could not run is
// the last, with its reason (kpt's executionError).
func TestRenderFailures(t *testing.T) {
	ok := fmt.Sprintf(cm, "a")
	fail := func(rl *krm.ResourceList) error { return errors.New("namespace \"prod,eu\" is not a valid namespace") }
	for _, tt := range []struct {
		name, kptfile, want string
		opts                Options
		runs                int
	}{
		{"a failing validator", "pipeline:\n  mutators:\n  - image: example.com/pass:v1\n  validators:\n  - image: example.com/fail:v1\n",
			"package .: `pipeline.validators[0]`: function example.com/fail:v1 failed: exit code 1: namespace \"prod,eu\" is not a valid namespace", Options{}, 2},
		{"a missing configPath", "pipeline:\n  mutators:\n  - image: example.com/pass:v1\n    configPath: nowhere.yaml\n",
			"Kptfile: `pipeline.mutators[0].configPath` \"nowhere.yaml\": functionConfig must exist in the current package", Options{}, 0},
		{"a configPath outside the package", "pipeline:\n  mutators:\n  - image: example.com/pass:v1\n    configPath: ../etc/passwd\n",
			"Kptfile: `pipeline.mutators[0].configPath` \"../etc/passwd\" must be a path inside the package", Options{}, 0},
		{"exec not allowed", "pipeline:\n  mutators:\n  - exec: ./fn\n",
			"package .: `pipeline.mutators[0]` (exec \"./fn\"): exec functions run only when allowed (kpt: --allow-exec)", Options{}, 1},
		{"a later mutator that cannot run stops the first (kpt prepares them all)", "pipeline:\n  mutators:\n  - image: example.com/pass:v1\n  - exec: ./fn\n",
			"package .: `pipeline.mutators[1]` (exec \"./fn\"): exec functions run only when allowed (kpt: --allow-exec)", Options{}, 1},
		{"no runtime for an image", "pipeline:\n  mutators:\n  - image: example.com/unknown:v1\n",
			"package .: `pipeline.mutators[0]`: no runtime for image \"example.com/unknown:v1\"", Options{}, 1},
		{"image and exec", "pipeline:\n  mutators:\n  - image: example.com/pass:v1\n    exec: ./fn\n",
			"Kptfile: `pipeline.mutators[0]` must not specify both `image` and `exec`", Options{}, 0},
		{"an image a container CLI takes for a flag", "pipeline:\n  mutators:\n  - image: example.com/pass:v1\n  validators:\n  - image: --privileged\n",
			"Kptfile: `pipeline.validators[0].image` must be a container image reference ([REGISTRY/]PATH[:TAG][@DIGEST], lower-case path), found \"--privileged\"", Options{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"Kptfile": kptfile("p", tt.kptfile), "a.yaml": ok}
			tt.opts.Runtime = goRuntime{"example.com/pass:v1": func(*krm.ResourceList) error { return nil }, "example.com/fail:v1": fail}
			out, st, err := Render(context.Background(), files, tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
			if out != nil || st.Err != tt.want || st.ExitCode() != 1 || len(st.Runs) != tt.runs {
				t.Fatalf("files %v, status %+v", out, st)
			}
			if tt.runs > 0 {
				last := st.Runs[len(st.Runs)-1]
				if last.ExecutionError != "" {
					if last.ExitCode != 1 || "package .: "+last.ExecutionError != tt.want || st.Executed() != tt.runs-1 {
						t.Fatalf("the step that could not run: %+v", last)
					}
					return
				}
				if last.ExitCode != 1 || !strings.Contains(last.Stderr, "is not a valid namespace") {
					t.Fatalf("the failing run: %+v", last)
				}
			}
		})
	}
}
