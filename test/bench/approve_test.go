package bench

import (
	"bytes"
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
)

// BenchmarkPvctlApprove (issue 43 #4): a person approving N drafts
// locally, three ways: `pvctl approve` of one draft (the start-up every
// approval pays), `pvctl approve` of all N at once, and the wave's one
// decision, `pvctl rollout approve` then `pvctl run`. N targets of a set
// whose rollout has one wave take v2 (PVKIT_BENCH_APPROVE, default 448:
// the fleet the issue timed at 9 min 16 s). Only with PVKIT_BENCH_PVCTL=1
// (make bench-pvctl): it builds two fleets of N first.
func BenchmarkPvctlApprove(b *testing.B) {
	if os.Getenv("PVKIT_BENCH_PVCTL") == "" {
		b.Skip("set PVKIT_BENCH_PVCTL=1 (make bench-pvctl)")
	}
	n := 448
	if v, err := strconv.Atoi(os.Getenv("PVKIT_BENCH_APPROVE")); err == nil && v > 0 {
		n = v
	}
	b.Run(fmt.Sprintf("each/%ddrafts", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			f := newApproveFleet(b, n)
			b.StartTimer()
			start := time.Now()
			f.cmd("approve", f.drafts[0])
			one := time.Since(start)
			f.cmd(append([]string{"approve"}, f.drafts[1:]...)...)
			b.ReportMetric(float64(one.Milliseconds()), "ms/one")
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/draft")
	})
	b.Run(fmt.Sprintf("wave/%ddrafts", n), func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			f := newApproveFleet(b, n)
			b.StartTimer()
			f.cmd("rollout", "approve", "app")
			f.cmd("run", "-f", f.in)
			b.StopTimer()
			if d := f.listDrafts(); len(d) != 0 {
				b.Fatalf("%d drafts left after the wave's approval", len(d))
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(n), "ms/draft")
	})
}

type approveFleet struct {
	b         *testing.B
	in, repos string
	drafts    []string
}

func (f *approveFleet) cmd(args ...string) string {
	f.b.Helper()
	var out, errs bytes.Buffer
	if code := cli.Command(context.Background(), args[0], append(args[1:], "--repos", f.repos), &out, &errs); code != 0 {
		f.b.Fatalf("pvctl %s: exit %d: %s", args[0], code, errs.String())
	}
	return out.String()
}

func (f *approveFleet) listDrafts() []string {
	var out []string
	for _, l := range strings.Split(f.cmd("get"), "\n") {
		if fs := strings.Fields(l); len(fs) >= 6 && fs[5] == "Draft" {
			out = append(out, fs[0])
		}
	}
	return out
}

// newApproveFleet: v1 published in n repositories (approved), then v2
// published and run: n drafts of the one wave wait for a person.
func newApproveFleet(b *testing.B, n int) *approveFleet {
	f := &approveFleet{b: b, in: b.TempDir(), repos: filepath.Join(b.TempDir(), "repos")}
	write := func(name, content string) { writeFile(b, f.in, name, content) }
	write("repos.yaml", deploymentRepositories(n, false))
	write("set.yaml", "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: app\nspec:\n"+
		"  upstream: {repo: blueprints, package: app}\n  targets:\n  - repositorySelector:\n      matchLabels: {env: prod}\n"+
		"    template:\n      injectors:\n      - {kind: ConfigMap, name: us-east1-endpoints}\n      - {group: example.com, kind: Team, name: web-team}\n"+
		"  rollout:\n    waves:\n    - name: all\n")
	objs, err := os.ReadFile(filepath.Join(fntest.RepoRoot(), "examples", "rollout", "cluster-objects.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	write("cluster-objects.yaml", string(objs))
	publish := func(image string) {
		dir := filepath.Join(b.TempDir(), "app")
		files := fntest.ReadTree(b, filepath.Join(fntest.RepoRoot(), "examples", "app"))
		files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "image: nginx:1.27", "image: "+image, 1)
		fntest.WriteTree(b, dir, files)
		if code := cli.Command(context.Background(), "publish", []string{"--repos", f.repos, "--repo", "blueprints", "--package", "app", dir}, io.Discard, os.Stderr); code != 0 {
			b.Fatalf("publish: exit %d", code)
		}
	}
	publish("nginx:1.27")
	f.cmd("run", "-f", f.in)
	f.cmd(append([]string{"approve"}, f.listDrafts()...)...)
	publish("nginx:1.28")
	f.cmd("run", "-f", f.in)
	f.drafts = f.listDrafts()
	if len(f.drafts) != n {
		b.Fatalf("%d drafts of v2, want %d", len(f.drafts), n)
	}
	return f
}

// deploymentRepositories is n deployment Repositories, c0000 on, labelled
// env: prod (the first ring: canary too, with canary), as one YAML file.
func deploymentRepositories(n int, canary bool) string {
	var repos strings.Builder
	for i := 0; i < n; i++ {
		ring := ""
		if canary && i == 0 {
			ring = ", ring: canary"
		}
		fmt.Fprintf(&repos, "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: c%04d\n  labels: {env: prod%s}\nspec: {type: git, deployment: true}\n---\n", i, ring)
	}
	return repos.String()
}

func writeFile(b *testing.B, dir, name, content string) {
	b.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}
