package fnruntime

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/render"
)

func TestBuiltin(t *testing.T) {
	for image, want := range map[string]string{
		"pvkit/package-context:v0.1.0":                        "package-context",
		"registry.example.com/pvkit/config-inject:dev":        "config-inject",
		"registry.example.com:5000/pvkit/pvs-expand@sha256:0": "pvs-expand",
		"pvkit/unknown:v1":                                    "",
		"gcr.io/kpt-fn/set-labels:v0.1":                       "",
		"other/package-context:v1":                            "",
	} {
		if got := Builtin(image); got != want {
			t.Errorf("Builtin(%q) = %q, want %q", image, got, want)
		}
	}
}

// Each way a function cannot run says which and what would run it.
func TestRunnerRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		rt   *Runtime
		fn   render.Function
		want string
	}{
		{"no runtime", &Runtime{}, render.Function{Image: "example.com/fn:v1"},
			`no runtime for image "example.com/fn:v1": pvctl runs pvkit's own functions and its catalog functions in process, the images a --function-config maps to executables (make catalog-functions builds the kpt catalog functions the Go module proxy serves; README), and other images through --function-runner ADDR or docker or podman (neither was found); --no-render skips rendering`},
		{"exec not allowed", &Runtime{}, render.Function{Exec: "./fn"},
			`exec "./fn": exec functions run only with --allow-exec`},
		{"executable not built", &Runtime{Executables: map[string]string{"gcr.io/kpt-fn/set-namespace:v0.4.1": filepath.Join(dir, "set-namespace-v0.4.1")}},
			render.Function{Image: "gcr.io/kpt-fn/set-namespace:v0.4.1"},
			`image "gcr.io/kpt-fn/set-namespace:v0.4.1" runs as the executable ` + filepath.Join(dir, "set-namespace-v0.4.1") + `, which is not there: make catalog-functions builds it`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.rt.Runner(context.Background(), tt.fn)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// pvkit's own function runs in process; a failure is an ExitError with the
// function's stderr.
func TestBuiltinRunsInProcess(t *testing.T) {
	run, err := (&Runtime{}).Runner(context.Background(), render.Function{Image: "pvkit/package-context:v0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {name: x}\n"
	err = run(strings.NewReader(in), &out)
	var ee *render.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || !strings.Contains(ee.Stderr, "must not contain the reserved key \"name\"") {
		t.Fatalf("err = %#v", err)
	}
}

func TestLoadExecutables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("config.yaml", "functions:\n- function: fn-v1\n  images: [example.com/fn:v1, example.com/fn@sha256:00]\n")
	m, err := LoadExecutables(good, "")
	if err != nil || m["example.com/fn:v1"] != filepath.Join(dir, "fn-v1") || len(Images(m)) != 2 {
		t.Fatalf("LoadExecutables = %v, %v", m, err)
	}
	for name, tt := range map[string]struct{ text, want string }{
		"a path":        {"functions:\n- function: ../fn\n  images: [a]\n", "`functions[0].function` must be the name of an executable of"},
		"twice":         {"functions:\n- function: a\n  images: [x]\n- function: b\n  images: [x]\n", `image "x" is mapped twice`},
		"unknown field": {"functions:\n- function: a\n  image: x\n", `unknown field "image"`},
	} {
		if _, err := LoadExecutables(write(name+".yaml", tt.text), ""); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tt.want)
		}
	}
}

// The container CLI is looked for when an image first needs it, once: a
// run whose functions all run in process asks no daemon.
func TestContainerFoundOnFirstNeed(t *testing.T) {
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Fatal(err)
	}
	docker := "#!/bin/sh\necho \"$1\" >> " + log + "\nif [ \"$1\" = run ]; then exec " + cat + "; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(docker), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	rt := &Runtime{FindContainer: true}
	if _, err := rt.Runner(context.Background(), render.Function{Image: "pvkit/package-context:v0.1.0"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Fatalf("an in-process function asked the container CLI: %v", err)
	}
	for i := 0; i < 2; i++ {
		run, err := rt.Runner(context.Background(), render.Function{Image: "example.com/fn:v1"})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := run(strings.NewReader("in"), &out); err != nil || out.String() != "in" {
			t.Fatalf("run through the container CLI: %q, %v", out.String(), err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); strings.Join(got, " ") != "version run run" {
		t.Fatalf("container CLI calls: %q, want version once, then a run per function", got)
	}
}

// Issue 30: the catalog functions pvkit builds run in process under every
// name that resolves to them, with no executable and no container CLI; a
// function config that maps the image to another executable wins.
func TestCatalogRunsInProcess(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no docker, no podman
	rt := &Runtime{FindContainer: true}
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n" +
		"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data: {tier: web}\n"
	for _, image := range []string{"gcr.io/kpt-fn/set-labels:v0.2", "ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.0",
		"gcr.io/kpt-fn/set-labels:v0.1.5", "gcr.io/kpt-fn/set-annotations:v0.1.4", "gcr.io/kpt-fn/set-labels"} {
		run, err := rt.Runner(context.Background(), render.Function{Image: image})
		if err != nil {
			t.Fatalf("%s: %v", image, err)
		}
		var out bytes.Buffer
		if err := run(strings.NewReader(in), &out); err != nil || !strings.Contains(out.String(), "tier: web") {
			t.Fatalf("%s: %v\n%s", image, err, out.String())
		}
	}
	// A failing catalog function is an ExitError with its stderr.
	run, _ := rt.Runner(context.Background(), render.Function{Image: "gcr.io/kpt-fn/set-annotations:v0.1.4"})
	err := run(strings.NewReader(strings.Replace(in, "data: {tier: web}", "data: {}", 1)), &bytes.Buffer{})
	var ee *render.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 || ee.Stderr != "[error] : failed to configure function: input annotation list cannot be empty" {
		t.Fatalf("err = %#v", err)
	}
	// Mapped to an executable of another name: that executable runs.
	other := filepath.Join(t.TempDir(), "my-set-labels")
	rt = &Runtime{Executables: map[string]string{"gcr.io/kpt-fn/set-labels:v0.2": other}}
	if _, err := rt.Runner(context.Background(), render.Function{Image: "gcr.io/kpt-fn/set-labels:v0.2"}); err == nil || !strings.Contains(err.Error(), other) {
		t.Fatalf("a config mapping the image elsewhere was not used: %v", err)
	}
}

// Issue 30: pvkit's starlark runs the package's own program, so it never
// runs in process: with no executable mapped there is no runtime for it,
// and the executable a config maps runs (sandboxed, as any).
func TestStarlarkNeverInProcess(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no docker, no podman
	image := "gcr.io/kpt-fn/starlark:v0.5.1"
	_, err := (&Runtime{FindContainer: true}).Runner(context.Background(), render.Function{Image: image})
	if err == nil || !strings.HasPrefix(err.Error(), `no runtime for image "gcr.io/kpt-fn/starlark:v0.5.1"`) {
		t.Fatalf("err = %v, want no runtime", err)
	}
	exe := filepath.Join(t.TempDir(), "starlark-v0.5")
	rt := &Runtime{Executables: map[string]string{image: exe}}
	if _, err := rt.Runner(context.Background(), render.Function{Image: image}); err == nil || !strings.Contains(err.Error(), exe+", which is not there") {
		t.Fatalf("err = %v, want the mapped executable", err)
	}
}

// Issue 30 #3: an image the container CLI cannot pull or start fails the
// render with one line naming the image and the ways to run it; the CLI's
// own text stays in the run's stderr (the render status).
func TestUnrunnableImageSaysHowToRunIt(t *testing.T) {
	bin := t.TempDir()
	docker := "#!/bin/sh\nif [ \"$1\" = run ]; then echo \"Unable to find image 'example.com/fn:v1' locally\" >&2; echo 'docker: no such host.' >&2; exit 125; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(docker), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	run, err := (&Runtime{FindContainer: true}).Runner(context.Background(), render.Function{Image: "example.com/fn:v1"})
	if err != nil {
		t.Fatal(err)
	}
	err = run(strings.NewReader("in"), &bytes.Buffer{})
	want := `image "example.com/fn:v1" could not be run: docker could not pull or start it (its message is in the render status). ` +
		"Ways to run it: map it to an executable with --function-config, evaluate it with --function-runner ADDR, " +
		"make it available to docker or podman, or skip rendering with --no-render"
	var ee *render.ExitError
	if !errors.As(err, &ee) || err.Error() != want || !strings.Contains(ee.Stderr, "no such host") || ee.Code != 125 {
		t.Fatalf("err = %v (%#v)\nwant %s", err, err, want)
	}
	// A function that ran and failed keeps its own message.
	docker = "#!/bin/sh\nif [ \"$1\" = run ]; then echo 'function failed' >&2; exit 1; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(docker), 0o755); err != nil {
		t.Fatal(err)
	}
	run, _ = (&Runtime{FindContainer: true}).Runner(context.Background(), render.Function{Image: "example.com/fn:v1"})
	if err := run(strings.NewReader("in"), &bytes.Buffer{}); err == nil || err.Error() != "exit code 1: function failed" {
		t.Fatalf("err = %v", err)
	}
}
