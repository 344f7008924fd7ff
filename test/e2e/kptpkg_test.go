package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// Issue 29 #4: a draft pvctl made is a kpt package kpt itself can diff
// against and update from its upstream, as a draft Porch made is: the
// Kptfile names the upstream by the git URL of the local repository, with
// the ref and the commit.
func TestPulledDraftIsAKptPackage(t *testing.T) {
	needKpt(t)
	dir := t.TempDir()
	repos, work := filepath.Join(dir, "repos"), filepath.Join(dir, "work")
	blueprint := filepath.Join(repoRoot, "examples", "app")
	pvctl(t, 0, repos, "publish", "--repo", "blueprints", "--package", "app", blueprint)
	pvctl(t, 0, repos, "run", "-f", filepath.Join(repoRoot, "examples", "local"))
	pvctl(t, 0, repos, "pull", "edge-useast1.app.packagevariant-1", filepath.Join(work, "app"))
	run := func(dir, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	run(work, "git", "init", "-q")
	run(work, "git", "add", "-A")
	run(work, "git", "commit", "-qm", "the pulled draft")

	// kpt pkg diff fetches the upstream the lock names: the variant's
	// specialisation is the difference.
	if out := run(work, kptPath, "pkg", "diff", "app"); !strings.Contains(out, "region: us-east1") || !strings.Contains(out, "namespace: app-edge") {
		t.Fatalf("kpt pkg diff shows no specialisation:\n%s", out)
	}

	// kpt pkg update to a new upstream revision: the upstream's change comes
	// in, the variant's own changes stay, the lock moves.
	v2 := fntest.ReadTree(t, blueprint)
	v2["deployment.yaml"] = strings.Replace(v2["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	if v2["deployment.yaml"] == fntest.ReadTree(t, blueprint)["deployment.yaml"] {
		t.Fatal("the blueprint has no nginx:1.27: the update tests nothing")
	}
	src := filepath.Join(dir, "app-v2")
	fntest.WriteTree(t, src, v2)
	pvctl(t, 0, repos, "publish", "--repo", "blueprints", "--package", "app", src)
	run(work, kptPath, "pkg", "update", "app@app/v2")
	got := fntest.ReadTree(t, filepath.Join(work, "app"))
	if d := got["deployment.yaml"]; !strings.Contains(d, "image: nginx:1.28") || !strings.Contains(d, "namespace: app-edge") {
		t.Fatalf("after kpt pkg update:\n%s", d)
	}
	if k := got["Kptfile"]; !strings.Contains(k, "ref: app/v2") || !strings.Contains(k, "commit: ") {
		t.Fatalf("the lock did not move:\n%s", k)
	}
}
