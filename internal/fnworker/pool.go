package fnworker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Pool runs calls in workers: an executable started with Env and Arg, one call at
// a time each, as many as calls run at once, kept between calls.
type Pool struct {
	// Path is the worker's executable; Args its arguments.
	Path string
	Args []string
	// Memory bounds each worker's memory (LimitMemory); MaxOutput each
	// call's output.
	Memory, MaxOutput int64

	mu   sync.Mutex
	idle []*worker
}

// worker is one running worker process.
type worker struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *Tail // its own, for its crashes
	done   chan struct{}
}

// Result is a call's outcome: the function's exit code, its output and the
// tail of its stderr.
type Result struct {
	Code   int
	Out    []byte
	Stderr string
}

// ErrStopped is a call stopped by its context (the render's deadline,
// Ctrl-C): its worker was killed.
var ErrStopped = errors.New("stopped")

// Call runs function name on in, in an idle worker or a new one. A call
// whose context ends kills its worker and returns an error wrapping
// ErrStopped and the context's cause; a worker that dies (out of memory,
// killed) fails the call with what it printed last.
func (p *Pool) Call(ctx context.Context, name string, in []byte) (Result, error) {
	if int64(len(in)) > MaxInput {
		return Result{}, fmt.Errorf("its input is %d bytes, more than a worker takes (%d)", len(in), MaxInput)
	}
	w, err := p.get()
	if err != nil {
		return Result{}, err
	}
	type answer struct {
		res Result
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := w.call(name, in, p.MaxOutput)
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			w.kill()
			return Result{}, w.died(a.err)
		}
		p.put(w)
		return a.res, nil
	case <-ctx.Done():
		w.kill()
		<-ch
		return Result{}, fmt.Errorf("%w: %v", ErrStopped, context.Cause(ctx))
	}
}

// Close ends the idle workers.
func (p *Pool) Close() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, w := range idle {
		_ = w.in.Close()
		w.wait()
	}
}

func (p *Pool) get() (*worker, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		select {
		case <-w.done: // it ended while idle
			return p.start()
		default:
			return w, nil
		}
	}
	p.mu.Unlock()
	return p.start()
}

// maxIdle bounds the workers a pool keeps between calls.
const maxIdle = 8

func (p *Pool) put(w *worker) {
	p.mu.Lock()
	if len(p.idle) < maxIdle {
		p.idle = append(p.idle, w)
		w = nil
	}
	p.mu.Unlock()
	if w != nil {
		_ = w.in.Close()
	}
}

func (p *Pool) start() (*worker, error) {
	cmd := exec.Command(p.Path, append([]string{Arg}, p.Args...)...)
	cmd.Env = append(os.Environ(), Env+"=1", MemoryEnv+"="+strconv.FormatInt(p.Memory, 10))
	w := &worker{cmd: cmd, stderr: &Tail{Max: StderrKept}, done: make(chan struct{})}
	cmd.Stderr = w.stderr
	setProcessGroup(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the function worker %s: %w", p.Path, err)
	}
	w.in, w.out = in, bufio.NewReaderSize(out, 64<<10)
	go func() { _ = cmd.Wait(); close(w.done) }()
	return w, nil
}

// call sends one call and reads its answer.
func (w *worker) call(name string, in []byte, maxOut int64) (Result, error) {
	if strings.ContainsRune(name, '\n') {
		return Result{}, fmt.Errorf("a function name with a line break: %q", name)
	}
	go func() { // the worker reads while it is written to
		_, _ = fmt.Fprintf(w.in, "%s\n%d\n", name, len(in))
		_, _ = w.in.Write(in)
	}()
	line, err := w.out.ReadString('\n')
	if err != nil {
		return Result{}, err
	}
	f := strings.Fields(line)
	if len(f) != 3 {
		return Result{}, fmt.Errorf("an answer of %q", strings.TrimSpace(line))
	}
	code, err1 := strconv.Atoi(f[0])
	outLen, err2 := strconv.ParseInt(f[1], 10, 64)
	errLen, err3 := strconv.ParseInt(f[2], 10, 64)
	switch {
	case err1 != nil || err2 != nil || err3 != nil || outLen < 0 || errLen < 0:
		return Result{}, fmt.Errorf("an answer of %q", strings.TrimSpace(line))
	case outLen > maxOut: // checked before anything is read
		return Result{}, fmt.Errorf("an answer of %d bytes, over the bound of %d", outLen, maxOut)
	case errLen > StderrKept+256:
		return Result{}, fmt.Errorf("a stderr of %d bytes, over the bound of %d", errLen, StderrKept)
	}
	out := make([]byte, outLen)
	if _, err := io.ReadFull(w.out, out); err != nil {
		return Result{}, err
	}
	stderr := make([]byte, errLen)
	if _, err := io.ReadFull(w.out, stderr); err != nil {
		return Result{}, err
	}
	return Result{Code: code, Out: out, Stderr: string(stderr)}, nil
}

// kill ends the worker's process group and waits for it.
func (w *worker) kill() {
	if w.cmd.Process != nil {
		_ = syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
	}
	w.wait()
}

func (w *worker) wait() {
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
	}
}

// died is the error of a call whose worker ended: what it printed last
// (the Go runtime's "out of memory"), else the error reading its answer.
func (w *worker) died(err error) error {
	if s := strings.TrimSpace(w.stderr.String()); s != "" {
		if i := strings.Index(s, "\ngoroutine "); i > 0 { // the crash, not every stack
			s = s[:i]
		}
		return fmt.Errorf("its process ended: %s", s)
	}
	return fmt.Errorf("its process ended: %v", err)
}
