package fnruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fnworker"
	"github.com/pvkit/pvkit/pkg/render"
)

// TestMain runs this test binary as the function the sandbox tests run
// when it is called so (`pvkit-sandbox-helper MODE ARGS` after the test
// flags), and the tests otherwise.
func TestMain(m *testing.M) {
	ServeCatalogIfWorker()
	for i, a := range os.Args {
		if a == "pvkit-sandbox-helper" {
			os.Exit(sandboxHelper(os.Args[i+1:]))
		}
	}
	os.Exit(m.Run())
}

// sandboxHelper is the function: it reads its input first, as a KRM
// function does, then does what its mode says, and returns its exit code.
func sandboxHelper(args []string) int {
	_, _ = io.ReadAll(os.Stdin)
	mode, arg := args[0], ""
	if len(args) > 1 {
		arg = args[1]
	}
	switch mode {
	case "report": // what the function sees, as a ConfigMap
		env := os.Environ()
		sort.Strings(env)
		cwd, _ := os.Getwd()
		entries, _ := os.ReadDir(cwd)
		dial := "connected"
		if c, err := net.Dial("tcp", arg); err != nil {
			dial = err.Error()
		} else {
			c.Close()
		}
		fmt.Printf("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: report}\n  data:\n"+
			"    env: %q\n    cwd: %q\n    entries: %q\n    uid: %q\n    dial: %q\n",
			strings.Join(env, " "), cwd, strconv.Itoa(len(entries)), strconv.Itoa(os.Getuid()), dial)
	case "alloc": // touch arg MiB
		n, _ := strconv.Atoi(arg)
		var keep [][]byte
		for i := 0; i < n; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = 1
			}
			keep = append(keep, b)
		}
		runtime.KeepAlive(keep)
		fmt.Print("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n")
	case "stdout", "stderr": // write arg MiB, then fail
		n, _ := strconv.Atoi(arg)
		w := os.Stdout
		if mode == "stderr" {
			w = os.Stderr
		}
		line := bytes.Repeat([]byte("x"), 1023)
		for i := 0; i < n*1024; i++ {
			fmt.Fprintf(w, "%s\n", line)
		}
		fmt.Fprint(os.Stderr, "the last line\n")
		return 1
	}
	return 0
}

// helper is this test binary copied into a directory every user may read,
// and the exec line that runs it in a mode.
func helper(t *testing.T) func(mode ...string) string {
	t.Helper()
	return helperFor(t)
}

// helperFor is helper for a test or a benchmark.
func helperFor(t testing.TB) func(mode ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := helperDir(t)
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "fn")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return func(mode ...string) string {
		return exe + " pvkit-sandbox-helper " + strings.Join(mode, " ")
	}
}

// helperDir is a directory every user may enter, removed after the test.
func helperDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pvkit-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runExec runs an exec function line on an empty ResourceList.
func runExec(t *testing.T, rt *Runtime, line string) (string, error) {
	t.Helper()
	rt.AllowExec = true
	run, err := rt.Runner(context.Background(), render.Function{Exec: line})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = run(strings.NewReader("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"), &out)
	return out.String(), err
}

// Issue 27 #1: a function pvctl runs as an executable reaches no network
// (the catalog's starlark could http.get what a draft holds to anywhere
// pvctl can reach), gets a minimal environment and an empty working
// directory of its own, and runs as nobody when pvctl runs as root.
func TestExecutablesAreSandboxed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("network namespaces are Linux's")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Setenv("PVKIT_SECRET_TOKEN", "s3cret")
	fn := helper(t)

	out, err := runExec(t, &Runtime{}, fn("report", l.Addr().String()))
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(out, "network is unreachable") {
		t.Errorf("the function reached the network:\n%s", out)
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, "PATH=") {
		t.Errorf("the function saw pvctl's environment:\n%s", out)
	}
	if m := regexp.MustCompile(`cwd: "(/[^"]+)"`).FindStringSubmatch(out); m == nil {
		t.Errorf("no working directory:\n%s", out)
	} else if want := fmt.Sprintf(`env: "HOME=%[1]s LOG_TO_STDERR=true PVKIT_CATALOG_FUNCTION=fn PWD=%[1]s STRUCTURED_RESULTS=true TMPDIR=%[1]s"`, m[1]); !strings.Contains(out, want) {
		t.Errorf("environment: want %s in\n%s", want, out) // PWD is /bin/sh's, which sets the memory bound
	}
	if !strings.Contains(out, `entries: "0"`) || !strings.Contains(out, "pvctl-fn-") {
		t.Errorf("working directory not empty or not its own:\n%s", out)
	}
	if os.Geteuid() == 0 && !strings.Contains(out, `uid: "65534"`) {
		t.Errorf("as root, the function must run as nobody:\n%s", out)
	}
	if m := regexp.MustCompile(`cwd: "(/[^"]+)"`).FindStringSubmatch(out); m != nil {
		if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
			t.Errorf("the function's working directory %s is left behind (%v)", m[1], err)
		}
	}

	// --allow-network is the explicit way back to the host's network.
	out, err = runExec(t, &Runtime{AllowNetwork: true}, fn("report", l.Addr().String()))
	if err != nil || !strings.Contains(out, `dial: "connected"`) {
		t.Fatalf("with AllowNetwork the function must reach the listener: %v\n%s", err, out)
	}
}

