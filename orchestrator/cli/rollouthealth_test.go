package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	pvv1 "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	pvs "github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// edgeKustomization is a Flux Kustomization on edge cluster cluster, in
// flux-system, that applied revision (Flux's "main@sha1:<commit>").
func edgeKustomization(cluster, applied string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
  annotations: {pvkit.dev/cluster: ` + cluster + `}
status:
  lastAppliedRevision: ` + applied + `
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + applied + `"}
`
}

// gitRef is the commit a ref of a local repository points at.
func (w *ws) gitRef(repo, ref string) string {
	w.t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(w.repos, "*", repo+".git"))
	dirs2, _ := filepath.Glob(filepath.Join(w.repos, repo+".git"))
	dirs = append(dirs, dirs2...)
	if len(dirs) != 1 {
		w.t.Fatalf("repository %s: %v", repo, dirs)
	}
	out, err := exec.Command("git", "--git-dir", dirs[0], "rev-parse", ref+"^{commit}").Output()
	if err != nil {
		w.t.Fatalf("git rev-parse %s in %s: %v", ref, repo, err)
	}
	return strings.TrimSpace(string(out))
}

// Issue 58 #2 and its acceptance: a Kustomization that follows the
// branch (Nephio's Flux: "main@sha1:<commit>"), read on the edge cluster
// from a file annotated pvkit.dev/cluster, completes a wave. At an older
// commit the canary waits, its health naming the object where it is and
// Flux's words; at the commit that published the canary's revision it is
// healthy; after another package's publish moved the branch on, the
// branch's head holds the revision too (revision.commits), so an agent
// at the head is healthy as well.
func TestBranchTrackingKustomizationCompletesAWave(t *testing.T) {
	w := rolloutWS(t)
	w.rolloutSpec(`    health:
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      clusterExpr: downstream.repo
      namespace: flux-system
      nameExpr: downstream.package
      condition: >-
        has(object.status.lastAppliedRevision) &&
        revision.commits.exists(c, object.status.lastAppliedRevision == revision.branch + "@sha1:" + c)
`)
	old := w.gitRef("fleet-07", "main")
	w.write("edge.yaml", edgeKustomization("fleet-07", "main@sha1:"+old))
	w.canaryPublishedAtV2()
	published := w.gitRef("fleet-07", "refs/tags/app/v2")
	if head := w.gitRef("fleet-07", "main"); head != published {
		t.Fatalf("the branch's head %s is not the commit that published app/v2 (%s)", head, published)
	}
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		"health: False NotHealthy: cluster fleet-07: Kustomization flux-system/app does not report fleet-07.app.packagevariant-2: ReconciliationSucceeded: Applied revision: main@sha1:"+old)
	if d := w.drafts(); len(d) != 0 {
		t.Fatalf("wave early opened while the canary's cluster runs the old commit: %v", d)
	}
	// Another package is published on fleet-07's branch: the head moves
	// on, the package app there unchanged.
	other := filepath.Join(t.TempDir(), "other")
	fntest.WriteTree(t, other, fntest.ReadTree(t, filepath.Join(fntest.RepoRoot(), "examples", "app")))
	w.mustCmd(ExitOK, "publish", "--repo", "fleet-07", "--package", "other", other)
	head := w.gitRef("fleet-07", "main")
	if head == published {
		t.Fatal("publishing another package did not move the branch")
	}
	// Flux applied the head: it holds app/v2.
	w.write("edge.yaml", edgeKustomization("fleet-07", "main@sha1:"+head))
	w.run(ExitOK)
	w.run(ExitOK)
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		"health: True Healthy: cluster fleet-07: Kustomization flux-system/app reports fleet-07.app.packagevariant-2")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "wave canary       Complete", "wave early        Open")
}

