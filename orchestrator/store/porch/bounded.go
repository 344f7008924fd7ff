package porch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultRequestTimeout bounds one request to Porch (the controller's
// --porch-timeout): a write renders the package through Porch's function
// runner, which takes seconds; a request past the bound is one Porch lost
// (measured on Porch v1.5.3: a porch-server killed mid-write, or a
// repository whose clone is broken, leaves requests that never answer),
// and without a bound it held a worker for good.
const DefaultRequestTimeout = 3 * time.Minute

// RequestTimeoutError is a request to Porch that did not answer within the
// bound.
type RequestTimeoutError struct {
	Verb, Object string
	Timeout      time.Duration
	Err          error
}

func (e *RequestTimeoutError) Error() string {
	return fmt.Sprintf("Porch did not answer the %s of %s within %s (--porch-timeout)", e.Verb, e.Object, e.Timeout)
}
func (e *RequestTimeoutError) Unwrap() error { return e.Err }

// Bounded is c with every request bounded by timeout (0:
// DefaultRequestTimeout): the store's requests, not the manager's watches,
// which use their own clients. A request that passes it fails with a
// RequestTimeoutError naming it.
func Bounded(c client.Client, timeout time.Duration) client.Client {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return &bounded{Client: c, timeout: timeout}
}

type bounded struct {
	client.Client
	timeout time.Duration
}

// call runs one request under the bound.
func (b *bounded) call(ctx context.Context, verb string, obj any, f func(context.Context) error) error {
	rctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	err := f(rctx)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return &RequestTimeoutError{Verb: verb, Object: describe(obj), Timeout: b.timeout, Err: err}
	}
	return err
}

func describe(obj any) string {
	switch o := obj.(type) {
	case client.Object:
		kind := o.GetObjectKind().GroupVersionKind().Kind
		if kind == "" {
			kind = fmt.Sprintf("%T", o)
		}
		return fmt.Sprintf("%s %s/%s", kind, o.GetNamespace(), o.GetName())
	case client.ObjectList:
		return fmt.Sprintf("%T", o)
	}
	return fmt.Sprint(obj)
}

func (b *bounded) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return b.call(ctx, "get", obj, func(ctx context.Context) error { return b.Client.Get(ctx, key, obj, opts...) })
}

func (b *bounded) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return b.call(ctx, "list", list, func(ctx context.Context) error { return b.Client.List(ctx, list, opts...) })
}

func (b *bounded) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	return b.call(ctx, "create", obj, func(ctx context.Context) error { return b.Client.Create(ctx, obj, opts...) })
}

func (b *bounded) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return b.call(ctx, "update", obj, func(ctx context.Context) error { return b.Client.Update(ctx, obj, opts...) })
}

func (b *bounded) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	return b.call(ctx, "patch", obj, func(ctx context.Context) error { return b.Client.Patch(ctx, obj, patch, opts...) })
}

func (b *bounded) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	return b.call(ctx, "delete", obj, func(ctx context.Context) error { return b.Client.Delete(ctx, obj, opts...) })
}

func (b *bounded) SubResource(sub string) client.SubResourceClient {
	return &boundedSub{SubResourceClient: b.Client.SubResource(sub), b: b, sub: sub}
}

func (b *bounded) Status() client.SubResourceWriter { return b.SubResource("status") }

type boundedSub struct {
	client.SubResourceClient
	b   *bounded
	sub string
}

func (s *boundedSub) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.b.call(ctx, s.sub+" update", obj, func(ctx context.Context) error { return s.SubResourceClient.Update(ctx, obj, opts...) })
}

func (s *boundedSub) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.b.call(ctx, s.sub+" patch", obj, func(ctx context.Context) error { return s.SubResourceClient.Patch(ctx, obj, patch, opts...) })
}

// BoundedReader is r with every read bounded as Bounded bounds them.
func BoundedReader(r client.Reader, timeout time.Duration) client.Reader {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return &boundedReader{r: r, b: &bounded{timeout: timeout}}
}

type boundedReader struct {
	r client.Reader
	b *bounded
}

func (r *boundedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.b.call(ctx, "get", obj, func(ctx context.Context) error { return r.r.Get(ctx, key, obj, opts...) })
}

func (r *boundedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.b.call(ctx, "list", list, func(ctx context.Context) error { return r.r.List(ctx, list, opts...) })
}
