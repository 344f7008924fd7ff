package kit

import (
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// Issue 20 #4: a generation-changed predicate where it saves work: the
// reconciler's own status patch brings no reconcile; what can change the
// outcome does.
func TestChangedPredicate(t *testing.T) {
	base := &pvapi.PackageVariant{ObjectMeta: metav1.ObjectMeta{Name: "v", Generation: 1, Finalizers: []string{"f"}}}
	p := Changed()
	if !p.Create(event.CreateEvent{Object: base}) || !p.Delete(event.DeleteEvent{Object: base}) {
		t.Fatal("creates and deletes must pass")
	}
	for name, tc := range map[string]struct {
		change func(*pvapi.PackageVariant)
		pass   bool
	}{
		"status only": {func(v *pvapi.PackageVariant) {
			v.Status.ObservedGeneration = 1
			v.ResourceVersion = "2"
		}, false},
		"spec (generation)": {func(v *pvapi.PackageVariant) { v.Generation = 2 }, true},
		"a label":           {func(v *pvapi.PackageVariant) { v.Labels = map[string]string{"a": "b"} }, true},
		"an annotation":     {func(v *pvapi.PackageVariant) { v.Annotations = map[string]string{"a": "b"} }, true},
		"finalizers":        {func(v *pvapi.PackageVariant) { v.Finalizers = nil }, true},
		"deletion": {func(v *pvapi.PackageVariant) {
			now := metav1.Now()
			v.DeletionTimestamp = &now
		}, true},
	} {
		n := base.DeepCopy()
		tc.change(n)
		if got := p.Update(event.UpdateEvent{ObjectOld: base, ObjectNew: n}); got != tc.pass {
			t.Errorf("%s: passes %v, want %v", name, got, tc.pass)
		}
	}
}
