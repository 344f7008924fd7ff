package packagevariant

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// rule targeted-watches: an event maps to the variants it concerns, not to every variant.
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
	// A revision of the downstream no variant owns (Porch's branch
	// placeholder) maps to no variant: a drift is seen at the next
	// reconcile (rule content-drift says why).
	placeholder := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy.app-prod.main", ResourceVersion: "c1"},
		Spec: porchapi.PackageRevisionSpec{RepositoryName: "deploy", PackageName: "app-prod", WorkspaceName: "main", Revision: -1,
			Lifecycle: porchapi.PackageRevisionLifecyclePublished}}
	if got := names(e.r.mapRevision(context.Background(), placeholder)); got != "" {
		t.Fatalf("the downstream's branch placeholder maps to %q", got)
	}
	if got := names(e.r.mapInjected(context.Background(), endpoints("eu-endpoints", "db"))); got != "other" {
		t.Fatalf("an injected object maps to %q", got)
	}
	if got := names(e.r.mapInjected(context.Background(), endpoints("nobody-uses-me", "db"))); got != "" {
		t.Fatalf("an unrelated object maps to %q", got)
	}
}

// A map function whose LIST fails logs the error (and still maps through
// owner references) instead of swallowing it.
func TestWatchMappersLogListErrors(t *testing.T) {
	var logged []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{}))
	r := &Reconciler{Client: failingList{}}
	owned := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deploy.x.y",
		OwnerReferences: []metav1.OwnerReference{{Kind: "PackageVariant", Name: "other"}}}}
	if got := names(r.mapRevision(ctx, owned)); got != "other" {
		t.Fatalf("an owned revision maps to %q", got)
	}
	if got := r.mapInjected(ctx, endpoints("x", "db")); len(got) != 0 {
		t.Fatalf("mapped to %v", got)
	}
	if len(logged) != 2 || !strings.Contains(logged[0], "the cache is not synced") || !strings.Contains(logged[1], "mapping an in-cluster object to its variants") {
		t.Fatalf("logged %q", logged)
	}
}

// failingList is a client whose LIST fails.
type failingList struct{ client.Client }

func (failingList) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("the cache is not synced")
}
