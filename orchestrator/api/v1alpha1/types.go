package v1alpha1

import (
	"github.com/pvkit/pvkit/orchestrator/api/render"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types of a PackageVariant (reasons: reasons.go).
const (
	// ConditionStalled is True when reconciling needs the user to act (an
	// invalid spec, a missing upstream, a stale draft, a package that cannot
	// be mutated); it is not retried until something changes.
	ConditionStalled = "Stalled"
	// ConditionReady is True when the downstream is up to date.
	ConditionReady = "Ready"
	// ConditionReconciling is True while a transient failure is retried.
	ConditionReconciling = "Reconciling"
)

// PackageVariant clones an upstream package revision into a downstream
// package and keeps the downstream specialised and up to date.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=pv;pvs-child,categories=porch
// +kubebuilder:printcolumn:name="Upstream",type=string,JSONPath=`.spec.upstream.package`
// +kubebuilder:printcolumn:name="Downstream Repo",type=string,JSONPath=`.spec.downstream.repo`
// +kubebuilder:printcolumn:name="Downstream",type=string,JSONPath=`.spec.downstream.package`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type PackageVariant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what the downstream should be.
	Spec pv.PackageVariantSpec `json:"spec,omitempty"`
	// Status is what the controller last observed and did.
	Status PackageVariantStatus `json:"status,omitempty"`
}

// PackageVariantStatus is the observed state of a PackageVariant.
type PackageVariantStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are Stalled and Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// DownstreamTargets are the downstream revisions the PackageVariant
	// created or adopted: its Drafts and Proposed revisions, or else its
	// latest Published one, with their last render result. One entry per
	// revision, keyed by its name: a status write that conflicts is rebased
	// entry by entry.
	// +optional
	// +listType=map
	// +listMapKey=name
	DownstreamTargets []DownstreamTarget `json:"downstreamTargets,omitempty"`
	// LastHandledReconcileAt is the value of the annotation
	// pvkit.dev/reconcile-requested-at the last finished reconcile saw
	// (pvctl reconcile waits for it), as Flux's lastHandledReconcileAt.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// DownstreamTarget is one downstream revision.
type DownstreamTarget struct {
	// Name of the PackageRevision.
	// +required
	Name string `json:"name"`
	// RenderStatus is Porch's render result after the last update.
	// +optional
	RenderStatus render.RenderStatus `json:"renderStatus,omitempty"`
	// LastWrite is the digest (its content by meaning) of the draft as the
	// variant last wrote it. Approval by policy approves a draft only while
	// its content has this digest: a draft anyone else changed since is
	// left to a person (and Edited says so). It lives in the status, which only the controller writes
	// (pvctl: its state file), not on the draft, which its editors write.
	// +optional
	LastWrite string `json:"lastWrite,omitempty"`
	// UnconfirmedWrite is the digest of the variant's write of the draft
	// while whether it landed is not known: recorded before the write is
	// sent, and kept when Porch answered it with an error and the draft
	// could not be read back as moved on (Porch v1.5.3 under load: "remote
	// not found", "ref file is empty"). The next reconcile that reads the draft at this digest takes
	// it for the variant's last write (LastWrite); one that reads it at any
	// other drops it (the write did not land as sent, or someone changed
	// the draft since, which the draft's editors cannot make look like the
	// variant's: it lives in the status).
	// +optional
	UnconfirmedWrite string `json:"unconfirmedWrite,omitempty"`
	// CreatedAt is the version a draft this variant created was at when
	// the reconcile that created it could not read it (so no digest is
	// known): a later reconcile that finds it at that version takes it for
	// the variant's own, as its creation left it (nobody wrote it since:
	// any write moves the version); one that finds it moved takes it for a
	// person's. Cleared once a last write is recorded. (Older pvkit wrote
	// it into LastWrite as "created@<version>", which is still read.)
	// +optional
	CreatedAt string `json:"createdAt,omitempty"`
	// Lifecycle is the revision's lifecycle as the variant last read it
	// (Draft, Proposed, Published): how it tells a rejection.
	// +optional
	Lifecycle string `json:"lifecycle,omitempty"`
	// Revision is the revision's number once published, as listed.
	// +optional
	Revision int `json:"revision,omitempty"`
	// Commit is the git commit that published the revision, where the
	// store knows it (pvctl's git store: its tag's commit; Porch v1.5.3:
	// the revision's resourceVersion, which its git cache makes the
	// commit): what a GitOps agent that tracks the branch reports back
	// (revision.commit of a health check).
	// +optional
	Commit string `json:"commit,omitempty"`
	// Edited: the variant read this draft different from its own last
	// write of it (LastWrite): someone else edited it, a person's push, say.
	// It stays true while the draft is there (a later write of the variant
	// keeps the edit), so that whatever would delete the draft (a set's
	// removal of the variant, pvctl run --prune) can name what a person
	// would lose.
	// +optional
	Edited bool `json:"edited,omitempty"`
	// UpstreamLock is the upstream revision this target was cloned or last
	// upgraded from, as the variant last read or made it (Porch's
	// status.upstreamLock of the revision). A set's staged rollout tells
	// from it whether the target is at the revision the rollout moves the
	// variant to: a variant is done there when a Published target is
	// locked to it (rule: child-status-contract).
	// +optional
	UpstreamLock *UpstreamLock `json:"upstreamLock,omitempty"`
	// Blocked says what keeps this revision from being published, with a
	// reason (GateClosed, Rejected, AwaitingApproval; reasons.go); unset
	// once it is published. A staged rollout counts a variant whose draft
	// at its target is GateClosed or Rejected failed (it cannot be
	// approved without a change) and waits for one AwaitingApproval,
	// naming this message.
	// +optional
	Blocked *Blocked `json:"blocked,omitempty"`
	// Health is how the target's cluster reports it (spec.health), for a
	// Published target only: read by the variant, which owns the fact; a
	// staged rollout judges the variant from it (rule:
	// health-gated-rollouts).
	// +optional
	Health *TargetHealth `json:"health,omitempty"`
	// Drift says that the downstream package changed behind the variant's
	// back (rule: published-drift): a newer published revision it did not
	// make (a person's copy and approval), or the package on the
	// repository's branch no longer what was approved (a commit pvkit and
	// Porch did not make). Unset when there is none.
	// +optional
	Drift *TargetDrift `json:"drift,omitempty"`
	// Kept names the files this revision's upgrade kept although the new
	// upstream dropped them, because a person changed them: never
	// dropped silently. Set when the upgrade draft is made,
	// kept while the target is.
	// +optional
	Kept *TargetKept `json:"kept,omitempty"`
}

