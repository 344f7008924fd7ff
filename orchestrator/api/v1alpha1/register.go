package v1alpha1

import (
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is config.porch.kpt.dev/v1alpha1.
	GroupVersion = schema.GroupVersion{Group: pv.Group, Version: pv.Version}
	// SchemeBuilder registers the types.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&PackageVariant{}, &PackageVariantList{})
}
