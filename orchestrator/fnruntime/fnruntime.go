// Package fnruntime runs the functions of a Kptfile pipeline for pvctl's
// render (pkg/render), the ways Porch and kpt run them:
//
//   - pvkit's own functions (an image whose path ends in pvkit/<function>,
//     any registry and tag) in process: this pvctl's code, as the
//     controller runs them;
//   - the kpt catalog functions pvkit builds (internal/catalog: set-labels,
//     set-annotations, each at the behaviours its releases have) in process,
//     under every image name that resolves to them, unless the function
//     config maps that image to an executable of another name;
//   - images mapped to executables by a Porch function runner config
//     (config.yaml, with the directory of its executables): the kpt catalog
//     functions `make catalog-functions` builds from the Go module proxy,
//     run the way Porch's function runner's exec runtime runs them;
//   - any other image through Porch's function runner (FunctionRunner, a
//     gRPC address) or else a container CLI (docker or podman), sandboxed as
//     kpt sandboxes them: no network, user nobody, no new privileges;
//   - `exec:` functions only when allowed (kpt's --allow-exec).
//
// A function no way can run is an error naming its image and each way to
// run it; the caller's render fails with it (RenderFailed), and --no-render
// is the explicit way out.
package fnruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pvkit/pvkit/pkg/validate"

	"github.com/pvkit/pvkit/internal/catalog"
	"github.com/pvkit/pvkit/internal/fnmain"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/packagecontext"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
	"github.com/pvkit/pvkit/pkg/render"
	"sigs.k8s.io/kustomize/kyaml/fn/runtime/runtimeutil"
)

// Runtime is render.Runtime for pvctl.
type Runtime struct {
	// Executables maps image names (with tag or digest) to executables.
	Executables map[string]string
	// FunctionRunner is the address of a Porch function runner; "" for none.
	FunctionRunner string
	// Container is the container CLI for other images ("docker", "podman");
	// "" for none, or, with FindContainer, the first that answers on PATH,
	// looked for once, when an image first needs it (a run whose functions
	// all run in process or as executables never asks a daemon).
	Container     string
	FindContainer bool
	findOnce      sync.Once
	// PullPolicy is the container's image pull policy: Always, IfNotPresent
	// (the default) or Never, as kpt's --image-pull-policy.
	PullPolicy string
	// AllowExec lets `exec:` functions run.
	AllowExec bool
	// Timeout bounds one function run (0: 5 minutes, kpt's).
	Timeout time.Duration
	// AllowNetwork runs executables with the host's network (pvctl
	// --allow-network); without it each runs in a network namespace of its
	// own, or not at all (sandbox.go).
	AllowNetwork bool
	// Memory bounds an executable's data segment (0: DefaultMemory).
	Memory int64
	// InProcess runs pvkit's catalog functions in this process even when
	// this binary serves them as a worker (tests of the function code).
	InProcess bool
}

var _ render.Runtime = (*Runtime)(nil)

// pvsExpandTimeout bounds one expansion, as the pvs-expand binary does.
const pvsExpandTimeout = 10 * time.Second

// builtins are pvkit's own functions.
var builtins = map[string]krm.Processor{
	"package-context":  packagecontext.Process,
	"pipeline-prepend": pipelineprepend.Process,
	"config-inject":    configinject.Process,
	"pvs-expand": func(rl *krm.ResourceList) {
		ctx, cancel := context.WithTimeout(context.Background(), pvsExpandTimeout)
		defer cancel()
		pvsexpand.ProcessContext(ctx, rl)
	},
}

// Builtin is the name of pvkit's function an image names, or "": an image
// whose path ends in pvkit/<function>, any registry, tag or digest.
func Builtin(image string) string {
	dir, fn := filepath.Split(validate.ParseImage(image).Name)
	if strings.TrimSuffix(filepath.Base(strings.TrimSuffix(dir, "/")), "/") != "pvkit" {
		return ""
	}
	if _, ok := builtins[fn]; !ok {
		return ""
	}
	return fn
}

