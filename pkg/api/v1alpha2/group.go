package v1alpha2

import (
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// The PackageGroup kind (rule: package-groups): what a group package's
// group.yaml holds.
const (
	GroupAPIVersion = "pvkit.dev/v1alpha1"
	GroupKind       = "PackageGroup"
	// GroupFile is the PackageGroup's file at the group package's root.
	GroupFile = "group.yaml"

	// GroupLabel, on a child of a grouped set, names the group's package;
	// MemberLabel the member the child deploys.
	GroupLabel  = "pvkit.dev/group"
	MemberLabel = "pvkit.dev/group-member"
	// GroupRevisionAnnotation, on a child of a grouped set, names the
	// group's package revision the child's upstream comes from.
	GroupRevisionAnnotation = "pvkit.dev/group-revision"
)

// PackageGroup is a versioned list of upstreams released together: the
// content of a group package's group.yaml. Each revision of the group
// package is a version of the group.
// +kubebuilder:object:generate=true
type PackageGroup struct {
	APIVersion string           `json:"apiVersion,omitempty"`
	Kind       string           `json:"kind,omitempty"`
	Metadata   meta.ObjectMeta  `json:"metadata,omitempty"`
	Spec       PackageGroupSpec `json:"spec,omitempty"`
}

// PackageGroupSpec lists the group's members.
type PackageGroupSpec struct {
	// Members are the group's packages, at least one; each name once, each
	// downstream package once.
	Members []GroupMember `json:"members,omitempty"`
}

// GroupMember is one package of a group.
type GroupMember struct {
	// Name names the member: the child of each target that deploys it is
	// `<set>-<repository>-<package>`, and its downstream package is Name
	// unless Package says otherwise. A DNS label.
	Name string `json:"name"`
	// Upstream is the member's upstream package revision, selected as a
	// PackageVariant's is (revision, workspaceName or semver).
	Upstream pv.Upstream `json:"upstream"`
	// Package is the member's downstream package (default: Name).
	// +optional
	Package string `json:"package,omitempty"`
}

// DownstreamPackage is the member's downstream package.
func (m GroupMember) DownstreamPackage() string {
	if m.Package != "" {
		return m.Package
	}
	return m.Name
}
