package v1alpha2

import (
	"github.com/pvkit/pvkit/pkg/api/meta"
	pvs "github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Core is the set as pkg/pvsexpand reads it: its name, namespace, UID,
// labels and annotations and the same spec, shared, not copied or encoded.
func (s *PackageVariantSet) Core() *pvs.PackageVariantSet {
	return &pvs.PackageVariantSet{APIVersion: pvs.APIVersion, Kind: pvs.Kind,
		Metadata: meta.ObjectMeta{Name: s.Name, Namespace: s.Namespace, UID: string(s.UID), Labels: s.Labels, Annotations: s.Annotations},
		Spec:     s.Spec}
}
