package porch

import (
	"context"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 33 #1 and #2 on a real Porch (rule draft-upgrade, rule
// floating-versions): a variant on semver "1" clones v1.3.0; a person
// edits the unapproved draft; v1.4.2 and v2.0.0 are published: the same
// draft moves in place to v1.4.2 (Porch's status.upstreamLock too), the
// edit and the variant's mutations kept, v2.0.0 not taken; then an edit of
// the field v1.5.0 changes stalls UpgradeConflict naming it, and the draft
// is left as it was.
func TestDraftUpgradedInPlaceOnPorch(t *testing.T) {
	e := newEnv(t, "inplace")
	files := blueprint(t)
	url := e.bareRepo("blueprints")
	e.publishUpstream(url, "app", "v1.3.0", files)
	e.repository("blueprints", url, false, nil)
	e.repository("deploy", e.bareRepo("deploy"), true, nil)
	e.apply(cluster)
	e.apply(strings.Replace(appProd, "upstream: {repo: blueprints, package: app}", `upstream: {repo: blueprints, package: app, semver: "1"}`, 1))
	var draft porchapi.PackageRevision
	e.eventually(converge, "the clone of v1.3.0, Ready", func() (bool, string) {
		d, ok, msg := e.onlyOwned("deploy", "app")
		if !ok {
			return false, msg
		}
		draft = d
		return e.ready("app-prod")
	})
	e.writeResources(draft.Name, func(f map[string]string) {
		f["deployment.yaml"] = strings.Replace(f["deployment.yaml"], "app: web\n", "app: web\n    owner: platform-team\n", 1)
	})

	v142 := blueprint(t)
	v142["deployment.yaml"] = strings.Replace(v142["deployment.yaml"], "nginx:1.27", "nginx:1.28", 1)
	v2 := blueprint(t)
	v2["deployment.yaml"] = strings.Replace(v2["deployment.yaml"], "nginx:1.27", "nginx:2.0", 1)
	e.publishUpstream(url, "app", "v2.0.0", v2)
	e.publishUpstream(url, "app", "v1.4.2", v142)
	e.nudge("blueprints")
	e.eventually(converge, "the draft upgraded in place to v1.4.2", func() (bool, string) {
		owned := e.owned("deploy", "app")
		if len(owned) != 1 || owned[0].Name != draft.Name {
			return false, "owned revisions are not the one draft"
		}
		l := owned[0].Status.UpstreamLock
		if l == nil || l.Git == nil || l.Git.Ref != "app/v1.4.2" {
			return false, "Porch's upstreamLock is not app/v1.4.2 yet"
		}
		return e.ready("app-prod")
	})
	f := e.resources(draft.Name)
	for _, want := range []string{"nginx:1.28", "owner: platform-team", "namespace: prod"} {
		if !strings.Contains(f["deployment.yaml"], want) {
			t.Errorf("the draft upgraded in place lacks %q:\n%s", want, f["deployment.yaml"])
		}
	}
	if !strings.Contains(f["Kptfile"], "ref: app/v1.4.2") || !strings.Contains(f["endpoints.yaml"], "db.us-east1.internal:5432") {
		t.Errorf("the draft upgraded in place lost its lock or its injection:\n%s\n%s", f["Kptfile"], f["endpoints.yaml"])
	}

	// A person's edit of the field the next release changes: a conflict.
	e.writeResources(draft.Name, func(f map[string]string) {
		f["deployment.yaml"] = strings.Replace(f["deployment.yaml"], "nginx:1.28", "nginx:1.28-patched", 1)
	})
	before := e.resources(draft.Name)
	v150 := blueprint(t)
	v150["deployment.yaml"] = strings.Replace(v150["deployment.yaml"], "nginx:1.27", "nginx:1.29", 1)
	e.publishUpstream(url, "app", "v1.5.0", v150)
	e.nudge("blueprints")
	e.eventually(converge, "UpgradeConflict", func() (bool, string) {
		var v pvapi.PackageVariant
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-prod"}, &v); err != nil {
			return false, err.Error()
		}
		c := apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionReady)
		if c == nil || c.Reason != pvapi.ReasonUpgradeConflict {
			return false, "not UpgradeConflict yet"
		}
		return strings.Contains(c.Message, "deployment.yaml: Deployment/web spec.template.spec.containers[name=web].image: the upstream changed nginx:1.28 to nginx:1.29, the draft has nginx:1.28-patched"), c.Message
	})
	if after := e.resources(draft.Name); after["deployment.yaml"] != before["deployment.yaml"] || after["Kptfile"] != before["Kptfile"] {
		t.Errorf("a conflicting upgrade wrote the draft:\n%s", after["deployment.yaml"])
	}
}
