// Package v1alpha1 is the config.porch.kpt.dev/v1alpha1 PackageVariant API
// the orchestrator serves and reconciles. The spec is pkg/api/v1alpha1's
// (the same types the functions read); this package adds the Kubernetes
// object around it, the status, and the CRD markers. It is wire-compatible
// with Porch v1.5.3 (rule: porch-yaml): pvkit adds optional fields
// (status.observedGeneration) and schema checks Porch left to the controller
// (enums, required names), and changes no field.
//
// +kubebuilder:object:generate=true
// +groupName=config.porch.kpt.dev
package v1alpha1