// Issue 58 #3 and its acceptance: a HelmRelease that failed on the
// canary's cluster fails the canary at once, and its own message (Helm's
// words, not pvkit's CEL) is in the rollout's failure and in `pvctl
// rollout status -o wide`; a cluster pvctl is given no objects of reads
// KubeconfigUnavailable, saying how to give it.
func TestFailedHelmReleaseWordsInRolloutStatusWide(t *testing.T) {
	w := rolloutWS(t)
	w.rolloutSpec(`    progressDeadlineSeconds: 3600
    health:
      apiVersion: helm.toolkit.fluxcd.io/v2
      kind: HelmRelease
      clusterExpr: downstream.repo
      namespace: flux-system
      nameExpr: downstream.package
      condition: >-
        object.status.lastAttemptedGeneration == object.metadata.generation &&
        object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")
      failed: >-
        object.status.lastAttemptedGeneration == object.metadata.generation &&
        object.status.conditions.exists(c, c.type == "Ready" && c.status == "False" && c.reason in ["InstallFailed", "UpgradeFailed"])
`)
	// Another cluster's HelmRelease only: the kind is readable (a file
	// gives it), fleet-07 has no objects.
	w.write("edge.yaml", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\n  namespace: flux-system\n  annotations: {pvkit.dev/cluster: fleet-00}\n")
	w.canaryPublishedAtV2()
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		"health: Unknown KubeconfigUnavailable: cannot read cluster fleet-07: HelmRelease flux-system/app: pvctl has no objects of cluster fleet-07: give them in files annotated pvkit.dev/cluster: fleet-07, or name a kubeconfig context with --cluster fleet-07=CONTEXT")
	// A cluster named by a context the kubeconfig does not have: a usage
	// error before anything runs, naming the contexts it has.
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte("apiVersion: v1\nkind: Config\ncontexts:\n- name: edge-08\n  context: {cluster: c1, user: u1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kc)
	if code, _, errs := w.cmd("run", "-f", w.in, "--cluster", "fleet-07=edge-07"); code != ExitUsage ||
		!strings.Contains(errs, `--cluster fleet-07=edge-07: the kubeconfig has no context "edge-07" (it has: edge-08)`) {
		t.Fatalf("a missing context: exit %d: %s", code, errs)
	}
	const words = "Helm upgrade failed for release flux-system/app with chart podinfo@6.6.0: context deadline exceeded"
	w.write("edge.yaml", `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: flux-system
  generation: 3
  annotations: {pvkit.dev/cluster: fleet-07}
status:
  lastAttemptedGeneration: 3
  conditions:
  - {type: Ready, status: "False", reason: UpgradeFailed, message: "`+words+`"}
`)
	out := w.run(ExitStalled)
	contains(t, out, "app-fleet-07-app: fleet-07.app.packagevariant-2 failed on the cluster: UpgradeFailed: "+words+" (HealthFailed, cluster fleet-07: HelmRelease flux-system/app)")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "wide"),
		"health (as each cluster reports it; the waves under way first, then the failed, then the others not healthy):",
		"app-fleet-07-app fleet-07.app.packagevariant-2: False HealthFailed (cluster fleet-07: HelmRelease flux-system/app): UpgradeFailed: "+words)
	code, _, errs := w.cmd("rollout", "status", "app", "-o", "tall")
	if code != ExitUsage || !strings.Contains(errs, `-o must be wide, json or yaml, not "tall"`) {
		t.Fatalf("-o tall: exit %d: %s", code, errs)
	}
	code, _, errs = w.cmd("run", "-f", w.in, "--cluster", "fleet-07")
	if code != ExitUsage || !strings.Contains(errs, `--cluster "fleet-07": want NAME=CONTEXT`) {
		t.Fatalf("--cluster without a context: exit %d: %s", code, errs)
	}
}

// canaryPublishedAtV2 runs, publishes v2 and approves the canary's draft
// (the only one), and runs again: the canary is published at v2.
func (w *ws) canaryPublishedAtV2() {
	w.t.Helper()
	w.run(ExitOK)
	w.publishV2()
	w.run(ExitOK)
	if d := w.approveDrafts(); len(d) != 1 {
		w.t.Fatalf("the canary's draft: %v", d)
	}
	w.run(ExitOK)
}

// rollout status -o wide at 200 children during the canary: the canary's
// line first, the others not healthy after it, and one line counting the
// 197 healthy ones (it printed a line for every child, the canary not
// first); --all prints every line, in the same order.
func TestRolloutStatusWideShowsWhatMattersFirst(t *testing.T) {
	set := &pvsapi.PackageVariantSet{}
	set.Name = "app"
	set.Status.Rollout = &pvs.RolloutStatus{Target: pvs.RevisionRef{Name: "blueprints.app.v2"}, From: &pvs.RevisionRef{Name: "blueprints.app.v1"},
		Waves: []pvs.WaveStatus{{Name: "canary", State: pvs.WaveOpen, Members: []string{"c-150"}}, {Name: "rest", State: pvs.WavePending}}}
	var children []pvv1.PackageVariant
	for i := 0; i < 200; i++ {
		v := pvv1.PackageVariant{}
		v.Name = fmt.Sprintf("c-%03d", i)
		h := &pvv1.TargetHealth{Status: "True", Reason: "Healthy", Object: "Kustomization flux-system/app", Message: "applied"}
		switch i {
		case 150:
			h.Status, h.Reason, h.Message = "Unknown", "NotHealthy", "reconciling v2"
		case 20, 99:
			h.Status, h.Reason, h.Message = "False", "HealthFailed", "drifted"
		}
		v.Status.DownstreamTargets = []pvv1.DownstreamTarget{{Name: v.Name + ".app.v1", Health: h}}
		children = append(children, v)
	}
	var b strings.Builder
	printHealth(&b, set, children, false)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[1], "    c-150 ") || !strings.HasPrefix(lines[2], "    c-020 ") || !strings.HasPrefix(lines[3], "    c-099 ") ||
		lines[4] != "    and 197 other targets healthy, outside the waves under way (--all lists them)" {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	b.Reset()
	printHealth(&b, set, children, true)
	lines = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 201 || !strings.HasPrefix(lines[1], "    c-150 ") || !strings.HasPrefix(lines[4], "    c-000 ") {
		t.Fatalf("--all: %d lines, the first %q", len(lines), lines[:5])
	}
}
