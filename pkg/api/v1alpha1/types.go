package v1alpha1

import "github.com/pvkit/pvkit/pkg/api/meta"

const (
	// Group and Version of the PackageVariant API.
	Group   = "config.porch.kpt.dev"
	Version = "v1alpha1"
	// APIVersion is Group/Version.
	APIVersion = Group + "/" + Version
	// Kind of a PackageVariant.
	Kind = "PackageVariant"

	// Finalizer is set on every PackageVariant while it owns revisions.
	Finalizer = "config.porch.kpt.dev/packagevariants"
)

// AdoptionPolicy says whether a PackageVariant takes over an existing
// downstream revision it did not create.
// +kubebuilder:validation:Enum=adoptNone;adoptExisting
type AdoptionPolicy string

// DeletionPolicy says what happens to owned revisions when the
// PackageVariant is deleted.
// +kubebuilder:validation:Enum=delete;orphan
type DeletionPolicy string

const (
	AdoptionPolicyAdoptExisting AdoptionPolicy = "adoptExisting"
	AdoptionPolicyAdoptNone     AdoptionPolicy = "adoptNone"
	DeletionPolicyDelete        DeletionPolicy = "delete"
	DeletionPolicyOrphan        DeletionPolicy = "orphan"
)

// PackageVariant is a PackageVariant as the mutations read it: metadata and
// spec (the orchestrator's API type adds status around the same spec).
type PackageVariant struct {
	APIVersion string             `json:"apiVersion,omitempty"`
	Kind       string             `json:"kind,omitempty"`
	Metadata   meta.ObjectMeta    `json:"metadata,omitempty"`
	Spec       PackageVariantSpec `json:"spec,omitempty"`
}

// PackageVariantSpec is the desired state of a PackageVariant.
type PackageVariantSpec struct {
	// Upstream is the package revision to clone.
	// +required
	Upstream *Upstream `json:"upstream,omitempty"`
	// Downstream is the repository and package to create.
	// +required
	Downstream *Downstream `json:"downstream,omitempty"`

	// AdoptionPolicy is adoptNone (default) or adoptExisting.
	// +optional
	AdoptionPolicy AdoptionPolicy `json:"adoptionPolicy,omitempty"`
	// DeletionPolicy is delete (default) or orphan.
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`

	// Labels are set on downstream revisions when they are created or adopted.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are set on downstream revisions when they are created or adopted.
	Annotations map[string]string `json:"annotations,omitempty"`

	// PackageContext sets and removes keys of the package context ConfigMap.
	PackageContext *PackageContext `json:"packageContext,omitempty"`
	// Pipeline lists functions to prepend to the downstream Kptfile pipeline.
	Pipeline *Pipeline `json:"pipeline,omitempty"`
	// Injectors select in-cluster objects for the package's injection points.
	Injectors []InjectionSelector `json:"injectors,omitempty"`
	// Health (a pvkit extension, Porch has no such field) says how the
	// cluster that runs the downstream package reports that it runs the
	// published revision; the variant reports it per target
	// (status.downstreamTargets[].health) and a staged rollout waits for it
	// (rule: health-gated-rollouts). A set's rollout.health sets it on
	// every child.
	// +optional
	Health *HealthCheck `json:"health,omitempty"`
	// Approval (a pvkit extension) is a person's approval, given once for
	// a wave of a set's staged rollout (pvkit.dev/rollout-approve; rule:
	// wave-approval): the set writes it on the wave's children, and
	// approval by policy approves the variant's finished draft made from
	// this upstream as Nephio's policy `always` would (gates True, as pvkit
	// last wrote it, not rejected).
	// +optional
	Approval *WaveApproval `json:"approval,omitempty"`
	// Policy (a pvkit extension) is how the variant chooses where pvkit
	// gives it a choice (rule policy-flows-down): what a drift of its
	// published package does, how often it is observed, what becomes of
	// its draft when its upstream moves, whether approval by policy
	// requires provenance. A set writes each child's from its own
	// policies, so that the child obeys what its spec says and reads
	// nothing of its set. A field left out falls back to the variant's
	// annotation of the same policy (deprecated), else to the default.
	// +optional
	Policy *Policy `json:"policy,omitempty"`
}

// Policy is a variant's choices (PackageVariantSpec.Policy); each field
// replaces an annotation, read where the field is absent.
type Policy struct {
	// Drift (pvkit.dev/drift-policy) is what a drift of the published
	// package does: report it (the default), adopt it or revert it, each
	// in a draft approved like any other (rule drift-policy).
	// +optional
	// +kubebuilder:validation:Enum=report;adopt;revert
	Drift string `json:"drift,omitempty"`
	// ObserveInterval (pvkit.dev/observe-interval) is how often the
	// variant with a Published target is reconciled though nothing wakes
	// it, a Go duration of at least one minute, e.g. 10m (rule
	// observe-cadence).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$`
	ObserveInterval string `json:"observeInterval,omitempty"`
	// DraftUpgrade (pvkit.dev/draft-upgrade) is what becomes of an owned,
	// unapproved draft when the upstream moves: upgraded in-place (the
	// default) or stall, as Porch does (rule draft-upgrade).
	// +optional
	// +kubebuilder:validation:Enum=in-place;stall
	DraftUpgrade string `json:"draftUpgrade,omitempty"`
	// RequireProvenance (pvkit.dev/require-provenance) makes approval by
	// policy approve a draft only when its provenance record holds (rule
	// require-provenance).
	// +optional
	RequireProvenance *bool `json:"requireProvenance,omitempty"`
}

