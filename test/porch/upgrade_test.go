package porch

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 21 #6: never an ownerless draft, for upgrades too. A set over 20
// repositories, every draft approved, then the set moved to blueprint v2:
// every variant ends Ready with exactly one upgrade draft, owned by it. (On
// a real Porch v1.5.3, 2 of 50 upgrade drafts were recorded without owner
// and replaced by packagevariant-3 minutes later.)
func TestFleetUpgradeEndsOwned(t *testing.T) {
	t.Parallel() // its own namespace and repositories; the stack and the controller are shared (issue 48 #4)
	const n = 20
	e := newEnv(t, "upgrade")
	bp := blueprint(t)
	e.upstream(bp)
	e.apply(cluster)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("f-%02d", i)
		e.repository(name, e.bareRepo(name), true, map[string]string{"fleet": "yes"})
	}
	template := "      injectors:\n      - kind: ConfigMap\n        name: us-east1-endpoints\n"
	e.apply(setOver("workspaceName: v1", `fleet: "yes"`, template))
	drafts := func() (owned, ownerless []porchapi.PackageRevision) {
		var l porchapi.PackageRevisionList
		if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
			t.Fatal(err)
		}
		for _, r := range l.Items {
			if r.Spec.RepositoryName == "blueprints" || r.Spec.Lifecycle != porchapi.PackageRevisionLifecycleDraft || r.DeletionTimestamp != nil {
				continue
			}
			if len(r.OwnerReferences) == 0 {
				ownerless = append(ownerless, r)
			} else {
				owned = append(owned, r)
			}
		}
		return owned, ownerless
	}
	settled := func(what string) {
		e.eventually(10*converge, what, func() (bool, string) {
			if ok, msg := e.allReady(n); !ok {
				return false, msg
			}
			owned, ownerless := drafts()
			return len(owned) == n && len(ownerless) == 0, fmt.Sprintf("%d owned drafts, %d ownerless", len(owned), len(ownerless))
		})
	}
	settled(fmt.Sprintf("%d children Ready with one owned draft each", n))
	owned, _ := drafts()
	for _, d := range owned {
		e.approve(d.Name)
	}
	bp["deployment.yaml"] = strings.Replace(bp["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream("file://"+filepath.Join(stackDir, "git", e.ns, "blueprints.git"), "app", "v2", bp)
	e.eventually(converge, "Porch lists blueprints/app v2", func() (bool, string) {
		for _, r := range e.revisions("blueprints", "app") {
			if r.Spec.WorkspaceName == "v2" {
				return true, ""
			}
		}
		return false, "not yet"
	})
	e.apply(setOver("workspaceName: v2", `fleet: "yes"`, template))
	settled(fmt.Sprintf("%d children Ready with one owned upgrade draft each", n))
	owned, _ = drafts()
	for _, d := range owned {
		if !strings.HasSuffix(d.Name, ".packagevariant-2") {
			t.Errorf("upgrade draft %s: want packagevariant-2 (an ownerless -2 replaced by -3?)", d.Name)
		}
		// Porch shows the upgrade task pvkit asked for, as pvctl get -o
		// yaml shows a local one (TestGetShowsTheDraftsTask): the old
		// upstream, the new one, the local revision, resource-merge.
		local := strings.TrimSuffix(d.Name, "-2") + "-1"
		if tk := d.Spec.Tasks; len(tk) != 1 || tk[0].Type != porchapi.TaskTypeUpgrade || tk[0].Upgrade == nil ||
			tk[0].Upgrade.OldUpstream.Name != "blueprints.app.v1" || tk[0].Upgrade.NewUpstream.Name != "blueprints.app.v2" ||
			tk[0].Upgrade.LocalPackageRevisionRef.Name != local || tk[0].Upgrade.Strategy != porchapi.ResourceMerge {
			t.Errorf("upgrade draft %s: spec.tasks %+v, want one upgrade from blueprints.app.v1 to blueprints.app.v2 of %s", d.Name, tk, local)
		}
	}
	// The leader's metrics count the same fleet (other scenarios' variants
	// may be there too: at least n).
	m := scrapeMetrics(t)
	for _, series := range []string{
		`pvkit_packagevariants{ready="True",reason="NoErrors"}`,
		`pvkit_drafts{lifecycle="Draft"}`,
		`pvkit_porch_requests_total{code="OK",resource="packagerevisions",verb="create"}`,
		`pvkit_porch_requests_total{code="OK",resource="packagerevisionresources",verb="update"}`,
	} {
		if m[series] < n {
			t.Errorf("/metrics: %s = %v, want at least %d", series, m[series], n)
		}
	}
	if m[`pvkit_reconcile_duration_seconds_count{kind="PackageVariant",result="success"}`] < n {
		t.Errorf("/metrics: no successful PackageVariant reconciles counted")
	}
}

// scrapeMetrics reads the controller's /metrics as series → value.
func scrapeMetrics(t *testing.T) map[string]float64 {
	t.Helper()
	code, b := getMetrics(t, scraperToken(t))
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %.300q", code, b)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(b, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndex(line, " ")
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}
