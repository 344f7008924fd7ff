// Package meta holds the few Kubernetes object-metadata types the mutations
// read and write, with the Kubernetes JSON field names. The functions use
// these instead of apimachinery's metav1, which would add its runtime and
// serializers to every binary; the orchestrator's API types embed the real
// metav1 types around the same specs.
//
// +kubebuilder:object:generate=true
package meta

// ObjectMeta is the part of metadata the mutations use.
type ObjectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	UID         string            `json:"uid,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// OwnerReferences: a set's children name the set.
	OwnerReferences []OwnerReference `json:"ownerReferences,omitempty"`
}

// OwnerReference is a Kubernetes owner reference, as pvkit writes and
// reads it everywhere (a set's children, the stores' revision owners, the
// git store's metadata file): controller false is left out, and
// blockOwnerDeletion is not used.
type OwnerReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Controller bool   `json:"controller,omitempty"`
}
