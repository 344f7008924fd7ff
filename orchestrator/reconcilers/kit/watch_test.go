package kit

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// fakeCtrl counts Watch calls and fails them with err.
type fakeCtrl struct {
	controller.Controller
	calls int
	err   error
}

func (f *fakeCtrl) Watch(source.Source) error {
	f.calls++
	return f.err
}

func TestEnsureWatchesEachKindOnce(t *testing.T) {
	c := &fakeCtrl{}
	w := NewWatcher(c, nil, nil)
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	sec := schema.GroupVersionKind{Version: "v1", Kind: "Secret"}
	for _, gvk := range []schema.GroupVersionKind{cm, cm, sec, cm, sec} {
		if err := w.Ensure(gvk); err != nil {
			t.Fatalf("Ensure(%s): %v", gvk, err)
		}
	}
	if c.calls != 2 {
		t.Errorf("Watch called %d times for 2 kinds, want 2", c.calls)
	}
}

func TestEnsureRetriesAfterAFailedWatch(t *testing.T) {
	c := &fakeCtrl{err: errors.New("cache not started")}
	w := NewWatcher(c, nil, nil)
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	if err := w.Ensure(cm); err == nil || err.Error() != "cache not started" {
		t.Fatalf("Ensure error = %v, want the controller's error", err)
	}
	c.err = nil
	if err := w.Ensure(cm); err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if c.calls != 2 {
		t.Errorf("Watch called %d times, want 2 (a failed watch is not remembered)", c.calls)
	}
}

func TestNilWatcherDoesNothing(t *testing.T) {
	var w *Watcher
	if err := w.Ensure(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}); err != nil {
		t.Fatalf("nil Watcher: %v", err)
	}
}
