// Package v1alpha2 holds the config.porch.kpt.dev/v1alpha2 PackageVariantSet
// API, field for field the wire format of Porch v1.5.3's (rule: porch-yaml), plus two
// optional fields the design doc describes and Porch never implemented:
// `packageNames` under `repositorySelector` and `objectSelector`.
//
// +kubebuilder:object:generate=true
package v1alpha2
