package local

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
)

// nephioRegistration is a Repository per catalog directory, as Nephio's
// install registers them (one git URL, spec.git.directory each), and a
// deployment repository.
const nephioRegistration = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: catalog-infra-capi
spec:
  type: git
  git:
    repo: https://github.com/nephio-project/catalog.git
    branch: main
    directory: /infra/capi
---
apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: catalog-workloads-free5gc
spec:
  type: git
  git:
    repo: https://github.com/nephio-project/catalog.git
    directory: /workloads/free5gc
---
apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: edge01
spec:
  type: git
  deployment: true
`

// Issue 29 #1: pvctl run serves a catalog registered per directory as
// Porch does: one bare clone (<repos>/catalog.git, the URL's last element),
// packages named relative to the directory, variants that name them so
// (package: kindnet), revision -1 and a published revision; the bare
// repository is not served a second time under its own name.
func TestCatalogRegisteredPerDirectory(t *testing.T) {
	repos, in := filepath.Join(t.TempDir(), "repos"), filepath.Join(t.TempDir(), "in")
	catalog := filepath.Join(repos, "catalog.git")
	if err := gitstore.Init(catalog, ""); err != nil {
		t.Fatal(err)
	}
	gs, err := gitstore.Open("default", []gitstore.Repository{{Name: "capi", GitDir: catalog, Directory: "infra/capi"}})
	if err != nil {
		t.Fatal(err)
	}
	kindnet := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: kindnet\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kindnet\ndata:\n  a: b\n"}
	if _, err := gs.PublishFiles("default", "capi", "kindnet", kindnet); err != nil {
		t.Fatal(err)
	}
	variant := func(name, upstream string) string {
		return "---\napiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: " + name + "\nspec:\n" +
			"  upstream: {repo: catalog-infra-capi, package: kindnet" + upstream + "}\n  downstream: {repo: edge01, package: " + name + "}\n"
	}
	fntest.WriteTree(t, in, map[string]string{"all.yaml": nephioRegistration + variant("kindnet-v1", ", revision: 1") + variant("kindnet-main", ", revision: -1")})
	rep, err := Run(context.Background(), RunOptions{Repos: repos, Files: []string{in}, Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range rep.Objects {
		if o.Ready != "True" {
			t.Errorf("%s %s: %s %s", o.Kind, o.Name, o.Reason, o.Message)
		}
	}
	var served []string
	all, err := gitstore.Discover(repos)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		served = append(served, r.Name)
	}
	sort.Strings(served)
	if d := cmp.Diff([]string{"catalog", "edge01"}, served); d != "" {
		t.Fatalf("bare repositories under --repos (-want +got):\n%s", d)
	}
	got := strings.Join(rep.Changes, "\n")
	for _, want := range []string{"created draft edge01.kindnet-v1.packagevariant-1 (clone of catalog-infra-capi.kindnet.v1)",
		"created draft edge01.kindnet-main.packagevariant-1 (clone of catalog-infra-capi.kindnet.main)"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "repository catalog\n") {
		t.Errorf("the catalog was served under its own name too:\n%s", got)
	}

	// A directory that is not a package path, a URL pvctl cannot name a
	// bare repository after: refused before anything is written, naming
	// the file and the field.
	bad := strings.Replace(nephioRegistration, "directory: /infra/capi", "directory: /infra/../../etc", 1)
	bad = strings.Replace(bad, "repo: https://github.com/nephio-project/catalog.git\n    directory: /workloads", "repo: https://example.com/Cat_Alog.git\n    directory: /workloads", 1)
	fntest.WriteTree(t, in, map[string]string{"all.yaml": bad + variant("kindnet-v1", ", revision: 1") + variant("kindnet-main", ", revision: -1")})
	_, err = Run(context.Background(), RunOptions{Repos: repos, Files: []string{in}, Namespace: "default"})
	var ie *inputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), `all.yaml: Repository "catalog-infra-capi": `+"`spec.git.directory`"+` "/infra/../../etc"`) ||
		!strings.Contains(err.Error(), `Repository "catalog-workloads-free5gc": `+"`spec.git.repo`"+` "https://example.com/Cat_Alog.git"`) {
		t.Fatalf("bad registrations: %v", err)
	}
}
