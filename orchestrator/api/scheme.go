// Package api is the orchestrator's API: the PackageVariant (v1alpha1) and
// PackageVariantSet (v1alpha2) CRD types, and the scheme of every type the
// controller and pvctl read or write.
package api

import (
	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// Scheme holds every type the orchestrator reads or writes: Kubernetes'
// built-in kinds, PackageVariant, PackageVariantSet, Porch's PackageRevision
// and PackageRevisionResources, and Repository.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, pvapi.AddToScheme, pvsapi.AddToScheme, porchapi.AddToScheme, porchconfig.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
