package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/remote"
)

// pvctl run --cluster NAME=CONTEXT against a hostile API server: an
// endless object is cut at the bound and named in the target's health; a
// 403 with a text body is said as its status code, with no byte of the
// body in the status or the run's output. (The user's own kubeconfig:
// its loopback server is allowed, as its servers are the user's choice.)
func TestHostileClusterContext(t *testing.T) {
	for _, c := range []struct {
		name string
		mode fntest.Hostile
		want string
	}{
		{"endless object", fntest.Endless, fmt.Sprintf("answered more than %d bytes (pvkit reads at most that of one answer)", remote.DefaultMaxResponse)},
		{"403 with a body", fntest.Forbidden, "answered 403 Forbidden"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fntest.HostileAPIServer(t, c.mode)
			kc := filepath.Join(t.TempDir(), "kubeconfig")
			if err := os.WriteFile(kc, []byte(fntest.Kubeconfig(srv.URL, "edge-07")), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("KUBECONFIG", kc)
			w := rolloutWS(t)
			w.rolloutSpec(`    progressDeadlineSeconds: 3600
    health:
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      clusterExpr: downstream.repo
      namespace: flux-system
      nameExpr: downstream.package
      condition: has(object.status)
`)
			w.write("edge.yaml", edgeKustomization("fleet-00", "app/v1@sha1:0"))
			run := func() string {
				w.t.Helper()
				return w.mustCmd(ExitOK, "run", "-f", w.in, "--cluster", "fleet-07=edge-07")
			}
			said := run()
			w.publishV2()
			said += run()
			if d := w.approveDrafts(); len(d) != 1 {
				t.Fatalf("the canary's draft: %v", d)
			}
			said += run()
			status := w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app")
			host := strings.TrimPrefix(srv.URL, "https://")
			contains(t, status, "health: Unknown ClusterUnreachable: cluster fleet-07 (context edge-07 of your kubeconfig) did not answer reading cluster fleet-07: Kustomization flux-system/app: server "+host+" "+c.want)
			said += status + w.mustCmd(ExitOK, "rollout", "status", "app", "-o", "wide")
			for _, word := range strings.Fields(fntest.SecretWords) {
				if strings.Contains(said, word) {
					t.Fatalf("the server's words %q were said:\n%s", word, said)
				}
			}
		})
	}
}
