package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
)

// BenchmarkPvctlRelease (issue 43 #7): the cost of a release with a
// realistic blueprint, per target: Nephio's pipeline (three catalog
// functions, in process), an injection point filled from the cluster,
// approval by policy (always), and a staged rollout (a canary, 10%, the
// rest). first: the fleet's first run (clone, inject, render, approve);
// noop: a run with nothing to do; plan: `pvctl plan` of v2's canary (one
// child moves); release: v2 rolled out to the whole fleet, run after run
// until Complete. PVKIT_BENCH_TARGETS sets the sizes (default 500,1000); only with
// PVKIT_BENCH_PVCTL=1 (make bench-pvctl).
func BenchmarkPvctlRelease(b *testing.B) {
	if os.Getenv("PVKIT_BENCH_PVCTL") == "" {
		b.Skip("set PVKIT_BENCH_PVCTL=1 (make bench-pvctl)")
	}
	ns := []int{500, 1000}
	if v := os.Getenv("PVKIT_BENCH_TARGETS"); v != "" {
		ns = nil
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(f); err == nil && n > 0 {
				ns = append(ns, n)
			}
		}
	}
	for _, n := range ns {
		r := newReleaseFleet(b, n)
		b.Run(fmt.Sprintf("first/%dtargets", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := r.fresh()
				b.StartTimer()
				r.run(dir)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/target")
		})
		dir := r.fresh()
		r.run(dir)
		b.Run(fmt.Sprintf("noop/%dtargets", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r.run(dir)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/target")
		})
		r.publish(dir, "nginx:1.28")
		b.Run(fmt.Sprintf("plan/%dtargets", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := local.Run(context.Background(), local.RunOptions{Repos: dir, Files: []string{r.in}, DryRun: true,
					Render: &local.Render{Runtime: &fnruntime.Runtime{}}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/plan")
		})
		b.Run(fmt.Sprintf("release/%dtargets", n), func(b *testing.B) {
			runs := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				d := r.fresh()
				r.run(d)
				r.publish(d, "nginx:1.28")
				b.StartTimer()
				for runs = 1; ; runs++ {
					r.run(d)
					if complete(b, d) || runs > 20 {
						break
					}
				}
			}
			if runs > 20 {
				b.Fatalf("the rollout did not complete in 20 runs")
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/target")
			b.ReportMetric(float64(runs), "runs")
		})
	}
}

// complete: the set's rollout, as the run left it in the state, is
// Complete at v2.
func complete(b *testing.B, dir string) bool {
	st, err := state.Read(filepath.Join(dir, state.File))
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range st.Sets {
		if r := s.Status.Rollout; r != nil && r.Phase == "Complete" && r.Target.Revision == 2 {
			return true
		}
	}
	return false
}

type releaseFleet struct {
	b         *testing.B
	in        string
	blueprint map[string]string
}

func newReleaseFleet(b *testing.B, n int) *releaseFleet {
	r := &releaseFleet{b: b, in: b.TempDir()}
	write := func(name, content string) { writeFile(b, r.in, name, content) }
	write("repos.yaml", deploymentRepositories(n, true))
	write("set.yaml", "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: app\nspec:\n"+
		"  upstream: {repo: blueprints, package: app}\n  targets:\n  - repositorySelector:\n      matchLabels: {env: prod}\n"+
		"    template:\n      annotations: {approval.nephio.org/policy: always}\n"+
		"      packageContext:\n        dataExprs:\n        - {key: cluster, valueExpr: repository.name}\n"+
		"      injectors:\n      - {kind: ConfigMap, name: us-east1-endpoints}\n"+
		"  rollout:\n    waves:\n    - name: canary\n      selector: {matchLabels: {ring: canary}}\n      size: 1\n"+
		"    - {name: early, size: 10%}\n    - {name: rest}\n")
	objs, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "examples", "local", "cluster-objects.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	write("cluster-objects.yaml", string(objs))
	r.blueprint = fntest.ReadTree(b, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	kf, _, _ := strings.Cut(r.blueprint["Kptfile"], "pipeline:")
	r.blueprint["Kptfile"] = kf + nephioPipeline
	return r
}

// fresh is a repositories directory with v1 of the blueprint.
func (r *releaseFleet) fresh() string {
	dir := filepath.Join(r.b.TempDir(), "repos")
	r.publish(dir, "nginx:1.27")
	return dir
}

func (r *releaseFleet) publish(dir, image string) {
	src := filepath.Join(r.b.TempDir(), "app")
	files := map[string]string{}
	for k, v := range r.blueprint {
		files[k] = v
	}
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: "+image, 1)
	fntest.WriteTree(r.b, src, files)
	if code := cli.Command(context.Background(), "publish", []string{"--repos", dir, "--repo", "blueprints", "--package", "app", src}, io.Discard, os.Stderr); code != 0 {
		r.b.Fatalf("publish: exit %d", code)
	}
}

func (r *releaseFleet) run(dir string) *local.Report {
	start := time.Now()
	rep, err := local.Run(context.Background(), local.RunOptions{Repos: dir, Files: []string{r.in}, Render: &local.Render{Runtime: &fnruntime.Runtime{}}})
	if err != nil {
		r.b.Fatalf("run (%s): %v", time.Since(start), err)
	}
	return rep
}
