package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

func writeFile(name, content string) func(t *testing.T, pkgDir string) {
	return func(t *testing.T, pkgDir string) {
		if err := os.WriteFile(filepath.Join(pkgDir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func removeFile(name string) func(t *testing.T, pkgDir string) {
	return func(t *testing.T, pkgDir string) {
		if err := os.Remove(filepath.Join(pkgDir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

var cases = []kptCase{
	{name: "eval-package-context-packagevariant", pkg: "examples/app",
		runs: [][]string{{"fn", "eval", "--exec", "bin/package-context", "--fn-config", "examples/app-prod.yaml", "{pkg}"}}},
	{name: "eval-package-context-key-values", pkg: "examples/app",
		runs: [][]string{{"fn", "eval", "--exec", "bin/package-context", "{pkg}", "--", "env=prod", "tier=gold"}}},
	{name: "eval-package-context-pvkit-kind", pkg: "examples/app",
		runs: [][]string{{"fn", "eval", "--exec", "bin/package-context", "--fn-config", "examples/app-context.yaml", "{pkg}"}}},
	{name: "eval-pipeline-prepend-packagevariant", pkg: "examples/app",
		runs: [][]string{{"fn", "eval", "--exec", "bin/pipeline-prepend", "--fn-config", "examples/app-prod.yaml", "{pkg}"}}},
	{name: "eval-pipeline-prepend-pvkit-kind", pkg: "examples/app",
		runs: [][]string{{"fn", "eval", "--exec", "bin/pipeline-prepend", "--fn-config", "examples/platform-defaults.yaml", "{pkg}"}}},
	{name: "eval-both-functions", pkg: "examples/app",
		runs: [][]string{
			{"fn", "eval", "--exec", "bin/package-context", "--fn-config", "examples/app-prod.yaml", "{pkg}"},
			{"fn", "eval", "--exec", "bin/pipeline-prepend", "--fn-config", "examples/app-prod.yaml", "{pkg}"},
		}},
	{name: "eval-config-inject", pkg: "examples/app",
		runs: [][]string{{"fn", "eval", "--exec", "bin/config-inject", "--fn-config", "examples/app-prod-injection.yaml", "{pkg}"}}},
	{name: "eval-all-three-functions", pkg: "examples/app",
		runs: [][]string{
			{"fn", "eval", "--exec", "bin/package-context", "--fn-config", "examples/app-prod.yaml", "{pkg}"},
			{"fn", "eval", "--exec", "bin/pipeline-prepend", "--fn-config", "examples/app-prod.yaml", "{pkg}"},
			{"fn", "eval", "--exec", "bin/config-inject", "--fn-config", "examples/app-prod-injection.yaml", "{pkg}"},
		}},
	{name: "eval-pvs-expand", pkg: "examples/fleet",
		runs: [][]string{{"fn", "eval", "--exec", "bin/pvs-expand", "--fn-config", "examples/fleet-set.yaml", "{pkg}"}}},
	// The first render prepends the variant's function; the second runs it.
	{name: "render-pipeline", pkg: "examples/render/app",
		runs: [][]string{{"fn", "render", "{pkg}", "--allow-exec"}, {"fn", "render", "{pkg}", "--allow-exec"}}},

	{name: "error-reserved-key", pkg: "examples/app", fail: true,
		runs: [][]string{{"fn", "eval", "--exec", "bin/package-context", "--fn-config", "{configs}/reserved-key.yaml", "{pkg}"}}},
	{name: "error-reserved-key-from-arguments", pkg: "examples/app", fail: true,
		runs: [][]string{{"fn", "eval", "--exec", "bin/package-context", "{pkg}", "--", "name=renamed"}}},
	{name: "error-unknown-config-kind", pkg: "examples/app", fail: true,
		runs: [][]string{{"fn", "eval", "--exec", "bin/pipeline-prepend", "--fn-config", "{configs}/secret.yaml", "{pkg}"}}},
	{name: "error-missing-config", pkg: "examples/app", fail: true,
		runs: [][]string{{"fn", "eval", "--exec", "bin/pipeline-prepend", "{pkg}"}}},
	{name: "error-missing-package-context", pkg: "examples/app", fail: true, setup: removeFile("package-context.yaml"),
		runs: [][]string{{"fn", "eval", "--exec", "bin/package-context", "{pkg}", "--", "env=prod"}}},
	{name: "error-wrong-package-context", pkg: "examples/app", fail: true,
		setup: writeFile("package-context.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\ndata:\n  name: app\n  limits:\n    cpu: \"1\"\n"),
		runs:  [][]string{{"fn", "eval", "--exec", "bin/package-context", "{pkg}", "--", "env=prod"}}},
	{name: "error-malformed-package-file", pkg: "examples/app", fail: true,
		setup: writeFile("broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [broken\n"),
		runs:  [][]string{{"fn", "eval", "--exec", "bin/package-context", "{pkg}", "--", "env=prod"}}},
	{name: "error-config-inject-invalid-point", pkg: "examples/app", fail: true,
		setup: writeFile("team.yaml", "apiVersion: example.com/v1\nkind: Team\nmetadata:\n  name: owner\n  annotations:\n    kpt.dev/config-injection: always\nspec: {}\n"),
		runs:  [][]string{{"fn", "eval", "--exec", "bin/config-inject", "--fn-config", "examples/app-prod-injection.yaml", "{pkg}"}}},
	{name: "error-pvs-expand-bad-expression", pkg: "examples/fleet", fail: true,
		runs: [][]string{{"fn", "eval", "--exec", "bin/pvs-expand", "--fn-config", "{configs}/bad-set.yaml", "{pkg}"}}},
	{name: "error-render-bad-variant", pkg: "examples/render/app", fail: true,
		setup: writeFile("variant.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\nspec:\n  packageContext:\n    data:\n      package-path: x\n"),
		runs:  [][]string{{"fn", "render", "{pkg}", "--allow-exec"}}},
}

func TestKpt(t *testing.T) {
	needKpt(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}
