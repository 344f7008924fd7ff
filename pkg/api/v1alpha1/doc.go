// Package v1alpha1 holds the config.porch.kpt.dev/v1alpha1 PackageVariant API
// as pvkit reads and writes it: field for field the wire format of Porch
// v1.5.3's PackageVariant (reference-behavior.md A1), including the `tag` field
// of newer kpt pipeline functions. pvkit may add optional fields; it never
// changes existing ones. These are plain types with JSON tags: the mutations
// in pkg/ and the orchestrator share them, and nothing here imports a client.
package v1alpha1
