package kit

// Watcher adds watches on kinds a reconciler only learns about while
// reconciling (the kinds of a package's injection points, the kinds a set
// selects), each once, mapping events through a function.

import (
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Watcher watches kinds on demand for one controller.
type Watcher struct {
	mu      sync.Mutex
	ctrl    controller.Controller
	cache   cache.Cache
	mapFn   handler.MapFunc
	watched map[schema.GroupVersionKind]bool
}

// NewWatcher returns a Watcher that enqueues what mapFn returns for each event.
func NewWatcher(c controller.Controller, ca cache.Cache, mapFn handler.MapFunc) *Watcher {
	return &Watcher{ctrl: c, cache: ca, mapFn: mapFn, watched: map[schema.GroupVersionKind]bool{}}
}

// Ensure watches gvk unless it already does. A nil Watcher (a reconciler
// outside a manager, in tests) does nothing.
func (w *Watcher) Ensure(gvk schema.GroupVersionKind) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[gvk] {
		return nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := w.ctrl.Watch(source.Kind[client.Object](w.cache, u, handler.EnqueueRequestsFromMapFunc(w.mapFn))); err != nil {
		return err
	}
	w.watched[gvk] = true
	return nil
}
