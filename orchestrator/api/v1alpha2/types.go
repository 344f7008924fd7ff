package v1alpha2

import (
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvs "github.com/pvkit/pvkit/pkg/api/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of a PackageVariantSet: the same as a
// PackageVariant's, documented once in orchestrator/api/v1alpha1/reasons.go.
const (
	ConditionStalled     = pvapi.ConditionStalled
	ConditionReady       = pvapi.ConditionReady
	ConditionReconciling = pvapi.ConditionReconciling

	ReasonValidationError     = pvapi.ReasonValidationError
	ReasonUpstreamNotFound    = pvapi.ReasonUpstreamNotFound
	ReasonUnexpectedError     = pvapi.ReasonUnexpectedError
	ReasonValid               = pvapi.ReasonValid
	ReasonReconciled          = pvapi.ReasonReconciled
	ReasonPartiallyReconciled = pvapi.ReasonPartiallyReconciled
	ReasonKindNotAllowed      = pvapi.ReasonKindNotAllowed
	ReasonMassDeletion        = pvapi.ReasonMassDeletion
	ReasonRemovalHeld         = pvapi.ReasonRemovalHeld
	ReasonTooManyChildren     = pvapi.ReasonTooManyChildren
)

// PackageVariantSet generates one PackageVariant per target.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:categories=porch
// +kubebuilder:printcolumn:name="Upstream",type=string,JSONPath=`.spec.upstream.package`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Rollout",type=string,JSONPath=`.status.rollout.phase`,priority=1
type PackageVariantSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the upstream and the targets.
	Spec pvs.PackageVariantSetSpec `json:"spec,omitempty"`
	// Status is what the controller last observed and did.
	Status PackageVariantSetStatus `json:"status,omitempty"`
}

// PackageVariantSetStatus is the observed state of a PackageVariantSet.
type PackageVariantSetStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Stalled and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// TargetFailures are the target entries that could not be computed in
	// the last reconcile; the other targets were still reconciled.
	// +optional
	TargetFailures []TargetFailure `json:"targetFailures,omitempty"`
	// LastHandledReconcileAt is the value of the annotation
	// pvkit.dev/reconcile-requested-at the last finished reconcile saw
	// (pvctl reconcile waits for it), as Flux's lastHandledReconcileAt.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// Rollout is where the set's staged rollout stands (a pvkit extension:
	// spec.rollout); absent without one.
	// +optional
	Rollout *pvs.RolloutStatus `json:"rollout,omitempty"`
	// PeakChildren is the most PackageVariants the set has had since its
	// mass-deletion guard was last lifted (pvkit.dev/allow-mass-deletion):
	// the baseline the guard counts every loss from, so that removals a few
	// at a time cannot empty a fleet either.
	// +optional
	PeakChildren int `json:"peakChildren,omitempty"`
	// Shard is the shard (its pvkit.dev/shard label; empty: the unlabelled
	// one) whose controller has carried the set's children over to it:
	// a set relabelled to another shard is handed over, its children
	// relabelled with it, once.
	// +optional
	Shard string `json:"shard,omitempty"`
}

// TargetFailure is one target entry that could not be computed.
type TargetFailure struct {
	// Target names the entry, e.g. `spec.targets[0].repositorySelector` (Repository "r").
	Target string `json:"target"`
	// Message says why.
	Message string `json:"message"`
}

// PackageVariantSetList is a list of PackageVariantSets.
//
// +kubebuilder:object:root=true
type PackageVariantSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PackageVariantSet `json:"items"`
}
