package functionrunner

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pb "github.com/nephio-project/porch/func/evaluator"
	"github.com/pvkit/pvkit/internal/fntest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

var functions = fntest.Functions

var (
	repoRoot string
	runner   string // Porch v1.5.3's function runner, built
	client   pb.FunctionEvaluatorClient
	setupErr error
)

func TestMain(m *testing.M) {
	repoRoot = fntest.RepoRoot()
	tmp, err := os.MkdirTemp("", "pvkit-function-runner-")
	if err != nil {
		panic(err)
	}
	stop, err := start(tmp)
	setupErr = err
	code := m.Run()
	if stop != nil {
		stop()
	}
	os.RemoveAll(tmp)
	os.Exit(code)
}

// start builds the functions and the runner and starts the runner; it
// returns a function that stops it.
func start(tmp string) (func(), error) {
	fnDir := filepath.Join(tmp, "functions")
	if err := fntest.BuildFunctions(fnDir, functions...); err != nil {
		return nil, err
	}
	runner = filepath.Join(tmp, "function-runner")
	if err := fntest.GoBuild(filepath.Join(repoRoot, "test", "functionrunner", "tools"), runner, "github.com/nephio-project/porch/func/server"); err != nil {
		return nil, fmt.Errorf("building Porch v1.5.3's function runner: %w", err)
	}
	c, stop, err := serve(tmp, filepath.Join(repoRoot, "deploy", "function-runner", "config.yaml"), fnDir)
	client = c
	return stop, err
}

// serve starts the runner on a config and its functions directory and
// waits until it answers.
func serve(tmp, config, fnDir string) (pb.FunctionEvaluatorClient, func(), error) {
	port, err := freePort()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(runner, "--port", fmt.Sprint(port), "--disable-runtimes", "pod", "--config", config, "--functions", fnDir)
	logPath := filepath.Join(tmp, fmt.Sprintf("runner-%d.log", port))
	log, _ := os.Create(logPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	conn, err := grpc.NewClient(fmt.Sprintf("127.0.0.1:%d", port), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, stop, err
	}
	c := pb.NewFunctionEvaluatorClient(conn)
	// Ready when it answers (an unknown image is an error, not a hang).
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{Image: "pvkit/not-a-function:dev"}, grpc.WaitForReady(true))
		cancel()
		if s, ok := status.FromError(err); ok && s.Code() != codes.DeadlineExceeded && s.Code() != codes.Unavailable {
			return c, stop, nil
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			return c, stop, fmt.Errorf("the function runner did not answer in 30s: %v\n%s", err, b)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func ready(t *testing.T) {
	if setupErr == nil {
		return
	}
	if os.Getenv("PVKIT_SKIP_FUNCTION_RUNNER") != "" {
		t.Skipf("SKIP: Porch's function runner could not be set up: %v", setupErr)
	}
	t.Fatal(setupErr)
}

// TestEvaluateFunction sends every golden case through EvaluateFunction by
// image name: a success must give the golden package; a failure must come
// back as an error whose message holds the function's stderr lines (Porch's
// exec runtime keeps only stderr).
func TestEvaluateFunction(t *testing.T) {
	ready(t)
	for _, fn := range functions {
		cases, _ := filepath.Glob(filepath.Join(repoRoot, "functions", fn, "testdata", "*"))
		if len(cases) == 0 {
			t.Fatalf("no golden cases for %s", fn)
		}
		for _, dir := range cases {
			fn, dir := fn, dir
			t.Run(fn+"/"+filepath.Base(dir), func(t *testing.T) { evaluate(t, fn, dir) })
		}
	}
}

func evaluate(t *testing.T, fn, dir string) {
	input, files := fntest.Input(t, dir)
	want := fntest.ReadOutcome(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := client.EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{ResourceList: input, Image: "pvkit/" + fn + ":dev"})
	if want.ExitCode != 0 {
		if err == nil {
			t.Fatalf("the function runner succeeded; the function must fail with:\n%s", want.Stderr)
		}
		if status.Code(err) != codes.Internal {
			t.Errorf("error code = %v, want Internal: %v", status.Code(err), err)
		}
		for _, line := range strings.Split(strings.TrimSpace(want.Stderr), "\n") {
			if !strings.Contains(err.Error(), line) {
				t.Errorf("the runner's error lacks the stderr line %q:\n%v", line, err)
			}
		}
		return
	}
	if err != nil {
		t.Fatalf("EvaluateFunction: %v", err)
	}
	got := fntest.OutputFiles(t, resp.ResourceList, files)
	if diff := cmp.Diff(fntest.ReadTree(t, filepath.Join(dir, "expected")), got); diff != "" {
		t.Errorf("the function runner's result differs from the golden output (-golden +runner):\n%s", diff)
	}
}

// An image the runner does not know is an error naming it, not a hang.
func TestUnknownImage(t *testing.T) {
	ready(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{Image: "pvkit/nope:dev"})
	if err == nil || !strings.Contains(err.Error(), "pvkit/nope:dev") {
		t.Fatalf("error = %v", err)
	}
}
