package porch

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const healthSet = `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata: {name: app}
spec:
  upstream: {repo: blueprints, package: app}
  targets:
  - repositorySelector:
      matchLabels: {fleet: "yes"}
    template:
      downstream: {package: app}
      annotations: {approval.nephio.org/policy: always}
      injectors:
      - kind: ConfigMap
        nameExpr: repository.labels.region + '-endpoints'
      - group: example.com
        kind: Team
        name: web-team
  rollout:
    health:
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      nameExpr: downstream.repo
      condition: has(object.status) && object.status.lastAppliedRevision.startsWith(revision.ref + "@")
    waves:
    - name: canary
      selector:
        matchLabels: {ring: canary}
      size: 1
    - name: rest
`

// kustomization is a Kustomization-shaped object as Flux leaves it once it
// applied a source at ref.
func kustomization(name, ref string) string {
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s}
spec: {path: ./app}
status:
  lastAppliedRevision: "%s@sha1:0123456789abcdef"
`, name, ref)
}

// Issue 43 #1 on a real Porch (rule health-gated-rollouts): a set whose
// rollout waits for Flux. v2 published: the canary's draft is approved by
// policy and published, and the wave stays open while no Kustomization,
// then one at v1, reports it; the child's status and the set's message
// say so, and wave rest does not move. The Kustomization reports
// app/v2: the controller, watching the kind, sees it, the canary is done
// and wave rest moves.
func TestHealthGatedRolloutOnPorch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "health")
	approvingController(t)
	const n = 3
	url, files := healthFleet(e, "h", n, healthSet)
	status := func() (*pvsapi.PackageVariantSet, string) { return setRollout(e) }
	health := func(child string) (*pvapi.TargetHealth, string) {
		var v pvapi.PackageVariant
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: child}, &v); err != nil {
			return nil, err.Error()
		}
		for _, tg := range v.Status.DownstreamTargets {
			if tg.Health != nil {
				return tg.Health, fmt.Sprintf("%s: %s %s: %s", tg.Name, tg.Health.Status, tg.Health.Reason, tg.Health.Message)
			}
		}
		return nil, fmt.Sprintf("targets %+v", v.Status.DownstreamTargets)
	}
	restMoved := func() string {
		for i := 1; i < n; i++ {
			repo := fmt.Sprintf("h-%03d", i)
			for _, r := range e.owned(repo, "app") {
				if lockedAt(e.owned(repo, "app"), r.Name, "v2") {
					return repo
				}
			}
		}
		return ""
	}
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream(url, "app", "v2", files)
	start := time.Now()
	e.eventuallyListed("blueprints", 3*converge, "the canary published at v2, its cluster still at v1", func() (bool, string) {
		_, smsg := status()
		h, hmsg := health("app-h-000-app")
		if repo := restMoved(); repo != "" {
			t.Fatalf("%s of wave rest moved before the canary's cluster reported v2: %s; %s", repo, smsg, hmsg)
		}
		return published(e, "h-000", "v2") && h != nil && h.Reason == pvapi.ReasonNotHealthy &&
			strings.Contains(smsg, "the cluster has not reported it healthy (NotHealthy: Kustomization "+e.ns+"/h-000 does not report"), smsg + "; " + hmsg
	})
	atV2 := time.Since(start)
	// Evidence, not time: every child and the set handled a request since,
	// and wave rest is still where it was.
	e.handled("a wave waiting for its canary's cluster", 2*converge)
	if repo := restMoved(); repo != "" {
		_, smsg := status()
		t.Fatalf("%s of wave rest moved while the canary's cluster runs v1: %s", repo, smsg)
	}
	// Flux applies v2 on the canary's cluster.
	reported := time.Now()
	e.apply(kustomization("h-000", "app/v2"))
	e.eventually(3*converge, "the rollout complete once the canary's cluster reports v2", func() (bool, string) {
		s, msg := status()
		c := 0
		for i := 0; i < n; i++ {
			if published2(e, fmt.Sprintf("h-%03d", i)) {
				c++
			}
		}
		h, hmsg := health("app-h-000-app")
		// The rest's clusters never report v2: the rollout has no wave
		// after theirs, so it completes when they are published and
		// healthy; they are not, so it stays Progressing in wave rest.
		return s != nil && s.Status.Rollout != nil && s.Status.Rollout.Waves[0].State == "Complete" && c == n &&
			h != nil && h.Status == "True", fmt.Sprintf("%s; %d published at v2; %s", msg, c, hmsg)
	})
	for i := 1; i < n; i++ {
		e.apply(kustomization(fmt.Sprintf("h-%03d", i), "app/v2"))
	}
	e.eventually(2*converge, "Complete once every cluster reports v2", func() (bool, string) {
		s, msg := status()
		return s != nil && s.Status.Rollout != nil && s.Status.Rollout.Phase == "Complete", msg
	})
	t.Logf("canary published at v2 %s after the release; wave rest published and the rollout complete %s after the canary's cluster reported", atV2.Round(time.Second), time.Since(reported).Round(time.Second))
}

func published2(e *env, repo string) bool { return published(e, repo, "v2") }

// healthFleet is n repositories (PREFIX-000 the canary) whose clusters'
// Kustomizations report v1, and set applied over them, waited for until
// v1 is published in each: the first revision is not rolled out, but the
// objects are there as a running fleet has them.
func healthFleet(e *env, prefix string, n int, set string) (string, map[string]string) {
	e.t.Helper()
	url, files, _ := e.releaseFleet(prefix, n, map[string]string{"fleet": "yes", "region": "us-east1"}, true)
	for i := 0; i < n; i++ {
		e.apply(kustomization(fmt.Sprintf("%s-%03d", prefix, i), "app/v1"))
	}
	e.apply(set)
	e.eventually(3*converge, fmt.Sprintf("v1 published in the %d repositories", n), func() (bool, string) {
		c := 0
		for i := 0; i < n; i++ {
			if published(e, fmt.Sprintf("%s-%03d", prefix, i), "v1") {
				c++
			}
		}
		return c == n, fmt.Sprintf("%d published at v1", c)
	})
	return url, files
}

// setRollout is set app and where its rollout stands.
func setRollout(e *env) (*pvsapi.PackageVariantSet, string) {
	var s pvsapi.PackageVariantSet
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app"}, &s); err != nil {
		return nil, err.Error()
	}
	if r := s.Status.Rollout; r != nil {
		return &s, fmt.Sprintf("%s: %s", r.Phase, r.Message)
	}
	return &s, "no status.rollout"
}

// failingSet is healthSet with a failed expression (Flux's Kustomization
// that attempted the revision and reports its health check failed), a
// progress deadline of an hour, and onFailure: undo.
var failingSet = strings.Replace(healthSet,
	`      condition: has(object.status) && object.status.lastAppliedRevision.startsWith(revision.ref + "@")
