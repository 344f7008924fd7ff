package porch

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store/gitstore"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 19 #3: one repository in a catalog's shape (packages under paths,
// tags <path>/vX.Y.Z and <path>/vN, a release tag, main), registered with
// Porch and opened by pvctl's store: the same listing (names, workspaces,
// revisions, lifecycles, locks).
func TestListingMatchesPorch(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	e := newEnv(t, "listing")
	url := e.bareRepo("catalog")
	kptfile := func(name string) map[string]string {
		return map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name + "\n",
			"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\ndata:\n  k: v\n"}
	}
	e.publishUpstream(url, "infra/capi/kindnet", "v3.0.0", kptfile("kindnet"))
	kindnet := kptfile("kindnet")
	kindnet["cm.yaml"] += "  k2: v2\n"
	e.publishUpstream(url, "infra/capi/kindnet", "v3.1.0", kindnet)
	e.publishUpstream(url, "team/app", "v1", kptfile("app"))
	e.publishUpstream(url, "team/app", "v2", kptfile("app2"))
	work := t.TempDir()
	e.git(work, "clone", "-q", url, ".")
	e.git(work, "tag", "Release4")
	e.git(work, "push", "-q", "origin", "Release4")
	e.repository("catalog", url, false, nil)

	const want = 6 // kindnet v3.0.0, v3.1.0 and main; app v1, v2 and main
	var porch []string
	e.eventually(converge, "Porch lists the repository", func() (bool, string) {
		var l porchapi.PackageRevisionList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		porch = nil
		for _, r := range l.Items {
			if r.Spec.RepositoryName != "catalog" {
				continue
			}
			lock := "-"
			if u := r.Status.UpstreamLock; u != nil && u.Git != nil {
				lock = u.Git.Ref
			}
			porch = append(porch, fmt.Sprintf("%s %s %d %s %s", r.Name, r.Spec.WorkspaceName, r.Spec.Revision, r.Spec.Lifecycle, lock))
		}
		sort.Strings(porch)
		return len(porch) == want, strings.Join(porch, "\n")
	})

	s, err := gitstore.Open(e.ns, []gitstore.Repository{{Name: "catalog", GitDir: strings.TrimPrefix(url, "file://")}})
	if err != nil {
		t.Fatal(err)
	}
	var local []string
	for _, r := range s.All(e.ns) {
		lock := "-"
		if r.Lock != nil {
			lock = r.Lock.Ref
		}
		local = append(local, fmt.Sprintf("%s %s %d %s %s", r.Name, r.Workspace, r.Revision, r.Lifecycle, lock))
	}
	sort.Strings(local)
	if strings.Join(local, "\n") != strings.Join(porch, "\n") {
		t.Fatalf("pvctl lists:\n%s\nPorch lists:\n%s", strings.Join(local, "\n"), strings.Join(porch, "\n"))
	}
	if len(s.Skipped()) != 0 {
		t.Fatalf("pvctl skipped %v", s.Skipped())
	}
	t.Logf("both list (%s):\n%s", time.Now().Format(time.RFC3339), strings.Join(local, "\n"))
}
