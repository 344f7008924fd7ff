package packagevariant

import (
	"context"
	"sort"
	"strings"
	"testing"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func names(reqs []reconcile.Request) string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// F7: an event maps to the variants it concerns, not to every variant.
func TestWatchMappers(t *testing.T) {
	e := newEnv(t)
	e.variant(appVariant) // upstream blueprints/app, injectors us-east1-endpoints and web
	e.variant(strings.NewReplacer("name: app-prod\n", "name: other\n", "package: app}", "package: other}", "us-east1-endpoints", "eu-endpoints").Replace(appVariant))
	e.variant(strings.NewReplacer("name: app-prod\n", "name: second\n").Replace(appVariant))

	up := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "blueprints.app.v2"},
		Spec: porchapi.PackageRevisionSpec{RepositoryName: "blueprints", PackageName: "app"}}
	if got := names(e.r.mapRevision(context.Background(), up)); got != "app-prod,second" {
		t.Fatalf("an upstream revision maps to %q", got)
	}
	owned := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy.x.y",
		OwnerReferences: []metav1.OwnerReference{{Kind: "PackageVariant", Name: "other"}}},
		Spec: porchapi.PackageRevisionSpec{RepositoryName: "deploy", PackageName: "x"}}
	if got := names(e.r.mapRevision(context.Background(), owned)); got != "other" {
		t.Fatalf("an owned revision maps to %q", got)
	}
	if got := names(e.r.mapInjected(context.Background(), endpoints("eu-endpoints", "db"))); got != "other" {
		t.Fatalf("an injected object maps to %q", got)
	}
	if got := names(e.r.mapInjected(context.Background(), endpoints("nobody-uses-me", "db"))); got != "" {
		t.Fatalf("an unrelated object maps to %q", got)
	}
}
