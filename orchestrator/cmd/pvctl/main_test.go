package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit"
	"github.com/pvkit/pvkit/internal/fntest"
)

// The binary dispatches the local commands and passes their exit codes on.
func TestBinaryLocalCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs the pvctl binary (10 s)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "pvctl")
	if err := fntest.GoBuild(fntest.RepoRoot(), bin, "./orchestrator/cmd/pvctl"); err != nil {
		t.Fatal(err)
	}
	repos := filepath.Join(dir, "repos")
	pvctl := func(args ...string) (int, string) {
		if args[0] != "controller" {
			args = append(args, "--repos", repos)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = fntest.RepoRoot()
		// No kubeconfig anywhere and no in-cluster credentials.
		cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECONFIG=", "KUBERNETES_SERVICE_HOST=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode(), string(out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "-f", "examples/local"}, 2, "examples/local/repositories.yaml: Repository \"blueprints\": its bare repository "},
		{[]string{"publish", "--repo", "blueprints", "--package", "app", "examples/app"}, 0, "published blueprints.app.v1"},
		{[]string{"run", "-f", "examples/local"}, 0, "created draft edge-useast1.app.packagevariant-1 (clone of blueprints.app.v1)"},
		{[]string{"run", "-f", "examples/local"}, 0, "No changes"},
		{[]string{"get"}, 0, "edge-uswest1.app.packagevariant-1"},
		{[]string{"run", "-f", "examples/local", "-o", "bad"}, 2, "-o must be table, wide, name, json, yaml"},
		{[]string{"controller", "--help"}, 0, "--kubeconfig"},
		{[]string{"controller", "--kubeconfig", filepath.Join(dir, "nope"), "--metrics-bind-address", "0"}, 1, "pvctl controller: loading the kubeconfig:"},
		{[]string{"controller", "--bogus"}, 2, "pvctl controller: unknown flag: --bogus\nRun 'pvctl controller --help' for the flags."},
		{[]string{"controller", "--version"}, 0, pvkit.Version() + "\n"}, // a go build: VERSION with -dev
		// Issue 62 #7: the commit too ("unknown" in a plain go build; make stamps it).
		{[]string{"version"}, 0, pvkit.Version() + " (commit unknown)\n"},
		// Issue 22 #4: no cluster to talk to is an error, not a stack trace.
		{[]string{"controller", "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, 1, "pvctl controller: "},
	} {
		code, out := pvctl(c.args...)
		if strings.Contains(out, `"stacktrace":`) || strings.Contains(out, "goroutine ") {
			t.Errorf("pvctl %v printed a stack trace:\n%s", c.args, out)
		}
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("pvctl %v: exit %d, want %d and %q in:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}