// WaveApproval names the upstream revision whose drafts were approved, and
// by what decision.
type WaveApproval struct {
	// UpstreamRef is the upstream lock's ref of the drafts approved
	// (`<package>/v<N>`, Porch's).
	// +kubebuilder:validation:MinLength=1
	UpstreamRef string `json:"upstreamRef"`
	// By says whose decision it is ("wave canary of PackageVariantSet app").
	// +optional
	By string `json:"by,omitempty"`
}

// HealthCheck names an object that another controller keeps (Flux's
// Kustomization, Config Sync's RootSync, or any object whose status says
// what a cluster applied), read with the controller's rights (its kind must
// be a readable kind) in the variant's own namespace, or in Namespace, of
// the management cluster or of the cluster ClusterExpr names, and a
// condition over it.
type HealthCheck struct {
	// ClusterExpr (absent: the management cluster, where the controller
	// runs) is a CEL expression giving the name of the cluster whose API
	// server holds the object, over the same variables as NameExpr; e.g.
	// `downstream.repo` where a deployment repository is named after its
	// cluster (Nephio's). The cluster is reached through the kubeconfig in
	// the Secret `<cluster>-kubeconfig`, key `value`, in the variant's
	// namespace (Cluster API's convention); pvctl takes the cluster's
	// objects from files annotated pvkit.dev/cluster or from a kubeconfig
	// context (--cluster NAME=CONTEXT).
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	ClusterExpr string `json:"clusterExpr,omitempty"`
	// Namespace is the object's namespace where it is not the variant's
	// (argocd, flux-system); on another cluster, the namespace there.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace,omitempty"`
	// APIVersion and Kind of the object, e.g.
	// kustomize.toolkit.fluxcd.io/v1 Kustomization.
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion"`
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// NameExpr is a CEL expression giving the object's name (a string),
	// over `variant` (name, namespace, labels, annotations) and
	// `downstream` (repo, package); e.g. `downstream.repo`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	NameExpr string `json:"nameExpr"`
	// Condition is a CEL expression, a bool, true when the object reports
	// the revision applied and healthy: over `object` (the object as read),
	// `revision` (the published downstream revision: name, repo, package,
	// revision, ref, the git tag Porch made for it, commit, the commit
	// that published it where known, branch, commits, the commits known
	// to hold it, and upstream: repo, package, ref, commit; docs/behavior.md
	// rule health-gated-rollouts), `variant` and `downstream`; e.g.
	// `object.status.lastAppliedRevision.startsWith(revision.ref + "@")`.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Condition string `json:"condition"`
	// Failed is a CEL expression, a bool, true when the object reports
	// that the revision failed (the third state beside healthy and not
	// yet, as Flux's healthCheckExprs `failed`): a staged rollout then
	// fails the child at once, without waiting out its progress deadline.
	// Over the same variables as Condition; it is evaluated first (a
	// failure wins), so it should name the revision, e.g.
	// `object.status.lastAttemptedRevision.startsWith(revision.ref + "@") &&
	// object.status.conditions.exists(c, c.type == "Ready" && c.status == "False")`.
	// Absent: not ready is never failed before the deadline.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Failed string `json:"failed,omitempty"`
	// Message is a CEL expression, a string, saying in the cluster's words
	// what the object reports, over the same variables as Condition: a
	// waiting or failed target's health carries it, and so do the wave's
	// message and `pvctl rollout status -o wide`. Absent: the reason and
	// message of the object's Ready (or Healthy) condition, or of Argo
	// CD's status.health.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
}