`, `      condition: has(object.status) && object.status.lastAppliedRevision.startsWith(revision.ref + "@")
      failed: >-
        has(object.status.lastAttemptedRevision) && object.status.lastAttemptedRevision.startsWith(revision.ref + "@") &&
        object.status.conditions.exists(c, c.type == "Ready" && c.status == "False" && c.reason == "HealthCheckFailed")
    progressDeadlineSeconds: 3600
    onFailure: undo
`, 1)

// failedKustomization is a Kustomization as Flux leaves it when ref's
// health check failed: applied at from, attempted at ref, Ready False.
func failedKustomization(name, from, ref string) string {
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s}
spec: {path: ./app}
status:
  lastAppliedRevision: "%s@sha1:0123456789abcdef"
  lastAttemptedRevision: "%s@sha1:fedcba9876543210"
  conditions:
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "Deployment/app/app: Progressing"}
`, name, from, ref)
}

// Issue 57 #1 and #2 on a real Porch: five stores, a canary whose
// cluster reports v2 failed. The canary fails at once (its deadline is an
// hour), the rollout undoes itself (onFailure: undo), and with approval by
// policy the canary is back at v1, published, no person involved; no
// other store ever moved, and the set reads Paused RolledBack.
func TestFailingCanaryUndoneOnPorch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "failing")
	approvingController(t)
	const n = 5
	url, files := healthFleet(e, "f", n, failingSet)
	status := func() (*pvsapi.PackageVariantSet, string) { return setRollout(e) }
	files["deployment.yaml"] = strings.Replace(files["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	e.publishUpstream(url, "app", "v2", files)
	e.eventuallyListed("blueprints", 3*converge, "the canary published at v2", func() (bool, string) {
		_, msg := status()
		return published(e, "f-000", "v2"), msg
	})
	// Flux attempts v2 on the canary's cluster; its health check fails.
	failed := time.Now()
	e.apply(failedKustomization("f-000", "app/v1", "app/v2"))
	var undone time.Duration
	e.eventually(3*converge, "the rollout undone on failure", func() (bool, string) {
		s, msg := status()
		ok := s != nil && s.Status.Rollout != nil && s.Status.Rollout.UndoneOnFailure && s.Status.Rollout.Phase == "Paused" &&
			strings.Contains(msg, "undone on failure (spec.rollout.onFailure: undo): 1 failed child(ren)") &&
			strings.Contains(msg, "f-000.app.") && strings.Contains(msg, "HealthFailed")
		if ok {
			undone = time.Since(failed)
		}
		return ok, msg
	})
	// Back at v1 without a person: the canary's newest published revision
	// is a new one, locked to v1.
	e.eventually(3*converge, "the canary published back at v1", func() (bool, string) {
		owned := e.owned("f-000", "app")
		newest := -1
		var at porchapi.PackageRevision
		for _, r := range owned {
			if r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished && r.Spec.Revision > newest {
				newest, at = r.Spec.Revision, r
			}
		}
		l := at.Status.UpstreamLock
		return newest >= 3 && l != nil && l.Git != nil && l.Git.Ref == "app/v1", fmt.Sprintf("newest published %s (revision %d)", at.Name, newest)
	})
	for i := 1; i < n; i++ {
		if repo := fmt.Sprintf("f-%03d", i); published(e, repo, "v2") {
			t.Fatalf("%s moved to v2 though the canary failed", repo)
		}
	}
	s, _ := status()
	if c := apimeta.FindStatusCondition(s.Status.Conditions, pvapi.ConditionReady); c == nil || c.Status != "False" || c.Reason != pvapi.ReasonRolledBack {
		t.Errorf("the undone set's Ready: %+v", c)
	}
	t.Logf("the canary's failure reported; the rollout undone %s later (its progress deadline: an hour)", undone.Round(time.Second))
}
