package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"github.com/pvkit/pvkit/pkg/render"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fleet is a repositories directory with blueprints/app published (its
// Kptfile's pipeline given) and an input directory asking for one variant
// of it in deploy.
func fleet(t *testing.T, pipeline string) (repos, in string) {
	t.Helper()
	dir := t.TempDir()
	repos, in = filepath.Join(dir, "repos"), filepath.Join(dir, "in")
	gitDir := filepath.Join(repos, "blueprints.git")
	if err := gitstore.Init(gitDir, ""); err != nil {
		t.Fatal(err)
	}
	gs, err := gitstore.Open("default", []gitstore.Repository{{Name: "blueprints", GitDir: gitDir}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gs.PublishFiles("default", "blueprints", "app", map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n" + pipeline,
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  k: v\n",
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	input := "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: deploy\nspec:\n  deployment: true\n---\n" +
		"apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-dev\nspec:\n" +
		"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: deploy, package: app-dev}\n"
	if err := os.WriteFile(filepath.Join(in, "in.yaml"), []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	return repos, in
}

// countingRuntime runs every image with fn and counts the runs.
type countingRuntime struct {
	runs atomic.Int32
	fn   func(ctx context.Context) error
}

func (c *countingRuntime) Runner(ctx context.Context, f render.Function) (render.Runner, error) {
	return func(in io.Reader, out io.Writer) error {
		c.runs.Add(1)
		b, err := io.ReadAll(in)
		if err != nil {
			return err
		}
		if err := c.fn(ctx); err != nil {
			return err
		}
		_, err = out.Write(b)
		return err
	}, nil
}

const failingPipeline = "pipeline:\n  mutators:\n  - image: example.com/stuck:v1\n"

// Issue 27 #5: one deadline per render, over all its functions; an input
// that failed is rendered once per run (the clone's precheck and its
// create render the same files; a function stuck until the deadline held
// every run twice as long).
func TestFailedRenderOncePerRun(t *testing.T) {
	repos, in := fleet(t, failingPipeline)
	rt := &countingRuntime{fn: func(ctx context.Context) error {
		<-ctx.Done()
		return &render.ExitError{Code: 1, Stderr: "stopped: " + context.Cause(ctx).Error()}
	}}
	start := time.Now()
	rep, err := Run(context.Background(), RunOptions{Repos: repos, Files: []string{in}, Namespace: "default",
		Render: &Render{Runtime: rt, Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if n := rt.runs.Load(); n != 1 {
		t.Fatalf("the failing input was rendered %d times in one run, want 1", n)
	}
	var msg string
	for _, o := range rep.Objects {
		if o.Name == "app-dev" {
			msg = o.Reason + ": " + o.Message
		}
	}
	if !strings.Contains(msg, "stopped: context deadline exceeded") {
		t.Fatalf("app-dev: %q (run took %s)", msg, time.Since(start))
	}
}

// Issue 27 #5: a run has a deadline of its own; past it, the run stops
// where it is, saves its state, and says so (Report.Unsettled).
func TestRunDeadlineSavesState(t *testing.T) {
	repos, in := fleet(t, failingPipeline)
	rt := &countingRuntime{fn: func(ctx context.Context) error {
		<-ctx.Done()
		return errors.New("stopped")
	}}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, fmt.Errorf("the run's --timeout (300ms) passed"))
	defer cancel()
	rep, err := Run(ctx, RunOptions{Repos: repos, Files: []string{in}, Namespace: "default", Render: &Render{Runtime: rt, Timeout: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "stopped after 1 reconcile passes: the run's --timeout (300ms) passed"; rep.Unsettled != want {
		t.Fatalf("Unsettled = %q, want %q", rep.Unsettled, want)
	}
	st, err := state.Read(filepath.Join(repos, state.File))
	if err != nil || len(st.Variants) != 1 || st.Variants[0].Name != "app-dev" {
		t.Fatalf("state after a stopped run: %+v, %v", st, err)
	}
}

// Issue 27 #5: --sync creates at most MaxSyncCreates objects in one run;
// the rest wait for the next, with a warning, and the state is saved.
func TestSyncCreatesBounded(t *testing.T) {
	repos, in := fleet(t, "")
	gitDir := filepath.Join(repos, "apps.git")
	if err := gitstore.Init(gitDir, ""); err != nil {
		t.Fatal(err)
	}
	gs, err := gitstore.Open("default", []gitstore.Repository{{Name: "apps", GitDir: gitDir}})
	if err != nil {
		t.Fatal(err)
	}
	var objs strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&objs, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata: {k: v}\n", i)
	}
	if _, err := gs.PublishFiles("default", "apps", "bundle", map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bundle\n", "objects.yaml": objs.String()}); err != nil {
		t.Fatal(err)
	}
	run := func() *Report {
		rep, err := Run(context.Background(), RunOptions{Repos: repos, Files: []string{in}, Namespace: "default", Sync: []string{"apps"}, MaxSyncCreates: 2})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	synced := func() int {
		st, err := state.Read(filepath.Join(repos, state.File))
		if err != nil {
			t.Fatal(err)
		}
		return len(st.Objects)
	}
	rep := run()
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "--sync: this run created 2 objects, its bound: the rest wait for the next run") || synced() != 2 {
		t.Fatalf("first run: %d synced, warnings %q", synced(), rep.Warnings)
	}
	run()
	run()
	if n := synced(); n != 5 {
		t.Fatalf("after three runs: %d synced, want 5", n)
	}
}

// Issue 47 #1: the files' baseline after a run loses what sets removed
// themselves (their own guard's business), never what left the files.
func TestNextFilesPeak(t *testing.T) {
	vs := func(names ...string) []pvapi.PackageVariant {
		out := make([]pvapi.PackageVariant, len(names))
		for i, n := range names {
			out[i].Name = n
		}
		return out
	}
	before := vs("a", "b", "c", "d", "e", "f", "g", "h", "i", "j")
	after := vs("a", "b", "c", "d", "e")
	deleted := []client.Object{&before[5], &before[6]} // f, g left the files; h, i, j went with their set's own removal
	if got := nextFilesPeak(10, before, after, deleted); got != 7 {
		t.Fatalf("nextFilesPeak = %d, want 7", got)
	}
	if got := nextFilesPeak(3, before, vs("a", "b", "c", "d", "e", "f", "g", "h"), nil); got != 8 {
		t.Fatalf("a fleet that grew: %d, want 8", got)
	}
}
