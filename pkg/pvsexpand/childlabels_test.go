package pvsexpand

import (
	"maps"
	"testing"

	"github.com/pvkit/pvkit/pkg/api/meta"
	"github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Rule child-labels: "*" copies every target label but pvkit's and
// Porch's own; a change removes the copied keys no longer wanted and keeps
// a person's labels; nothing without the annotation.
func TestTargetLabels(t *testing.T) {
	target := map[string]string{"region": "us", "env": "prod", v1alpha2.ShardLabel: "a", "pvkit.dev/x": "y", v1alpha2.SetLabel: "other", "porch.kpt.dev/z": "1"}
	set := &v1alpha2.PackageVariantSet{Metadata: meta.ObjectMeta{Name: "s", Annotations: map[string]string{v1alpha2.ChildLabelsAnnotation: "*"}}}
	if got := targetLabels(set, target); !maps.Equal(got, map[string]string{"region": "us", "env": "prod"}) {
		t.Fatalf("*: %v", got)
	}
	set.Metadata.Annotations[v1alpha2.ChildLabelsAnnotation] = " region , nosuch "
	if got := targetLabels(set, target); !maps.Equal(got, map[string]string{"region": "us"}) {
		t.Fatalf("region: %v", got)
	}
	if got := targetLabels(&v1alpha2.PackageVariantSet{}, target); got != nil {
		t.Fatalf("unasked: %v", got)
	}
	cur := &v1alpha1.PackageVariant{Metadata: meta.ObjectMeta{
		Labels:      map[string]string{"region": "eu", "tier": "gold", "owner": "bob", v1alpha2.ShardLabel: "a"},
		Annotations: map[string]string{v1alpha2.CopiedLabelsAnnotation: "region,tier", "note": "n"}}}
	desired := &v1alpha1.PackageVariant{Metadata: meta.ObjectMeta{
		Labels:      map[string]string{"region": "us"},
		Annotations: map[string]string{v1alpha2.CopiedLabelsAnnotation: "region"}}}
	if SameMetadata(cur, desired) {
		t.Fatal("a stale child reads the same")
	}
	l, a := ChildMetadata(cur, desired).Apply(cur.Metadata.Labels, cur.Metadata.Annotations)
	if !maps.Equal(l, map[string]string{"region": "us", "owner": "bob"}) || !maps.Equal(a, map[string]string{v1alpha2.CopiedLabelsAnnotation: "region", "note": "n"}) {
		t.Fatalf("after the change: %v, %v", l, a)
	}
	done := &v1alpha1.PackageVariant{Metadata: meta.ObjectMeta{Labels: l, Annotations: a}}
	if !SameMetadata(done, desired) {
		t.Fatal("the changed child does not read the same")
	}
}
