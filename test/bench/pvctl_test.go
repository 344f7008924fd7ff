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
	benchPvctlRun(b, "pipeline:\n  mutators:\n  - image: pvkit/package-context:v0.1.0\n    configMap:\n      tier: web\n", &fnruntime.Runtime{})
}

// nephioPipeline is the pipeline of Nephio's nested packages: the variant's
// set-annotations (v0.1.4, as the catalog's nested variants prepend it), the
// blueprint's apply-replacements, set-labels v0.2 (as Nephio's
// workload-cluster variants prepend it).
const nephioPipeline = "pipeline:\n  mutators:\n" +
	"  - image: gcr.io/kpt-fn/set-annotations:v0.1.4\n    configMap:\n      nephio.org/cluster-name: edge\n" +
	"  - image: gcr.io/kpt-fn/apply-replacements:v0.1.1\n    configPath: replacements.yaml\n" +
	"  - image: gcr.io/kpt-fn/set-labels:v0.2\n    configMap:\n      nephio.org/site: edge\n      tier: web\n"

// BenchmarkPvctlRunNephioPipeline (issue 30): the same fan-out with
// Nephio's pipeline, pvkit's catalog functions in process (pvctl's default)
// against the same functions as executables (the pvkit-catalog builds,
// mapped under other names so the runtime executes them, sandboxed as every
// executable).
func BenchmarkPvctlRunNephioPipeline(b *testing.B) {
	exes, err := fnruntime.LoadExecutables(os.Getenv(fntest.CatalogEnv), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("inprocess", func(b *testing.B) { benchPvctlRun(b, nephioPipeline, &fnruntime.Runtime{}) })
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	asExecutables := map[string]string{}
	for _, image := range []string{"gcr.io/kpt-fn/set-annotations:v0.1.4", "gcr.io/kpt-fn/apply-replacements:v0.1.1", "gcr.io/kpt-fn/set-labels:v0.2"} {
		asExecutables[image] = copyExecutable(b, dir, exes[image])
	}
	b.Run("executables", func(b *testing.B) { benchPvctlRun(b, nephioPipeline, &fnruntime.Runtime{Executables: asExecutables}) })
}

// copyExecutable copies a pvkit-catalog build into dir and returns an
// executable of another name that runs it, so that the runtime executes it
// rather than running its function in process (it does so for the
// catalog's own names). The catalog executable runs the behaviour its name
// says, so the copy keeps the name, in a directory of its own, and the
// executable returned is a two-line /bin/sh script that execs it (about a
// millisecond more a call than the executable alone).
func copyExecutable(b *testing.B, dir, exe string) string {
	data, err := os.ReadFile(exe)
	if err != nil {
		b.Fatal(err)
	}
	// Run as nobody (pvctl as root runs functions so), the script reaches
	// the copy by its path: the test's temporary directories must be
	// traversable.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	real := filepath.Join(dir, "copies", filepath.Base(exe))
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(real, data, 0o755); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "exec-"+filepath.Base(exe))
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexec "+real+" \"$@\"\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchPvctlRun runs the fan-out with a blueprint pipeline and a runtime.
func benchPvctlRun(b *testing.B, pipeline string, rt *fnruntime.Runtime) {
	if os.Getenv("PVKIT_BENCH_PVCTL") == "" {
		b.Skip("set PVKIT_BENCH_PVCTL=1 (make bench-pvctl)")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("PVKIT_BENCH_TARGETS")); err == nil && v > 0 {
		n = v
	}
	in := b.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(in, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	// Deployment repositories (pvctl makes them: a Repository that is not
	// one is served only from a repository that exists), in groups of at
	// most 5,000, a set each: one set has at most 5,000 children
	// (pvsexpand.DefaultMaxChildren).
	var repos, sets strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&repos, "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: c%04d\n  labels: {env: prod, group: g%d}\nspec: {type: git, deployment: true}\n---\n", i, i/5000)
	}
	for g := 0; g*5000 < n; g++ {
		name := "app"
		if g > 0 {
			name = fmt.Sprintf("app-g%d", g)
		}
		fmt.Fprintf(&sets, "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: %s\nspec:\n"+
			"  upstream: {repo: blueprints, package: app}\n  targets:\n  - repositorySelector:\n      matchLabels: {env: prod, group: g%d}\n"+
			"    template:\n      packageContext:\n        dataExprs:\n        - {key: cluster, valueExpr: repository.name}\n"+
			"      injectors:\n      - {kind: ConfigMap, name: us-east1-endpoints}\n---\n", name, g)
	}
	write("repos.yaml", repos.String())
	write("set.yaml", sets.String())
	objs, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "examples", "local", "cluster-objects.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	write("cluster-objects.yaml", string(objs))
	run := func(dir string) {
		rep, err := local.Run(context.Background(), local.RunOptions{Repos: dir, Files: []string{in},
			Render: &local.Render{Runtime: rt}})
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range rep.Objects {
			if o.Ready != "True" {
				b.Fatalf("not ready: %+v", o)
			}
		}
	}
	// The blueprint: examples/app with the pipeline given.
	blueprint := filepath.Join(b.TempDir(), "app")
	files := fntest.ReadTree(b, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	kf, _, _ := strings.Cut(files["Kptfile"], "pipeline:")
	files["Kptfile"] = kf + pipeline
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
	if err != nil || strings.Contains(pipeline, "package-context") && !strings.Contains(res.Files["package-context.yaml"], "tier: web") {
		b.Fatalf("the draft was not rendered (%v):\n%s", err, res.Files["package-context.yaml"])
	}
	if strings.Contains(pipeline, "set-labels") && (!strings.Contains(res.Files["deployment.yaml"], "nephio.org/cluster-name: edge") ||
		!strings.Contains(res.Files["deployment.yaml"], "instance: app")) {
		b.Fatalf("the draft was not rendered by the catalog functions:\n%s", res.Files["deployment.yaml"])
	}
	b.Run(fmt.Sprintf("noop/%dtargets", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			run(dir)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/target")
	})
}