// Upstream names an upstream package revision.
// +kubebuilder:validation:XValidation:rule="!has(self.semver) || (!has(self.revision) && !has(self.workspaceName))",message="semver follows a range of versions: it cannot be used with revision or workspaceName"
type Upstream struct {
	// Repo is the name of a Repository in the PackageVariant's namespace.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	// +kubebuilder:validation:MinLength=1
	Repo string `json:"repo,omitempty"`
	// Package is the package name in that repository: '/'-separated
	// DNS-1123 labels, as Porch requires.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(/[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	// +kubebuilder:validation:MinLength=1
	Package string `json:"package,omitempty"`
	// Revision is a published revision number, or -1: the branch
	// placeholder (Porch's revision -1, workspace = the branch).
	// +kubebuilder:validation:Minimum=-1
	Revision int `json:"revision,omitempty"`
	// WorkspaceName names a revision by its workspace.
	WorkspaceName string `json:"workspaceName,omitempty"`
	// Semver (a pvkit extension, Porch has no such field) follows the
	// newest published revision whose workspace or tag (v1.4.2) is in this
	// semver range: `1` or `1.x`, `~1.2`, `^1.2.3`, `>=1.2 <2`, `1.2 - 1.4`,
	// alternatives with `||` (Flux's spec.ref.semver, Helm's chart version).
	// Not with revision or workspaceName.
	// +kubebuilder:validation:MaxLength=256
	Semver string `json:"semver,omitempty"`
}

// Downstream names the package a PackageVariant creates.
type Downstream struct {
	// Repo is the name of a Repository in the PackageVariant's namespace.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	// +kubebuilder:validation:MinLength=1
	Repo string `json:"repo,omitempty"`
	// Package is the package name to create in that repository:
	// '/'-separated DNS-1123 labels, as Porch requires.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(/[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +required
	// +kubebuilder:validation:MinLength=1
	Package string `json:"package,omitempty"`
}

// PackageContext is the data to add to or remove from the kptfile.kpt.dev
// ConfigMap.
// +kubebuilder:validation:XValidation:rule="!has(self.data) || !self.data.exists(k, k == 'name' || k == 'package-path')",message="data must not contain the reserved keys name and package-path (kpt and Porch set them)"
// +kubebuilder:validation:XValidation:rule="!has(self.removeKeys) || !self.removeKeys.exists(k, k == 'name' || k == 'package-path')",message="removeKeys must not contain the reserved keys name and package-path (kpt and Porch set them)"
type PackageContext struct {
	// Data are keys to set.
	Data map[string]string `json:"data,omitempty"`
	// RemoveKeys are keys to remove.
	RemoveKeys []string `json:"removeKeys,omitempty"`
}

// InjectionSelector selects an in-cluster object by name, optionally
// restricted to a group, version and kind.
type InjectionSelector struct {
	// Group, when set, must equal the injection point's API group.
	// +optional
	Group *string `json:"group,omitempty"`
	// Version, when set, must equal the injection point's API version.
	// +optional
	Version *string `json:"version,omitempty"`
	// Kind, when set, must equal the injection point's kind.
	// +optional
	Kind *string `json:"kind,omitempty"`
	// Name of the in-cluster object.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// Pipeline is a kpt Kptfile pipeline.
type Pipeline struct {
	Mutators   []Function `json:"mutators,omitempty"`
	Validators []Function `json:"validators,omitempty"`
}

// Function is a kpt pipeline function.
type Function struct {
	Image      string            `json:"image,omitempty"`
	Exec       string            `json:"exec,omitempty"`
	ConfigPath string            `json:"configPath,omitempty"`
	ConfigMap  map[string]string `json:"configMap,omitempty"`
	Name       string            `json:"name,omitempty"`
	Selectors  []Selector        `json:"selectors,omitempty"`
	Exclusions []Selector        `json:"exclude,omitempty"`
	// Tag is a semver constraint on the image tag (newer kpt).
	Tag string `json:"tag,omitempty"`
}

// Selector selects package resources a function applies to.
type Selector struct {
	APIVersion  string            `json:"apiVersion,omitempty"`
	Kind        string            `json:"kind,omitempty"`
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}
