package docs

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/health"
	sigsyaml "sigs.k8s.io/yaml"
)

// Issue 57 #1: the health check examples of docs/behavior.md (rule
// health-gated-rollouts), one per GitOps controller, read from the page and
// evaluated against the status each controller writes: applied at the
// revision (Current), not yet (InProgress), failed at it (Failed), and a
// failure of an older revision (not this one's).
func TestHealthCheckExamples(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(root(t), "docs", "behavior.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(page)
	start := strings.Index(section, "### health-gated-rollouts")
	if start < 0 {
		t.Fatal("docs/behavior.md has no health-gated-rollouts rule")
	}
	section = section[start+4:]
	if end := strings.Index(section, "\n### "); end > 0 {
		section = section[:end]
	}
	checks := map[string]*pv.HealthCheck{}
	for _, m := range regexp.MustCompile("(?s)```yaml\n# ([^(\n]*?) \\((.*?)```").FindAllStringSubmatch(section, -1) {
		c := &pv.HealthCheck{}
		if err := sigsyaml.UnmarshalStrict([]byte("# ("+m[2]), c); err != nil {
			t.Fatalf("an example does not read as a health check: %v\n%s", err, m[2])
		}
		if p := health.Validate("example", c); len(p) != 0 {
			t.Errorf("%s: %v", c.Kind, p)
		}
		if c.Failed == "" {
			t.Errorf("%s: the example has no failed expression", c.Kind)
		}
		checks[m[1]] = c
	}
	v := health.Variant{Name: "app-edge1", Namespace: "fleet", Repo: "edge1", Package: "app"}
	// v2 was published by commit ab12..., and another package's publish
	// moved the branch on to c0de... (the package there unchanged).
	const published, head = "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12", "c0dec0dec0dec0dec0dec0dec0dec0dec0dec0de"
	rev := health.Revision{Name: "edge1.app.v2", Repo: "edge1", Package: "app", Revision: 2, Ref: health.Ref("app", 2),
		Commit: published, Branch: "main", Commits: []string{published, head}}
	cases := map[string]map[health.State][]string{
		"Flux Kustomization on a branch, on the edge cluster": {
			health.Current: {`{"status":{"lastAppliedRevision":"main@sha1:` + published + `","conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}`,
				`{"status":{"lastAppliedRevision":"main@sha1:` + head + `","conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}`},
			health.InProgress: {`{"status":{"lastAppliedRevision":"main@sha1:9f009f009f009f009f009f009f009f009f009f00","conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}`,
				`{"status":{"lastAppliedRevision":"other@sha1:` + published + `","conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}`,
				`{"status":{}}`},
			health.Failed: {`{"status":{"lastAppliedRevision":"main@sha1:9f009f009f009f009f009f009f009f009f009f00","lastAttemptedRevision":"main@sha1:` + head + `","conditions":[{"type":"Ready","status":"False","reason":"HealthCheckFailed","message":"Deployment/app/app: CrashLoopBackOff"}]}}`},
		},
		"Flux Kustomization on a tag": {
			health.Current: {`{"status":{"lastAppliedRevision":"app/v2@sha1:ab12","lastAttemptedRevision":"app/v2@sha1:ab12","conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}`},
			health.InProgress: {`{"status":{"lastAppliedRevision":"app/v1@sha1:9f00","lastAttemptedRevision":"app/v1@sha1:9f00","conditions":[{"type":"Ready","status":"True","reason":"ReconciliationSucceeded"}]}}`,
				`{"status":{"lastAppliedRevision":"app/v1@sha1:9f00","lastAttemptedRevision":"app/v2@sha1:ab12","conditions":[{"type":"Ready","status":"Unknown","reason":"Progressing"}]}}`,
				`{"status":{"lastAttemptedRevision":"app/v1@sha1:9f00","conditions":[{"type":"Ready","status":"False","reason":"HealthCheckFailed"}]}}`,
				`{"status":{}}`},
			health.Failed: {`{"status":{"lastAppliedRevision":"app/v1@sha1:9f00","lastAttemptedRevision":"app/v2@sha1:ab12","conditions":[{"type":"Ready","status":"False","reason":"HealthCheckFailed"}]}}`},
		},
		"Flux HelmRelease on a chart version": {
			health.Current: {`{"metadata":{"generation":3},"spec":{"chart":{"spec":{"version":"6.6.0"}}},"status":{"lastAttemptedGeneration":3,"history":[{"chartVersion":"6.6.0","status":"deployed"},{"chartVersion":"6.5.0","status":"superseded"}],"conditions":[{"type":"Ready","status":"True","reason":"UpgradeSucceeded"}]}}`},
			health.InProgress: {`{"metadata":{"generation":3},"spec":{"chart":{"spec":{"version":"6.6.0"}}},"status":{"lastAttemptedGeneration":2,"history":[{"chartVersion":"6.5.0","status":"deployed"}],"conditions":[{"type":"Ready","status":"False","reason":"UpgradeFailed"}]}}`,
				`{"metadata":{"generation":3},"spec":{"chart":{"spec":{"version":"6.6.0"}}},"status":{"lastAttemptedGeneration":3,"history":[{"chartVersion":"6.5.0","status":"deployed"}],"conditions":[{"type":"Ready","status":"Unknown","reason":"Progressing"}]}}`},
			health.Failed: {`{"metadata":{"generation":3},"spec":{"chart":{"spec":{"version":"6.6.0"}}},"status":{"lastAttemptedGeneration":3,"history":[{"chartVersion":"6.6.0","status":"failed"}],"conditions":[{"type":"Ready","status":"False","reason":"UpgradeFailed","message":"Helm upgrade failed for release flux-system/app with chart podinfo@6.6.0: context deadline exceeded"}]}}`},
		},
		"Config Sync RootSync on a commit": {
			health.Current: {`{"status":{"sync":{"commit":"` + published + `","gitStatus":{"branch":"main"}}}}`, `{"status":{"sync":{"commit":"` + head + `"}}}`},
			health.InProgress: {`{"status":{"sync":{"commit":"9f009f009f009f009f009f009f009f009f009f00"}}}`,
				`{"status":{"sync":{"commit":"9f009f009f009f009f009f009f009f009f009f00","errorSummary":{"totalCount":2}}}}`, `{"status":{}}`},
			health.Failed: {`{"status":{"sync":{"commit":"` + head + `","errorSummary":{"totalCount":1}}}}`,
				`{"status":{"sync":{"commit":"` + head + `","errorSummary":{"totalCount":1},"errors":[{"code":"2009","errorMessage":"KNV2009: failed to apply Deployment.apps, upf/upf"}]}}}`},
		},
		"Argo CD Application, central": {
			health.Current: {`{"spec":{"source":{"targetRevision":"app/v2"}},"status":{"sync":{"status":"Synced"},"health":{"status":"Healthy"}}}`},
			health.InProgress: {`{"spec":{"source":{"targetRevision":"app/v2"}},"status":{"sync":{"status":"OutOfSync"},"health":{"status":"Progressing"}}}`,
				`{"spec":{"source":{"targetRevision":"app/v1"}},"status":{"sync":{"status":"Synced"},"health":{"status":"Degraded"}}}`},
			health.Failed: {`{"spec":{"source":{"targetRevision":"app/v2"}},"status":{"sync":{"status":"Synced"},"health":{"status":"Degraded"}}}`,
				`{"spec":{"source":{"targetRevision":"app/v2"}},"status":{"sync":{"status":"OutOfSync"},"health":{"status":"Progressing"},"operationState":{"phase":"Failed"}}}`},
		},
	}
	names := map[health.State]string{health.Current: "Current", health.InProgress: "InProgress", health.Failed: "Failed"}
	for kind, states := range cases {
		c := checks[kind]
		if c == nil {
			t.Errorf("docs/behavior.md has no %s example", kind)
			continue
		}
		for want, objects := range states {
			for _, o := range objects {
				var object map[string]any
				if err := sigsyaml.Unmarshal([]byte(o), &object); err != nil {
					t.Fatal(err)
				}
				got, err := health.Evaluate(context.Background(), c, v, object, rev)
				if err != nil || got != want {
					t.Errorf("%s over %s: %s, %v; want %s", kind, o, names[got], err, names[want])
				}
				// A failure is said in the cluster's words (issue 58 #3).
				words, err := health.Reported(context.Background(), c, v, object, rev)
				if want == health.Failed && (err != nil || words == "") {
					t.Errorf("%s over %s: failed, and says %q, %v", kind, o, words, err)
				}
				// Config Sync's own text of the error, not only a count.
				if strings.Contains(o, "KNV2009") && !strings.HasSuffix(words, ": KNV2009: failed to apply Deployment.apps, upf/upf") {
					t.Errorf("%s over %s: says %q, not Config Sync's error", kind, o, words)
				}
			}
		}
	}
	if len(checks) != len(cases) {
		t.Errorf("docs/behavior.md has %d examples, the test %d: test each", len(checks), len(cases))
	}
}