// Issue 27 #1, #7: a function's memory, output and kept stderr are bounded.
func TestExecutablesAreBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_DATA is set with Linux's prlimit")
	}
	fn := helper(t)

	if _, err := runExec(t, &Runtime{Memory: 256 << 20}, fn("alloc", "64")); err != nil {
		t.Fatalf("64 MiB under a 256 MiB bound: %v", err)
	}
	_, err := runExec(t, &Runtime{Memory: 256 << 20}, fn("alloc", "512"))
	var ee *render.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, "out of memory") {
		t.Fatalf("512 MiB under a 256 MiB bound: err = %v", err)
	}

	_, err = runExec(t, &Runtime{}, fn("stdout", strconv.Itoa(MaxOutput>>20+16)))
	if !errors.As(err, &ee) || !strings.HasSuffix(ee.Stderr, fmt.Sprintf("(stopped: its output passed %d bytes)", MaxOutput)) {
		t.Fatalf("output over the bound: err = %v", err)
	}

	_, err = runExec(t, &Runtime{}, fn("stderr", "50"))
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("stderr flood: err = %v", err)
	}
	if len(ee.Stderr) > StderrKept+100 || !strings.HasPrefix(ee.Stderr, "(the first ") || !strings.HasSuffix(ee.Stderr, "the last line\n") {
		t.Fatalf("stderr kept: %d bytes, starting %q", len(ee.Stderr), ee.Stderr[:80])
	}
}

// As root, a function runs as nobody through a descriptor pvctl opened: an
// executable in a directory nobody may not enter (a checkout under a 0700
// directory: CI failed so) runs all the same; one whose own mode does not
// let others execute it is refused before it starts, saying why.
func TestExecutableUnderAClosedDirectory(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("only root drops to nobody")
	}
	dir := t.TempDir() // 0700
	exe := filepath.Join(dir, "fn")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(helperDir(t), "fn-link") // a link others may follow, to a file they may not reach
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{exe, link} {
		out, err := runExec(t, &Runtime{}, p)
		if err != nil || !strings.Contains(out, "kind: ResourceList") {
			t.Fatalf("%s: %v\n%s", p, err, out)
		}
	}
	if err := os.Chmod(exe, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := runExec(t, &Runtime{}, exe)
	want := exe + " runs as nobody (pvctl runs functions as nobody when it runs as root, as kpt runs images): it must be readable and executable by others (mode -rwx------)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

func TestTail(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"line one\nline two\n", 12, "(the first 9 bytes are left out)\nline two\n"},
		{"abcdefghij", 4, "(the first 6 bytes are left out)\nghij"},
	} {
		if got := Tail(tt.in, tt.max); got != tt.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
	// Written in pieces, the same.
	w := &fnworker.Tail{Max: 12}
	for _, p := range []string{"line ", "one\nli", "ne two\n"} {
		_, _ = w.Write([]byte(p))
	}
	if got := w.String(); got != "(the first 9 bytes are left out)\nline two\n" {
		t.Errorf("in pieces: %q", got)
	}
}

// A function that writes 50 MB to stderr (60 bytes of script in a
// package): pvctl keeps its last StderrKept bytes.
func BenchmarkHostileStderr(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the sandbox is Linux's")
	}
	fn := helperFor(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rt := &Runtime{AllowExec: true}
		run, err := rt.Runner(context.Background(), render.Function{Exec: fn("stderr", "50")})
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		err = run(strings.NewReader("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"), &out)
		var ee *render.ExitError
		if !errors.As(err, &ee) || len(ee.Stderr) > StderrKept+100 {
			b.Fatalf("err = %v", err)
		}
	}
}
