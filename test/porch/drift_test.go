package porch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/provenance"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const driftVariant = `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata: {name: app-drift}
spec:
  upstream: {repo: blueprints, package: app}
  downstream: {repo: deploy, package: app}
  annotations: {approval.nephio.org/policy: always}
  packageContext:
    data: {env: prod, region: us-east1}
  injectors:
  - kind: ConfigMap
    name: us-east1-endpoints
`

// Issue 45's acceptance on a real Porch (rules content-drift,
// drift-policy): the variant's revision published, a commit pushed with
// git to the deployment repository's branch behind Porch's back; after
// Porch's repository sync the variant reports ContentChanged naming the
// file. Annotated revert, it makes an edit draft, approval by policy
// publishes it, and the branch is pvkit's again: the drift ends.
// observeWindow is how long TestContentDriftOnPorch watches a converged
// variant's requests: three of the suite's observation intervals.
const observeWindow = 66 * time.Second

func TestContentDriftOnPorch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "drift")
	approvingController(t)
	e.upstream(blueprint(t))
	url := e.bareRepo("deploy")
	e.repository("deploy", url, true, nil)
	e.apply(cluster)
	e.apply(driftVariant)
	e.eventuallyListed("deploy", converge, "revision 1 of deploy/app published, the variant Ready", func() (bool, string) {
		for _, r := range e.owned("deploy", "app") {
			if r.Spec.Lifecycle == porchapi.PackageRevisionLifecyclePublished && r.Spec.Revision == 1 {
				return e.ready("app-drift")
			}
		}
		return false, fmt.Sprintf("%d owned revisions", len(e.owned("deploy", "app")))
	})

	// What observing costs on Porch (rule observe-cadence): a converged
	// variant observed three times (--observe-interval=20s, plus at most
	// a tenth of jitter), pvkit's requests in its namespace.
	off := auditSize(t)
	time.Sleep(observeWindow)
	w := audit(t, off, e.ns, isPvkit)
	t.Logf("observing a converged variant for %s (--observe-interval=20s, about 3 observations): %d requests by pvkit %v, %d PackageRevisions created, %d package writes",
		observeWindow, w.Requests, w.ByCall, w.Creates, w.ResourceWrites)
	if w.Creates > 0 || w.ResourceWrites > 0 {
		t.Fatalf("observing a converged variant wrote packages: %+v", w)
	}

	// A person with git, behind Porch's back.
	work := t.TempDir()
	e.git(work, "clone", "-q", "--branch", "main", url, ".")
	path := filepath.Join(work, "app", "deployment.yaml")
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), "replicas: 1") {
		t.Fatalf("app/deployment.yaml on the branch: %v\n%s", err, b)
	}
	// The record pvkit wrote through Porch holds for what Porch published
	// (rule provenance-record), and names the file changed behind its back.
	if _, err := provenance.Check(fntest.ReadTree(t, filepath.Join(work, "app")), nil); err != nil {
		t.Fatalf("the provenance of the revision Porch published: %v", err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), "replicas: 1", "replicas: 5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.Check(fntest.ReadTree(t, filepath.Join(work, "app")), nil); err == nil || !strings.Contains(err.Error(), "deployment.yaml (modified)") {
		t.Fatalf("the provenance after a change of deployment.yaml: %v", err)
	}
	e.git(work, "commit", "-q", "-am", "hotfix")
	e.git(work, "push", "-q", "origin", "main")
	// The drift is seen at the variant's next observation (rule
	// observe-cadence: --observe-interval, 20 s on the suite's controller)
	// after Porch's repository sync (5 s on the stack); nothing wakes it.
	annotate := func(key, value string) {
		t.Helper()
		e.retry("annotating the variant "+key, func() error {
			var v pvapi.PackageVariant
			if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-drift"}, &v); err != nil {
				return err
			}
			if v.Annotations == nil {
				v.Annotations = map[string]string{}
			}
			v.Annotations[key] = value
			return e.c.Update(context.Background(), &v)
		})
	}

	drift := func() *metav1.Condition {
		var v pvapi.PackageVariant
		if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: "app-drift"}, &v); err != nil {
			return nil
		}
		return apimeta.FindStatusCondition(v.Status.Conditions, pvapi.ConditionPublishedDrift)
	}
	e.eventually(converge, "the variant reports the commit (ContentChanged, deployment.yaml)", func() (bool, string) {
		c := drift()
		if c == nil {
			return false, "no PublishedDrift condition"
		}
		return c.Reason == pvapi.ReasonContentChanged && strings.Contains(c.Message, "deployment.yaml modified"), c.Reason + ": " + c.Message
	})
	if n := len(e.owned("deploy", "app")); n != 1 {
		t.Fatalf("reporting the drift made revisions: %d owned", n)
	}

	annotate("pvkit.dev/drift-policy", "revert")
	e.eventuallyListed("deploy", 2*converge, "the revert published, the branch pvkit's again, no drift", func() (bool, string) {
		var reverted *porchapi.PackageRevision
		for _, r := range e.owned("deploy", "app") {
			if r.Annotations["pvkit.dev/drift-resolution"] == "revert of deploy.app.main" {
				reverted = &r
			}
		}
		if reverted == nil {
			return false, "no draft resolving the drift"
		}
		if reverted.Spec.Lifecycle != porchapi.PackageRevisionLifecyclePublished {
			return false, reverted.Name + " is " + string(reverted.Spec.Lifecycle)
		}
		if f := e.resources("deploy.app.main"); !strings.Contains(f["deployment.yaml"], "replicas: 1") {
			return false, "the branch still holds the person's change"
		}
		if c := drift(); c != nil {
			return false, "still drifted: " + c.Message
		}
		return true, ""
	})
}
