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
	mu    sync.Mutex
	n     int
	every int // every'th patch conflicts (EveryNth), 0: none
	seen  int
	taken int
}

// Taken is how many conflicts were given.
func (c *Conflicts) Taken() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taken
}

// EveryNth makes every n'th status patch conflict from now on (0: none).
func (c *Conflicts) EveryNth(n int) {
	c.mu.Lock()
	c.every, c.seen = n, 0
	c.mu.Unlock()
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
	c.seen++
	switch {
	case c.n > 0:
		c.n--
	case c.every > 0 && c.seen%c.every == 0:
	default:
		return nil
	}
	c.taken++
	return apierrors.NewConflict(resource, o.GetName(), errors.New("the object has been modified; please apply your changes to the latest version and try again"))
}
