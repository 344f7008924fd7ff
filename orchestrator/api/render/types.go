// Package render holds Porch's render result types as they appear in a
// PackageVariant's status (porch.kpt.dev's RenderStatus, same JSON). They
// live apart from the CRD packages so that controller-gen does not take
// ResultList, which has a kind's TypeMeta, for a kind of its own.
//
// +kubebuilder:object:generate=true
package render

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// RenderStatus is Porch's render result of a revision.
type RenderStatus struct {
	// +optional
	Result ResultList `json:"result,omitempty"`
	// Err is the render error, if any.
	Err string `json:"error"`
}

// ResultList is a kpt function results list as Porch reports it.
type ResultList struct {
	metav1.TypeMeta `json:",inline"`
	// Metadata is in the schema as Porch's CRD has it (pvkit's CRD is a
	// superset of Porch's) and never written: Porch's list carries a name
	// ("fnresults") that the schema does not know, and the API server
	// dropped it with an "unknown field" warning on every status write.
	// +optional
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`
	// ExitCode of the render.
	ExitCode int `json:"exitCode"`
	// Items are each function's results.
	// +optional
	Items []*ResultListItem `json:"items,omitempty"`
}

// ResultListItem is one function's results.
type ResultListItem struct {
	Image    string       `json:"image,omitempty"`
	ExecPath string       `json:"exec,omitempty"`
	Stderr   string       `json:"stderr,omitempty"`
	ExitCode int          `json:"exitCode"`
	Results  []ResultItem `json:"results,omitempty"`
}

// ResultItem is one function result.
type ResultItem struct {
	Message     string              `json:"message,omitempty"`
	Severity    string              `json:"severity,omitempty"`
	ResourceRef *ResourceIdentifier `json:"resourceRef,omitempty"`
	Field       *ResultField        `json:"field,omitempty"`
	File        *ResultFile         `json:"file,omitempty"`
	Tags        map[string]string   `json:"tags,omitempty"`
}

// ResourceIdentifier names the object a result is about.
type ResourceIdentifier struct {
	metav1.TypeMeta `json:",inline"`
	Name            string `json:"name,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
}

// ResultField is the field a result is about.
type ResultField struct {
	Path          string `json:"path,omitempty"`
	CurrentValue  string `json:"currentValue,omitempty"`
	ProposedValue string `json:"proposedValue,omitempty"`
}

// ResultFile is the file a result is about.
type ResultFile struct {
	Path  string `json:"path,omitempty"`
	Index int    `json:"index,omitempty"`
}
