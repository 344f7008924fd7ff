// Package v1alpha2 is the config.porch.kpt.dev/v1alpha2 PackageVariantSet API
// the orchestrator serves and reconciles, around pkg/api/v1alpha2's spec (the
// one pvs-expand reads). Wire-compatible with Porch v1.5.3 (rule: porch-yaml); pvkit adds
// optional fields: status.observedGeneration, status.targetFailures, and
// packageNames under the selectors.
//
// +kubebuilder:object:generate=true
// +groupName=config.porch.kpt.dev
package v1alpha2