// Runner implements render.Runtime.
func (r *Runtime) Runner(ctx context.Context, f render.Function) (render.Runner, error) {
	if f.Exec != "" {
		if !r.AllowExec {
			return nil, fmt.Errorf("exec %q: exec functions run only with --allow-exec", f.Exec)
		}
		args := strings.Fields(f.Exec)
		path, err := filepath.Abs(args[0]) // the function's working directory is its own
		if err != nil {
			return nil, err
		}
		if !strings.ContainsRune(args[0], filepath.Separator) {
			if path, err = exec.LookPath(args[0]); err != nil {
				return nil, fmt.Errorf("exec %q: %w", f.Exec, err)
			}
		}
		return r.process(ctx, true, path, args[1:]...), nil
	}
	if fn := Builtin(f.Image); fn != "" {
		p := builtins[fn]
		return inProcess(fn, func(in io.Reader, out, stderr io.Writer) int { return fnmain.Run(fn, p, in, out, stderr) }), nil
	}
	if c := catalog.Resolve(f.Image); c != nil && !c.Sandboxed {
		// pvkit's catalog functions run in a worker (this binary, started
		// to serve them: it can be stopped and bounded, catalogworker.go),
		// unless a function config maps the image to an executable of
		// another name; one that runs the package's own program (starlark)
		// runs as its executable, sandboxed, below.
		if path, ok := r.Executables[f.Image]; !ok || filepath.Base(path) == c.Executable {
			if w := r.worker(); w != nil {
				return r.inWorker(ctx, w, c.Executable), nil
			}
			return inProcess(c.Executable, c.Call), nil
		}
	}
	if path, ok := r.Executables[f.Image]; ok {
		if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("image %q runs as the executable %s, which is not there: make catalog-functions builds it", f.Image, path)
		}
		return r.process(ctx, true, path), nil
	}
	if r.FunctionRunner != "" {
		return r.runner(ctx, f.Image), nil
	}
	if cli := r.containerCLI(); cli != "" {
		return r.container(ctx, cli, f.Image), nil
	}
	return nil, fmt.Errorf("no runtime for image %q: pvctl runs pvkit's own functions and its catalog functions in process, "+
		"the images a --function-config maps to executables (make catalog-functions builds the kpt catalog functions the Go module proxy serves; README), "+
		"and other images through --function-runner ADDR or docker or podman (neither was found); --no-render skips rendering", f.Image)
}

// containerStartFailed is the exit code docker and podman give when they
// could not run the image at all (pull, start), as against the function's
// own failure.
const containerStartFailed = 125

// unrunnable is the one line a render fails with when the container CLI
// could not run an image: the image and the ways that would run it. The
// CLI's own text stays in the render status (the run's stderr).
func unrunnable(cli, image string) string {
	return fmt.Sprintf("image %q could not be run: %s could not pull or start it (its message is in the render status). "+
		"Ways to run it: map it to an executable with --function-config, evaluate it with --function-runner ADDR, "+
		"make it available to docker or podman, or skip rendering with --no-render", image, cli)
}

// inProcess runs a function of this binary as a render.Runner: its exit
// code and the tail of its stderr are the run's, as a process's would be.
func inProcess(name string, run func(in io.Reader, out, stderr io.Writer) int) render.Runner {
	return func(in io.Reader, out io.Writer) error {
		var stderr bytes.Buffer
		if code := run(in, out, &stderr); code != 0 {
			return &render.ExitError{Code: code, Stderr: Tail(stderr.String(), StderrKept)}
		}
		return nil
	}
}

func (r *Runtime) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return 5 * time.Minute
}

// containerCLI is the container CLI, found on first need with
// FindContainer.
func (r *Runtime) containerCLI() string {
	if r.FindContainer {
		r.findOnce.Do(func() {
			if r.Container == "" {
				r.Container = FindContainerCLI()
			}
		})
	}
	return r.Container
}

// container runs an image with the container CLI, sandboxed as kpt runs it.
func (r *Runtime) container(ctx context.Context, cli, image string) render.Runner {
	pull := map[string]string{"always": "always", "never": "never"}[strings.ToLower(r.PullPolicy)]
	if pull == "" {
		pull = "missing"
	}
	args := []string{"run", "--rm", "-i", "--network", "none", "--user", "nobody", "--security-opt=no-new-privileges", "--pull", pull}
	args = append(args, runtimeutil.NewContainerEnvFromStringSlice(nil).GetDockerFlags()...)
	args = append(args, image)
	run := r.process(ctx, false, cli, args...)
	return func(in io.Reader, out io.Writer) error {
		err := run(in, out)
		var ee *render.ExitError
		if errors.As(err, &ee) && ee.Code == containerStartFailed {
			ee.Message = unrunnable(filepath.Base(cli), image)
		}
		return err
	}
}

// exitError turns a command's error into the render's: a run that exited
// non-zero is an *render.ExitError with its stderr.
func exitError(err error, stderr string, ctx context.Context) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return &render.ExitError{Code: 1, Stderr: fmt.Sprintf("%s\n(stopped: %v)", stderr, ctx.Err())}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &render.ExitError{Code: ee.ExitCode(), Stderr: stderr}
	}
	return err
}

// FindContainerCLI is docker or podman when one is on PATH and answers,
// else "".
func FindContainerCLI() string {
	for _, c := range []string{"docker", "podman"} {
		if p, err := exec.LookPath(c); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := exec.CommandContext(ctx, p, "version").Run()
			cancel()
			if err == nil {
				return p
			}
		}
	}
	return ""
}