// TargetKept is what an upgrade kept of a person's against its upstream.
type TargetKept struct {
	// Files are the files kept, sorted, at most 20 (the message says how
	// many more).
	// +kubebuilder:validation:MaxItems=20
	Files []string `json:"files"`
	// Message says which upstream dropped them and what to do.
	// +optional
	Message string `json:"message,omitempty"`
}

// TargetDrift is a change of a published target's package the variant did
// not make.
type TargetDrift struct {
	// Reason is NewerRevision, ContentChanged or BranchUnreadable.
	// +kubebuilder:validation:Enum=NewerRevision;ContentChanged;BranchUnreadable
	Reason string `json:"reason"`
	// Revision is the PackageRevision that drifted from the target: the
	// newer revision, or Porch's branch placeholder (`<repo>.<package>.main`)
	// whose content changed.
	Revision string `json:"revision"`
	// Files are the package's files that differ from the target
	// (ContentChanged), sorted, at most 20 (the message says how many
	// more); `pvctl diff REVISION --against TARGET` shows the change.
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Files []string `json:"files,omitempty"`
	// Message says what changed and what to do.
	// +optional
	Message string `json:"message,omitempty"`
}

// TargetHealth is what the health check last read of a published target.
type TargetHealth struct {
	// Status is True (the condition holds), False (it does not) or
	// Unknown (the object could not be read or judged: its message says
	// why).
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status"`
	// Reason is Healthy, NotHealthy, HealthFailed, ObjectNotFound,
	// KindNotAllowed, CheckFailed, KubeconfigUnavailable or
	// ClusterUnreachable (reasons.go).
	Reason string `json:"reason"`
	// Message says what was read.
	// +optional
	Message string `json:"message,omitempty"`
	// Since is when Status last changed (a staged rollout's minSuccessTime
	// and progress deadline count from it).
	Since metav1.Time `json:"since"`
	// Object is the object read, "Kind namespace/name", with "cluster
	// NAME: " before it when it was read from another cluster.
	// +optional
	Object string `json:"object,omitempty"`
	// Reported is what the object says in the cluster's words (the health
	// check's message expression, or its Ready condition's reason and
	// message), at most 512 bytes; unset when the object was not read.
	// +optional
	Reported string `json:"reported,omitempty"`
}

// UpstreamLock names the upstream revision a downstream revision was made
// from: the upstream repository and package, the git ref Porch records
// (`<package>/v<N>` for a published revision, `drafts/<package>/<workspace>`
// for a draft, the branch for a placeholder) and, when known, the commit.
type UpstreamLock struct {
	// +optional
	Repo string `json:"repo,omitempty"`
	// +optional
	Package string `json:"package,omitempty"`
	// +optional
	Ref string `json:"ref,omitempty"`
	// +optional
	Commit string `json:"commit,omitempty"`
}

// Blocked is why a downstream revision is not published yet.
type Blocked struct {
	// Reason is GateClosed, Rejected or AwaitingApproval.
	// +kubebuilder:validation:Enum=GateClosed;Rejected;AwaitingApproval
	Reason string `json:"reason"`
	// Message says what it waits for, naming the gate, the policy or the
	// person's move.
	// +optional
	Message string `json:"message,omitempty"`
}

// PackageVariantList is a list of PackageVariants.
//
// +kubebuilder:object:root=true
type PackageVariantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PackageVariant `json:"items"`
}
