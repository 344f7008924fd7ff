// Package fnworker runs functions of a binary's own (pvkit's catalog
// functions, internal/catalog) in a process of their own that serves one call
// after another: a worker. pvctl renders packages with them; in its own
// process a function could not be stopped at the render's deadline or on
// Ctrl-C (a search-replace regex ran 46 s past a 3 s deadline) nor kept
// from taking all the memory (apply-setters on a 205 KB package took pvctl
// to 2.6 GB and a fatal error, the whole run lost). A worker is killed at
// the deadline, bounded in memory (RLIMIT_DATA and the Go runtime's soft
// limit) and in what it answers; a worker that dies fails its call alone,
// and the next call starts a new one.
//
// The protocol, on the worker's standard input and output:
//
//	call:   NAME "\n" LEN "\n" <LEN bytes: the ResourceList>
//	answer: CODE " " OUTLEN " " ERRLEN "\n" <OUTLEN bytes: stdout> <ERRLEN bytes: stderr>
//
// The worker's own standard error is for its crashes only (the Go
// runtime's "fatal error: out of memory").
package fnworker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
)

// Env, set to "1" in a process's environment, with Arg its first
// argument, makes it a worker: a binary that can serve its functions calls
// Serve when it sees both. The environment alone does not (a
// user who exported it by mistake had every pvctl command exit 0 having
// done nothing), nor the argument alone (typed by mistake).
const Env = "PVKIT_FN_WORKER"

// Arg is a worker's first argument (Env).
const Arg = "__pvkit-function-worker"

// MemoryEnv carries the worker's memory bound, in bytes.
const MemoryEnv = "PVKIT_FN_WORKER_MEMORY"

// Func is a function as a process: a ResourceList on in, the function's
// output on out, its messages on stderr; it returns the exit code.
type Func func(in io.Reader, out, stderr io.Writer) int

// Bounds of one call, kept by the worker and checked again by its caller.
const (
	// MaxInput bounds a call's ResourceList.
	MaxInput = 256 << 20
	// StderrKept is how much of a function's stderr a worker answers: the
	// last bytes.
	StderrKept = 64 << 10
)

// Serve answers calls read from r on w until r ends, running each function
// lookup names (nil: none of that name) with output bounded to maxOut
// bytes. It returns nil at the end of r.
func Serve(r io.Reader, w io.Writer, lookup func(string) Func, maxOut int64) error {
	br := bufio.NewReader(r)
	bw := bufio.NewWriter(w)
	for {
		name, err := br.ReadString('\n')
		if err == io.EOF && name == "" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading a call: %w", err)
		}
		n, err := readLen(br, MaxInput)
		if err != nil {
			return err
		}
		in := make([]byte, n)
		if _, err := io.ReadFull(br, in); err != nil {
			return fmt.Errorf("reading a call's input: %w", err)
		}
		code, out, stderr := call(lookup, strings.TrimSuffix(name, "\n"), in, maxOut)
		in = nil
		if _, err := fmt.Fprintf(bw, "%d %d %d\n", code, len(out), len(stderr)); err != nil {
			return err
		}
		if _, err := bw.Write(out); err != nil {
			return err
		}
		if _, err := bw.WriteString(stderr); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
}

// call runs one function: its exit code, output and the tail of its
// stderr. A panic is the function's failure, not the worker's.
func call(lookup func(string) Func, name string, in []byte, maxOut int64) (code int, out []byte, stderr string) {
	f := lookup(name)
	errs := &Tail{Max: StderrKept}
	if f == nil {
		return 2, nil, fmt.Sprintf("no function %q in this worker", name)
	}
	o := &Bounded{Max: maxOut}
	func() {
		defer func() {
			if p := recover(); p != nil {
				fmt.Fprintf(errs, "%s: internal error: %v", name, p)
				code = 1
			}
		}()
		code = f(bytes.NewReader(in), o, errs)
	}()
	if o.Over {
		return 1, nil, fmt.Sprintf("%s\n(stopped: its output passed %d bytes)", errs.String(), maxOut)
	}
	return code, o.Buf.Bytes(), errs.String()
}

func readLen(br *bufio.Reader, max int64) (int64, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return 0, fmt.Errorf("reading a length: %w", err)
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(line, "\n"), 10, 64)
	if err != nil || n < 0 || n > max {
		return 0, fmt.Errorf("a length of %q: want 0 to %d", strings.TrimSpace(line), max)
	}
	return n, nil
}

// LimitMemory bounds this process's memory: its data segment
// (RLIMIT_DATA: the heap and anonymous mappings; past it an allocation
// fails and the Go runtime stops the process with "out of memory") and,
// below that, the Go runtime's soft limit, so that the collector works
// harder before the hard bound is reached. In a binary built with cgo the
// bound also counts its threads' pthread stacks (8 MiB each, barely
// touched): under a small bound (96 MiB) a fresh worker on a loaded
// machine could die starting its threads. make's builds, the release
// binaries and images are built without cgo; the default bound is 2 GiB.
func LimitMemory(bytes int64) error {
	if bytes <= 0 {
		return nil
	}
	debug.SetMemoryLimit(bytes / 10 * 8)
	return limitData(bytes)
}

// ServeIfWorker serves calls on the standard streams and exits when this
// process was started as a worker (Env and Arg); otherwise it returns and
// does nothing. A binary's main calls it first.
func ServeIfWorker(lookup func(string) Func, maxOut int64) {
	if !IsWorker(os.Args, os.Getenv(Env)) {
		serves.Store(true)
		return
	}
	if m, err := strconv.ParseInt(os.Getenv(MemoryEnv), 10, 64); err == nil {
		if err := LimitMemory(m); err != nil {
			fmt.Fprintf(os.Stderr, "pvkit function worker: bounding its memory: %v\n", err)
			os.Exit(1)
		}
	}
	if err := Serve(os.Stdin, os.Stdout, lookup, maxOut); err != nil {
		fmt.Fprintf(os.Stderr, "pvkit function worker: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// IsWorker reports whether a process of these arguments and Env value is
// a worker: both say so.
func IsWorker(args []string, env string) bool {
	return env == "1" && len(args) > 1 && args[1] == Arg
}

// serves: this process's main called ServeIfWorker, so its own executable
// can be started as a worker.
var serves atomic.Bool

// Serves reports whether this process's executable serves as a worker
// (its main called ServeIfWorker).
func Serves() bool { return serves.Load() }

// Bounded keeps at most Max bytes written to it, then fails every write.
type Bounded struct {
	Buf  bytes.Buffer
	Max  int64
	Over bool
}

func (b *Bounded) Write(p []byte) (int, error) {
	if int64(b.Buf.Len()+len(p)) > b.Max {
		b.Over = true
		return 0, fmt.Errorf("output over %d bytes", b.Max)
	}
	return b.Buf.Write(p)
}

// Tail keeps the last Max bytes written to it.
type Tail struct {
	Max     int
	buf     []byte
	dropped int64
}

func (t *Tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.Max {
		t.dropped += int64(len(t.buf) + len(p) - t.Max)
		t.buf = append(t.buf[:0], p[len(p)-t.Max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.Max; over > 0 {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String is what was kept, saying how much went before it.
func (t *Tail) String() string {
	if t.dropped == 0 {
		return string(t.buf)
	}
	s, dropped := string(t.buf), t.dropped
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 { // start at a line
		dropped += int64(i + 1)
		s = s[i+1:]
	}
	return fmt.Sprintf("(the first %d bytes are left out)\n%s", dropped, s)
}
