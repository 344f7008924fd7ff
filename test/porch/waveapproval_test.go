package porch

import (
	"fmt"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
)

// Issue 43 #4 on a real Porch (rule wave-approval): a set whose drafts a
// person approves (no approval policy) and a rollout of two waves. v2
// published: the canary's draft waits; the person approves wave canary
// once (pvkit.dev/rollout-approve, as pvctl rollout approve writes it),
// and the controller (--approve-by-policy) publishes the canary's draft;
// wave rest then moves, and its drafts, not approved, wait for a person.
func TestWaveApprovalOnPorch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "waveapproval")
	approvingController(t)
	url, files, repos := e.releaseFleet("w", 3, map[string]string{"wave": "yes"}, true)
	e.apply(setOver("", `wave: "yes"`, `      injectors:
      - kind: ConfigMap
        name: us-east1-endpoints
  rollout:
    waves:
    - name: canary
      selector:
        matchLabels: {ring: canary}
      size: 1
    - name: rest
`))
	// The first revision: a person approves each draft.
	drafts := func(rev string) map[string]string {
		out := map[string]string{}
		for _, repo := range repos {
			for _, r := range e.owned(repo, "app") {
				if l := r.Status.UpstreamLock; r.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished && l != nil && l.Git != nil && l.Git.Ref == "app/"+rev {
					out[repo] = r.Name
				}
			}
		}
		return out
	}
	e.eventually(3*converge, "the three v1 drafts", func() (bool, string) { d := drafts("v1"); return len(d) == 3, fmt.Sprint(d) })
	for _, d := range drafts("v1") {
		e.approve(d)
	}
	e.eventually(3*converge, "v1 published everywhere", func() (bool, string) {
		c := 0
		for _, repo := range repos {
			if published(e, repo, "v1") {
				c++
			}
		}
		return c == 3, fmt.Sprintf("%d published at v1", c)
	})
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream(url, "app", "v2", files)
	e.eventuallyListed("blueprints", 3*converge, "the canary's v2 draft, waiting for a person", func() (bool, string) {
		d := drafts("v2")
		return d["w-000"] != "" && len(d) == 1, fmt.Sprint(d)
	})
	e.handled("the canary's draft waiting", 2*converge)
	if published(e, "w-000", "v2") {
		t.Fatal("the canary's v2 draft was published before anyone approved it")
	}
	if _, err := kubectl("", "annotate", "-n", e.ns, "packagevariantset", "app", "pvkit.dev/rollout-approve=canary@blueprints.app.v2"); err != nil {
		t.Fatal(err)
	}
	e.eventually(3*converge, "the canary published by the wave's approval, wave rest's drafts waiting", func() (bool, string) {
		d := drafts("v2")
		return published(e, "w-000", "v2") && d["w-001"] != "" && d["w-002"] != "", fmt.Sprintf("canary published %v; drafts %v", published(e, "w-000", "v2"), d)
	})
	e.handled("wave rest's drafts waiting", 2*converge)
	for _, repo := range repos[1:] {
		if published(e, repo, "v2") {
			t.Fatalf("%s of wave rest was published: only wave canary was approved", repo)
		}
	}
}
