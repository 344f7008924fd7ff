// Package kittest holds test doubles for the reconcilers' tests; production
// code never imports it.
package kittest

import (
	"errors"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Conflicts makes the next status patches of a fake client fail with a
// conflict, as a patch from a reconcile that read a stale cache fails on a
// real API server. Safe for concurrent use; the zero value fails none.
type Conflicts struct {
	mu sync.Mutex
	n  int
}

// Next makes the next n status patches conflict.
func (c *Conflicts) Next(n int) {
	c.mu.Lock()
	c.n = n
	c.mu.Unlock()
}

// Take is called by a SubResourcePatch interceptor: the conflict o's patch
// must fail with, or nil.
func (c *Conflicts) Take(resource schema.GroupResource, o client.Object) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		return nil
	}
	c.n--
	return apierrors.NewConflict(resource, o.GetName(), errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}
