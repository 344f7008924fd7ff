package fnruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/pvkit/pvkit/internal/fnworker"

	"github.com/pvkit/pvkit/pkg/render"
)

// A function pvctl runs as a process gets what kpt gives an image
// (rule: functions-sandboxed), docs/security.md:
//
//   - no network: a new network namespace with only a loopback that is
//     down (as docker's --network none). Where pvctl cannot make one (no
//     user namespaces for a user other than root, or not Linux) it refuses
//     to run the function unless --allow-network says to run it with the
//     host's network;
//   - user nobody when pvctl runs as root (kpt: --user nobody); otherwise
//     pvctl's own user, mapped as root of a new user namespace that holds
//     no rights outside it;
//   - a minimal environment (the two variables the kpt SDK reads, HOME and
//     TMPDIR) and an empty working directory of its own, removed after;
//   - a memory bound (RLIMIT_DATA, set by /bin/sh's ulimit before it execs
//     the function: prlimit(2) on another user's process needs
//     CAP_SYS_RESOURCE, which a container seldom has), an output bound, and
//     the last StderrKept bytes of its stderr.
//
// The executables are the operator's (a --function-config maps images to
// them, or --allow-exec lets a pipeline's exec: run); what is untrusted is
// the package content they read on stdin.

// Bounds of a function run as a process.
const (
	// DefaultMemory is a function's data segment bound (RLIMIT_DATA: heap
	// and anonymous mappings; the Go runtime's address space reservations
	// do not count).
	DefaultMemory = 2 << 30
	// MaxOutput bounds a function's stdout (the ResourceList it returns),
	// read before it is parsed: a package pvkit writes is at most 64 MiB
	// (the git store's bound), and parsing YAML costs a few times its size
	// (256 MiB used to cost several GB).
	MaxOutput = 64 << 20
	// StderrKept is how much of a function's stderr is kept: the last
	// bytes, as a log tail.
	StderrKept = fnworker.StderrKept
)

// nobody is the user a function runs as when pvctl runs as root (kpt runs
// images as nobody).
const nobody = 65534

// ErrNoNetworkIsolation is a function pvctl cannot run without the host's
// network.
var ErrNoNetworkIsolation = errors.New("pvctl runs functions as executables in a network namespace of their own, and this system does not let it make one")

// process runs a command on the ResourceList: sandboxed (an executable of
// the function config, or exec:), or as is (the container CLI, whose
// container is the sandbox).
func (r *Runtime) process(ctx context.Context, sandboxed bool, path string, args ...string) func(in io.Reader, out io.Writer) error {
	return func(in io.Reader, out io.Writer) error {
		ctx, cancel := context.WithTimeout(ctx, r.timeout())
		defer cancel()
		cmd := exec.CommandContext(ctx, path, args...)
		stdout := &boundedWriter{w: out, max: MaxOutput}
		stderr := &fnworker.Tail{Max: StderrKept}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		cmd.Env = append(os.Environ(), "LOG_TO_STDERR=true", "STRUCTURED_RESULTS=true")
		setProcessGroup(cmd)
		if !sandboxed {
			cmd.Stdin = in
			err := cmd.Run()
			return r.outcome(err, stdout, stderr, ctx)
		}
		iso := isolation{network: !r.AllowNetwork, root: os.Geteuid() == 0}
		if iso.network && !networkIsolationPossible() {
			return fmt.Errorf("%s: %w; --allow-network runs them with the host's network", filepath.Base(path), ErrNoNetworkIsolation)
		}
		dir, err := os.MkdirTemp("", "pvctl-fn-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		exe := path
		if iso.root {
			// pvctl opens the executable and nobody runs it through that
			// descriptor: the directories above it need not let nobody in
			// (a checkout under a 0700 home or temporary directory).
			f, err := openForOthers(path)
			if err != nil {
				return fmt.Errorf("%s runs as nobody (pvctl runs functions as nobody when it runs as root, as kpt runs images): %w", path, err)
			}
			defer f.Close()
			cmd.ExtraFiles = []*os.File{f} // descriptor 3 in the function
			exe = "/proc/self/fd/3"
			if err := os.Chown(dir, nobody, nobody); err != nil {
				return err
			}
		}
		cmd.Dir = dir
		// PVKIT_CATALOG_FUNCTION: the name the executable was mapped by,
		// which pvkit-catalog (one executable, a link per behaviour) runs
		// as when run through a descriptor (as nobody), whose name says
		// nothing.
		cmd.Env = []string{"LOG_TO_STDERR=true", "STRUCTURED_RESULTS=true", "HOME=" + dir, "TMPDIR=" + dir, "PVKIT_CATALOG_FUNCTION=" + filepath.Base(path)}
		iso.apply(cmd)
		memory := r.Memory
		if memory <= 0 {
			memory = DefaultMemory
		}
		limitMemory(cmd, memory, exe)
		cmd.Stdin = in
		if err := cmd.Start(); err != nil {
			return startError(path, iso, err)
		}
		return r.outcome(cmd.Wait(), stdout, stderr, ctx)
	}
}

// outcome is a process's error as the render takes it.
func (r *Runtime) outcome(err error, stdout *boundedWriter, stderr *fnworker.Tail, ctx context.Context) error {
	if stdout.over {
		return &render.ExitError{Code: 1, Stderr: fmt.Sprintf("%s\n(stopped: its output passed %d bytes)", stderr.String(), MaxOutput)}
	}
	return exitError(err, stderr.String(), ctx)
}

// limitMemory has /bin/sh bound the data segment, then exec exe (the
// command's executable, or the descriptor it was opened as).
func limitMemory(cmd *exec.Cmd, bytes int64, exe string) {
	script := fmt.Sprintf(`ulimit -d %d && exec "$@"`, bytes>>10)
	cmd.Args = append([]string{"sh", "-c", script, "pvctl-fn", exe}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
}

// openForOthers opens an executable others may read and execute (its own
// mode; symbolic links followed), for a function run as nobody.
func openForOthers(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && st.Mode().Perm()&0o005 != 0o005 {
		err = fmt.Errorf("it must be readable and executable by others (mode %v)", st.Mode().Perm())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// startError says why a sandboxed process did not start.
func startError(path string, iso isolation, err error) error {
	if iso.network && isolationRefused(err) {
		return fmt.Errorf("%s: %w (%v); --allow-network runs them with the host's network", filepath.Base(path), ErrNoNetworkIsolation, err)
	}
	return err
}

// boundedWriter passes at most max bytes on, then fails every write: the
// function is stopped (its stdout pipe breaks) and its run fails.
type boundedWriter struct {
	w    io.Writer
	max  int64
	n    int64
	over bool
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	if b.n+int64(len(p)) > b.max {
		b.over = true
		return 0, fmt.Errorf("output over %d bytes", b.max)
	}
	b.n += int64(len(p))
	return b.w.Write(p)
}

// Tail is s cut to its last max bytes, at a line where it can, saying so.
func Tail(s string, max int) string {
	t := &fnworker.Tail{Max: max}
	_, _ = t.Write([]byte(s))
	return t.String()
}
