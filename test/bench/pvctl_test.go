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

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/cli"
	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	"github.com/pvkit/pvkit/orchestrator/local"
)

// BenchmarkPvctlRun: pvctl run on a set fanned out to N repositories (N
// targets, each cloned, given a package context, injected, and rendered:
// the blueprint's own pipeline runs pvkit's package-context, in process,
// on the clone and on each write), the first run and a no-op re-run, on
// local git repositories. It takes a minute at N=1000, so it runs only
// with PVKIT_BENCH_PVCTL=1 (make bench-pvctl); PVKIT_BENCH_TARGETS sets N
// (default 1000).
func BenchmarkPvctlRun(b *testing.B) {
	if os.Getenv("PVKIT_BENCH_PVCTL") == "" {
		b.Skip("set PVKIT_BENCH_PVCTL=1 (make bench-pvctl)")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("PVKIT_BENCH_TARGETS")); err == nil && v > 0 {
		n = v
	}
	in := b.TempDir()
	var repos strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&repos, "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: c%04d\n  labels: {env: prod}\n---\n", i)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(in, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("repos.yaml", repos.String())
	write("set.yaml", "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: app\nspec:\n"+
		"  upstream: {repo: blueprints, package: app}\n  targets:\n  - repositorySelector:\n      matchLabels: {env: prod}\n"+
		"    template:\n      packageContext:\n        dataExprs:\n        - {key: cluster, valueExpr: repository.name}\n"+
		"      injectors:\n      - {kind: ConfigMap, name: us-east1-endpoints}\n")
	objs, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "examples", "local", "cluster-objects.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	write("cluster-objects.yaml", string(objs))
	run := func(dir string) {
		rep, err := local.Run(context.Background(), local.RunOptions{Repos: dir, Files: []string{in},
			Render: &local.Render{Runtime: &fnruntime.Runtime{}}})
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range rep.Objects {
			if o.Ready != "True" {
				b.Fatalf("not ready: %+v", o)
			}
		}
	}
	// The blueprint: examples/app with a pipeline of pvkit's own function,
	// which renders in process.
	blueprint := filepath.Join(b.TempDir(), "app")
	files := fntest.ReadTree(b, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	kf, _, _ := strings.Cut(files["Kptfile"], "pipeline:")
	files["Kptfile"] = kf + "pipeline:\n  mutators:\n  - image: pvkit/package-context:v0.1.0\n    configMap:\n      tier: web\n"
	fntest.WriteTree(b, blueprint, files)
	fresh := func() string {
		dir := filepath.Join(b.TempDir(), "repos")
		if code := cli.Command(context.Background(), "publish", []string{"--repos", dir, "--repo", "blueprints", "--package", "app",
			blueprint}, io.Discard, os.Stderr); code != 0 {
			b.Fatalf("publish: exit %d", code)
		}
		return dir
	}
	b.Run(fmt.Sprintf("first/%dtargets", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			dir := fresh()
			b.StartTimer()
			run(dir)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/target")
	})
	dir := fresh()
	run(dir)
	gs, err := local.OpenRepos(dir, "default", false)
	if err != nil {
		b.Fatal(err)
	}
	res, err := gs.GetResources(context.Background(), "default", "c0000.app.packagevariant-1")
	if err != nil || !strings.Contains(res.Files["package-context.yaml"], "tier: web") {
		b.Fatalf("the draft was not rendered (%v):\n%s", err, res.Files["package-context.yaml"])
	}
	b.Run(fmt.Sprintf("noop/%dtargets", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(dir)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/target")
	})
}
