package v1alpha1

import (
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// Core is the variant as pkg/ reads it (pkg/variant: validation and the
// mutation chain): its name, namespace, UID, labels and annotations and the
// same spec, shared, not copied or encoded.
func (v *PackageVariant) Core() *pv.PackageVariant {
	return &pv.PackageVariant{APIVersion: pv.APIVersion, Kind: pv.Kind,
		Metadata: meta.ObjectMeta{Name: v.Name, Namespace: v.Namespace, UID: string(v.UID), Labels: v.Labels, Annotations: v.Annotations},
		Spec:     v.Spec}
}
