package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"net/http"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The controller's wiring (scheme, store indexes, both reconcilers and their
// watches) is built without a cluster: only Start talks to the API server.
func TestSetup(t *testing.T) {
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		MapperProvider: func(*rest.Config, *http.Client) (apimeta.RESTMapper, error) {
			m := apimeta.NewDefaultRESTMapper(nil)
			for gvk := range scheme.AllKnownTypes() {
				m.Add(gvk, apimeta.RESTScopeNamespace)
			}
			return m, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(context.Background(), mgr); err != nil {
		t.Fatal(err)
	}
}

// The binary dispatches the local commands and passes their exit codes on.
func TestBinaryLocalCommands(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pvctl")
	if err := fntest.GoBuild(fntest.RepoRoot(), bin, "./orchestrator/cmd/pvctl"); err != nil {
		t.Fatal(err)
	}
	repos := filepath.Join(dir, "repos")
	pvctl := func(args ...string) (int, string) {
		cmd := exec.Command(bin, append(args, "--repos", repos)...)
		cmd.Dir = fntest.RepoRoot()
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
		{[]string{"run", "-f", "examples/local"}, 1, "upstream package revision not found: package \"app\" in repository \"blueprints\""},
		{[]string{"publish", "--repo", "blueprints", "--package", "app", "examples/app"}, 0, "published blueprints.app.v1"},
		{[]string{"run", "-f", "examples/local"}, 0, "created draft edge-useast1.app.packagevariant-1 (clone of blueprints.app.v1)"},
		{[]string{"run", "-f", "examples/local"}, 0, "No changes"},
		{[]string{"get"}, 0, "edge-uswest1.app.packagevariant-1"},
		{[]string{"run", "-f", "examples/local", "-o", "bad"}, 2, "-o must be table or yaml"},
	} {
		code, out := pvctl(c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("pvctl %v: exit %d, want %d and %q in:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}
