package porch

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/cli"
)

// Issue 21 (rule: porch-clone-shape): a draft pvctl makes on local git
// repositories holds what the draft Porch v1.5.3 makes for the same
// variant holds, byte for byte (the Kptfile aside: Porch rewrites it in its
// own format and names the upstream by its git URL): the package context
// Porch generates (name, package-path), each resource's merge key, the
// variant's mutation.
func TestLocalCloneMatchesPorch(t *testing.T) {
	e := newEnv(t, "shape")
	blueprint := map[string]string{
		"Kptfile":              "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\n",
		"package-context.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  name: app\n  dropped: on-clone\n",
		"resources.yaml": "# two documents\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings # the app's\ndata:\n  color: blue\n---\n" +
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n  labels:\n    app: web\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n",
		"README.md": "# app\n",
	}
	variant := "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: shape\nspec:\n" +
		"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: deploy, package: shape}\n  packageContext:\n    data: {env: prod}\n"
	e.upstream(blueprint)
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(variant)
	var name string
	e.eventually(converge, "the variant's draft, Ready", func() (bool, string) {
		owned := e.owned("deploy", "shape")
		if len(owned) != 1 {
			return false, "no draft yet"
		}
		name = owned[0].Name
		return e.ready("shape")
	})
	byPorch := e.resources(name)

	dir := t.TempDir()
	repos, pkg, in, out := filepath.Join(dir, "repos"), filepath.Join(dir, "app"), filepath.Join(dir, "in"), filepath.Join(dir, "pulled")
	fntest.WriteTree(t, pkg, blueprint)
	fntest.WriteTree(t, in, map[string]string{"variant.yaml": variant,
		"repo.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: deploy\n"})
	pvctl := func(name string, args ...string) {
		t.Helper()
		var o, errb bytes.Buffer
		if code := cli.Command(context.Background(), name, append([]string{"--repos", repos}, args...), &o, &errb); code != 0 {
			t.Fatalf("pvctl %s %v: exit %d\n%s\n%s", name, args, code, o.String(), errb.String())
		}
	}
	pvctl("publish", "--repo", "blueprints", "--package", "app", pkg)
	pvctl("run", "-f", in)
	pvctl("pull", "deploy.shape.packagevariant-1", out)
	local := fntest.ReadTree(t, out)
	delete(byPorch, "Kptfile")
	delete(local, "Kptfile")
	if diff := cmp.Diff(byPorch, local); diff != "" {
		t.Fatalf("pvctl's draft differs from Porch's (-Porch +pvctl):\n%s", diff)
	}
}
