package packagevariantset

import (
	"context"
	"strings"
	"testing"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Issue 62 #5 (rule child-labels): with pvkit.dev/child-labels the set's
// children carry their target's labels (kubectl get pv -l region=...
// finds them); a target's label change reaches its child in one patch, a
// label a person put on the child is kept, a steady resync writes nothing;
// without the annotation children carry none (a takeover stays write-free).
func TestChildrenCarryTheirTargetsLabels(t *testing.T) {
	e := newEnv(t, repo("r-000", map[string]string{"env": "prod", "region": "us-east1", "team": "web"}),
		repo("r-001", map[string]string{"env": "prod", "region": "eu-west1"}))
	e.set(strings.Replace(labelledSet, "  name: app\n", "  name: app\n  annotations: {pvkit.dev/child-labels: \"region,env\"}\n", 1))
	e.reconcile()
	c := e.children()["app-r-000-app"]
	if c.Labels["region"] != "us-east1" || c.Labels["env"] != "prod" || c.Labels["team"] != "" || c.Annotations["pvkit.dev/target-labels"] != "env,region" {
		t.Fatalf("the child's labels %v, annotations %v", c.Labels, c.Annotations)
	}
	l := e.childrenMatching(client.MatchingLabels{"region": "eu-west1"})
	if len(l) != 1 || l[0] != "app-r-001-app" {
		t.Fatalf("children with region=eu-west1: %v", l)
	}
	before := e.total()
	e.reconcile()
	if w := e.total() - before; w != 0 {
		t.Fatalf("a steady resync wrote %d times", w)
	}
	// A person labels a child; the target moves region.
	c.Labels["owner"] = "bob"
	if err := e.client.Update(context.Background(), &c); err != nil {
		t.Fatal(err)
	}
	r := &porchconfig.Repository{}
	if err := e.client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "r-000"}, r); err != nil {
		t.Fatal(err)
	}
	r.Labels["region"] = "us-west1"
	if err := e.client.Update(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	e.reconcile()
	c = e.children()["app-r-000-app"]
	if c.Labels["region"] != "us-west1" || c.Labels["owner"] != "bob" {
		t.Fatalf("after the target moved: %v", c.Labels)
	}
}

// Without the annotation, no target label is copied.
func TestChildrenCarryNoTargetLabelsUnasked(t *testing.T) {
	e := newEnv(t, repo("r-000", map[string]string{"env": "prod", "region": "us-east1"}))
	e.set(labelledSet)
	e.reconcile()
	if c := e.children()["app-r-000-app"]; c.Labels["region"] != "" || c.Annotations["pvkit.dev/target-labels"] != "" {
		t.Fatalf("unasked: %v, %v", c.Labels, c.Annotations)
	}
}

// labelledSet is churnSet without its rollout.
var labelledSet = churnSet[:strings.Index(churnSet, "  rollout:\n")]

// childrenMatching lists, with a label selector as kubectl get -l does,
// the names of the PackageVariants it selects.
func (e *env) childrenMatching(sel client.MatchingLabels) []string {
	e.t.Helper()
	var l pvapi.PackageVariantList
	if err := e.client.List(context.Background(), &l, client.InNamespace(ns), sel); err != nil {
		e.t.Fatal(err)
	}
	var names []string
	for _, c := range l.Items {
		names = append(names, c.Name)
	}
	return names
}
