package porch

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 29 #1: one git repository shaped like Nephio's catalog (packages
// under infra/capi and workloads, tags <directory>/<package>/<ref>, a
// release tag of no package), registered once per directory: pvkit's git
// store lists what Porch v1.5.3 lists, revision by revision (name,
// package, workspace, revision number, lifecycle).
func TestDirectoryRepositoriesListAsPorch(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "dirs")
	url := e.bareRepo("catalog")
	kptfile := func(name, info string) map[string]string {
		return map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\ninfo:\n  description: " + info + "\n"}
	}
	e.publishUpstream(url, "infra/capi/kindnet", "v1", kptfile("kindnet", "one"))
	e.publishUpstream(url, "infra/capi/kindnet", "v3.0.0", kptfile("kindnet", "three"))
	e.publishUpstream(url, "infra/capi/cluster-capi", "v2", kptfile("cluster-capi", "two"))
	e.publishUpstream(url, "workloads/free5gc", "v3.0.0", kptfile("free5gc", "three"))
	work := t.TempDir()
	e.git(work, "clone", "-q", url, ".")
	e.git(work, "tag", "v3.0.0") // a release tag: no package at its path
	e.git(work, "push", "-q", "origin", "v3.0.0")

	// One registration after the other: Porch v1.5.3 keeps one git cache
	// per URL, and two Repositories of one URL created at the same moment
	// race to make it ("repo plain init failed ... repository already
	// exists", then "open of repository failed in gogit ... repository does
	// not exist" for both, still after 90 s: porch-server.log at a969af8).
	var repos []gitstore.Repository
	for _, d := range []struct{ name, dir string }{{"catalog-infra-capi", "/infra/capi"}, {"catalog-workloads", "/workloads"}} {
		r := &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: e.ns},
			Spec: porchconfig.RepositorySpec{Type: porchconfig.RepositoryTypeGit,
				Git: &porchconfig.GitRepository{Repo: url, Branch: "main", Directory: d.dir}}}
		if err := e.c.Create(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		e.eventually(converge, "Porch lists "+d.name, func() (bool, string) {
			var l porchapi.PackageRevisionList
			if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
				return false, err.Error()
			}
			for _, pr := range l.Items {
				if pr.Spec.RepositoryName == d.name {
					return true, ""
				}
			}
			return false, "no revision yet"
		})
		repos = append(repos, gitstore.Repository{Name: d.name, GitDir: strings.TrimPrefix(url, "file://"), Directory: d.dir})
	}
	list := func(names []string) []string { sort.Strings(names); return names }
	var byPorch []string
	e.eventually(converge, "Porch lists both registrations", func() (bool, string) {
		var l porchapi.PackageRevisionList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		byPorch = nil
		for _, r := range l.Items {
			byPorch = append(byPorch, fmt.Sprintf("%s %s %s %d %s", r.Name, r.Spec.PackageName, r.Spec.WorkspaceName, r.Spec.Revision, r.Spec.Lifecycle))
		}
		return len(byPorch) >= 7, fmt.Sprintf("%d revisions: %v", len(byPorch), byPorch)
	})
	gs, err := gitstore.Open(e.ns, repos)
	if err != nil {
		t.Fatal(err)
	}
	var byPvkit []string
	for _, r := range gs.All(e.ns) {
		byPvkit = append(byPvkit, fmt.Sprintf("%s %s %s %d %s", r.Name, r.Package, r.Workspace, r.Revision, r.Lifecycle))
	}
	if d := cmp.Diff(list(byPorch), list(byPvkit)); d != "" {
		t.Fatalf("listings differ (-Porch +pvkit):\n%s", d)
	}
	t.Logf("both list:\n%s", strings.Join(byPvkit, "\n"))
}
