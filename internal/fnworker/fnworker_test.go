package fnworker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testFuncs are the functions this test binary serves as a worker.
var testFuncs = map[string]Func{
	"echo": func(in io.Reader, out, stderr io.Writer) int {
		_, _ = io.Copy(out, in)
		fmt.Fprint(stderr, "echoed")
		return 0
	},
	"fail": func(_ io.Reader, _, stderr io.Writer) int { fmt.Fprint(stderr, "it failed"); return 3 },
	"loop": func(io.Reader, io.Writer, io.Writer) int {
		for {
		}
	},
	"alloc": func(io.Reader, io.Writer, io.Writer) int { // until the bound stops it
		var keep [][]byte
		for {
			b := make([]byte, 16<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
		}
	},
	"big": func(_ io.Reader, out, _ io.Writer) int {
		chunk := bytes.Repeat([]byte("y"), 1<<20)
		for i := 0; i < 64; i++ {
			if _, err := out.Write(chunk); err != nil {
				return 1
			}
		}
		return 0
	},
	"panic": func(io.Reader, io.Writer, io.Writer) int { panic("boom") },
	"stderr": func(_ io.Reader, _, stderr io.Writer) int {
		fmt.Fprint(stderr, strings.Repeat("e", 1<<20)+"the end")
		return 1
	},
}

func TestMain(m *testing.M) {
	ServeIfWorker(func(n string) Func { return testFuncs[n] }, 8<<20)
	os.Exit(m.Run())
}

func pool(t *testing.T) *Pool {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := &Pool{Path: self, Memory: 256 << 20, MaxOutput: 8 << 20}
	t.Cleanup(p.Close)
	return p
}

// Calls run in a worker, one after another in the same process.
func TestCalls(t *testing.T) {
	p := pool(t)
	for i := 0; i < 3; i++ {
		res, err := p.Call(context.Background(), "echo", []byte(fmt.Sprintf("call %d", i)))
		if err != nil || res.Code != 0 || string(res.Out) != fmt.Sprintf("call %d", i) || res.Stderr != "echoed" {
			t.Fatalf("call %d: %+v %v", i, res, err)
		}
	}
	if len(p.idle) != 1 {
		t.Fatalf("%d idle workers after three calls one after another, want 1", len(p.idle))
	}
	for name, want := range map[string]Result{
		"fail":   {Code: 3, Stderr: "it failed"},
		"panic":  {Code: 1, Stderr: "panic: internal error: boom"},
		"nosuch": {Code: 2, Stderr: `no function "nosuch" in this worker`},
	} {
		res, err := p.Call(context.Background(), name, nil)
		if err != nil || res.Code != want.Code || res.Stderr != want.Stderr {
			t.Errorf("%s: %+v %v, want %+v", name, res, err, want)
		}
	}
	res, err := p.Call(context.Background(), "stderr", nil)
	if err != nil || len(res.Stderr) > StderrKept+100 || !strings.HasSuffix(res.Stderr, "the end") || !strings.HasPrefix(res.Stderr, "(the first ") {
		t.Fatalf("stderr: %d bytes, %v", len(res.Stderr), err)
	}
}

// Issue 47 #2: a function that does not end is stopped at its caller's
// deadline (and on Ctrl-C, a cancel), its worker killed; the next call
// gets a new worker.
func TestDeadlineStopsTheFunction(t *testing.T) {
	p := pool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Call(ctx, "loop", nil)
	if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopped after %s", d)
	}
	ctx, cancelNow := context.WithCancelCause(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancelNow(errors.New("interrupted")) }()
	if _, err := p.Call(ctx, "loop", nil); !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("cancelled: %v", err)
	}
	if res, err := p.Call(context.Background(), "echo", []byte("after")); err != nil || string(res.Out) != "after" {
		t.Fatalf("the next call: %+v %v", res, err)
	}
}

// Issue 47 #3: what a function may allocate and produce is bounded; past
// it that call fails alone, saying why, and the next call works.
func TestMemoryAndOutputBounded(t *testing.T) {
	p := pool(t)
	_, err := p.Call(context.Background(), "alloc", nil)
	// The Go runtime ends the worker: "fatal error: runtime: out of
	// memory" with cgo, a SIGSEGV in a static build.
	if err == nil || !strings.Contains(err.Error(), "its process ended") || !(strings.Contains(err.Error(), "out of memory") || strings.Contains(err.Error(), "SIGSEGV")) {
		t.Fatalf("alloc: %v", err)
	}
	res, err := p.Call(context.Background(), "big", nil)
	if err != nil || res.Code != 1 || len(res.Out) != 0 || !strings.Contains(res.Stderr, "(stopped: its output passed 8388608 bytes)") {
		t.Fatalf("big: %d bytes, code %d, %q, %v", len(res.Out), res.Code, res.Stderr, err)
	}
	if res, err := p.Call(context.Background(), "echo", []byte("after")); err != nil || string(res.Out) != "after" {
		t.Fatalf("the next call: %+v %v", res, err)
	}
}

// Issue 55 #8: PVKIT_FN_WORKER=1 exported by mistake made every pvctl
// command a worker that served nothing and exited 0. A worker needs the
// environment and its first argument both.
func TestIsWorker(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"pvctl", Arg}, "1", true},
		{[]string{"pvctl", "run", "-f", "in"}, "1", false},
		{[]string{"pvctl"}, "1", false},
		{[]string{"pvctl", Arg}, "", false},
		{[]string{"pvctl", Arg}, "true", false},
	} {
		if got := IsWorker(c.args, c.env); got != c.want {
			t.Errorf("IsWorker(%q, %q) = %v", c.args, c.env, got)
		}
	}
}

// The test binary itself, the environment exported and no worker
// argument: it runs its tests (it served calls before, and said nothing).
func TestEnvironmentAloneIsNoWorker(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^TestIsWorker$", "-test.v")
	cmd.Env = append(os.Environ(), Env+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestIsWorker") {
		t.Fatalf("with %s=1 exported: %v\n%s", Env, err, out)
	}
}
