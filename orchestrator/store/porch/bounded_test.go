package porch

import (
	"context"
	"errors"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// A request Porch never answers ends at the bound, naming the request;
// one that answers is as it was; a caller that stops first is not a
// timeout.
func TestBoundedRequests(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Update: func(ctx context.Context, _ client.WithWatch, _ client.Object, _ ...client.UpdateOption) error {
			return hang(ctx)
		},
		SubResourceUpdate: func(ctx context.Context, _ client.Client, _ string, _ client.Object, _ ...client.SubResourceUpdateOption) error {
			return hang(ctx)
		},
	})
	b := Bounded(c, 50*time.Millisecond)
	pr := &porchapi.PackageRevision{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "deploy.app.packagevariant-1"}}
	pr.Kind = "PackageRevision"
	start := time.Now()
	err := b.Update(context.Background(), pr)
	var te *RequestTimeoutError
	if !errors.As(err, &te) || err.Error() != "Porch did not answer the update of PackageRevision fleet/deploy.app.packagevariant-1 within 50ms (--porch-timeout)" ||
		!errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a request that never answers: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("the request took %s under a bound of 50ms", took)
	}
	if err := b.SubResource("approval").Update(context.Background(), pr); !errors.As(err, &te) || te.Verb != "approval update" {
		t.Fatalf("a subresource request: %v", err)
	}
	// A caller whose own context ends first: its error, not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.Update(ctx, pr); errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled caller: %v", err)
	}
	// A request that answers.
	if err := b.Get(context.Background(), client.ObjectKeyFromObject(pr), &porchapi.PackageRevision{}); err == nil || errors.As(err, &te) {
		t.Fatalf("a get that answers NotFound: %v", err)
	}
	hangingList := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		List: func(ctx context.Context, _ client.WithWatch, _ client.ObjectList, _ ...client.ListOption) error {
			return hang(ctx)
		},
	})
	if err := BoundedReader(hangingList, 50*time.Millisecond).List(context.Background(), &porchapi.PackageRevisionList{}); !errors.As(err, &te) || te.Verb != "list" {
		t.Fatalf("a read past the cache that never answers: %v", err)
	}
}
