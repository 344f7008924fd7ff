// Package v1alpha1 holds the config.porch.kpt.dev/v1alpha1 PackageVariant API
// as pvkit reads and writes it: field for field the wire format of Porch
// v1.5.3's PackageVariant (rule: porch-yaml), including the `tag` field
// of newer kpt pipeline functions. pvkit may add optional fields; it never
// changes existing ones. These are plain types with JSON tags and no
// apimachinery: the mutations in pkg/ and the orchestrator share the spec
// types; the orchestrator's CRD types wrap them with metav1 metadata and
// status.
//
// +kubebuilder:object:generate=true
package v1alpha1
