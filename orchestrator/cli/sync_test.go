package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// bundle is a package whose objects --sync applies: a nested variant, a
// ConfigMap, and what ConfigSync would not apply here (local config, an
// object of another namespace, a Repository).
func bundle(withVariant bool) map[string]string {
	files := map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bundle\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"objects.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: synced-settings
data:
  color: blue
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-only
  annotations:
    config.kubernetes.io/local-config: "true"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: other
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: us-east1-endpoints
data:
  db: from-the-package
---
apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: packaged-repo
`,
	}
	if withVariant {
		files["variant.yaml"] = "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: from-sync\nspec:\n" +
			"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: core-euwest1, package: from-sync}\n" +
			"  injectors:\n  - kind: ConfigMap\n    name: eu-west1-endpoints\n"
	}
	return files
}

// Issue 21 #2: pvctl run --sync REPO applies the published packages of
// REPO to the embedded cluster as ConfigSync would; the variants they nest
// are reconciled in the same run, the files win over a package, what
// ConfigSync would not apply is not, and what a package no longer holds is
// removed with --prune only.
func TestSync(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, pkg, bundle(true))
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", pkg)
	_, out, errs := w.cmd("run", "-f", w.in, "--sync", "apps")
	contains(t, out, "created PackageVariant from-sync", "created draft core-euwest1.from-sync.packagevariant-1",
		"synced ConfigMap synced-settings from apps/bundle@v1",
		"from-sync             True   NoErrors")
	contains(t, errs,
		"warning: --sync: ConfigMap us-east1-endpoints of apps/bundle@v1 is not applied: the files give an object of that name",
		`warning: --sync: apps/bundle@v1: ConfigMap elsewhere is in namespace "other", not the run's "default": not applied`,
		"warning: --sync: apps/bundle@v1: Repository packaged-repo is not applied: pvctl serves the repositories the files give (-f)")
	if strings.Contains(out, "local-only") {
		t.Fatalf("local config was synced:\n%s", out)
	}
	// The files' endpoints won: the draft injected theirs.
	contains(t, w.files("edge-useast1.app.packagevariant-1")["endpoints.yaml"], "db.us-east1.internal:5432")
	contains(t, w.mustCmd(ExitOK, "run", "-f", w.in, "--sync", "apps"), "No changes: every downstream package is up to date.")

	// The package's next revision no longer holds the variant: removed with
	// --prune only, as every removal.
	v2 := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, v2, bundle(false))
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", v2)
	out = w.mustCmd(ExitChanges, "run", "-f", w.in, "--sync", "apps")
	contains(t, out, "Not removed (1): run again with --prune to remove them:\n  PackageVariant from-sync\n")
	out = w.mustCmd(ExitOK, "run", "-f", w.in, "--sync", "apps", "--prune")
	contains(t, out, "deleted PackageVariant from-sync", "deleted core-euwest1.from-sync.packagevariant-1")
	// Without --sync, what was synced stays as it is.
	contains(t, w.mustCmd(ExitOK, "run", "-f", w.in), "No changes: every downstream package is up to date.")
}
