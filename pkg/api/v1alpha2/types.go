package v1alpha2

import (
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

const (
	// Group and Version of the PackageVariantSet API.
	Group   = "config.porch.kpt.dev"
	Version = "v1alpha2"
	// APIVersion is Group/Version.
	APIVersion = Group + "/" + Version
	// Kind of a PackageVariantSet.
	Kind = "PackageVariantSet"

	// SetLabel is set on every PackageVariant a set generates; its value is
	// the set's UID (its name when it has none, outside a cluster).
	SetLabel = "config.porch.kpt.dev/packagevariantset"

	// ShardLabel names the controller shard that reconciles a set or a
	// PackageVariant (pvkit-controller --shard KEY; no label: the controller
	// started without --shard). A set's children carry its value, or none
	// when it has none: a set and its children always share a shard.
	ShardLabel = "pvkit.dev/shard"

	// ChildLabelsAnnotation on a set names the labels of each target (its
	// Repository's, or its selected object's) that the target's child
	// carries, comma-separated, or "*" for all of them (rule child-labels):
	// `kubectl get pv -l region=us-east1` then finds a target's children.
	// Off without it. pvkit's and Porch's own label keys are never copied.
	ChildLabelsAnnotation = "pvkit.dev/child-labels"

	// CopiedLabelsAnnotation on a child lists the label keys its set copied
	// from its target, so that a key dropped since is removed and a label a
	// person put on the child is never touched.
	CopiedLabelsAnnotation = "pvkit.dev/target-labels"
)

// PackageVariantSet generates one PackageVariant per target. This is the set
// as the mutations read it (the orchestrator's API type adds status).
type PackageVariantSet struct {
	APIVersion string                `json:"apiVersion,omitempty"`
	Kind       string                `json:"kind,omitempty"`
	Metadata   meta.ObjectMeta       `json:"metadata,omitempty"`
	Spec       PackageVariantSetSpec `json:"spec,omitempty"`
}

// PackageVariantSetSpec is the desired state of a PackageVariantSet.
// +kubebuilder:validation:XValidation:rule="has(self.upstream) != has(self.group)",message="exactly one of upstream and group (a pvkit extension: a group of packages) must be set"
type PackageVariantSetSpec struct {
	// Upstream is the package revision every generated PackageVariant clones.
	// Required unless the set names a group (then it must be unset: the
	// members are the upstreams).
	// +optional
	Upstream *pv.Upstream `json:"upstream,omitempty"`
	// Group (a pvkit extension; Porch's CRD has no such field and refuses
	// a set that has it) names a group of packages released to every
	// target as one unit (rule: package-groups): a package whose revisions
	// are the group's versions, and whose group.yaml (a PackageGroup) lists
	// the members, each an upstream. Selected as an upstream is: revision,
	// workspaceName or semver. The set then has one child per target and
	// member, and a staged rollout moves a target's members together.
	// +optional
	Group *pv.Upstream `json:"group,omitempty"`
	// Targets generate the PackageVariants.
	// +required
	// +kubebuilder:validation:MinItems=1
	Targets []Target `json:"targets,omitempty"`
	// Rollout (a pvkit extension; a set without it behaves as Porch's)
	// moves the children to a new upstream revision in ordered waves
	// instead of all at once (rule: staged-rollouts).
	// +optional
	Rollout *Rollout `json:"rollout,omitempty"`
}

// Rollout is a staged rollout: when the set's upstream resolves to a new
// revision, its children move to it wave by wave; a child not yet in an
// open wave keeps the upstream it has.
type Rollout struct {
	// Waves, in order; a wave opens when every child of the one before is
	// at the new revision, published and Ready (or held, or skipped).
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Waves []Wave `json:"waves"`
	// ErrorBudget is how many failed children (a count, or a percent of
	// the rollout's children: "10%") the rollout tolerates in the waves
	// without a budget of their own (waves[].errorBudget), the first wave
	// of two or more excepted (its default is 0); one more pauses it,
	// naming them. Default 0.
	// +kubebuilder:validation:XIntOrString
	ErrorBudget *IntOrPercent `json:"errorBudget,omitempty"`
	// ProgressDeadlineSeconds: a child moved to the new revision and not
	// Ready after this long counts as failed (a stalled one at once).
	// Default 600.
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
	// Health makes a wave wait for the clusters (rule:
	// health-gated-rollouts): every child gets it as its spec.health, and
	// a moved child is done only when its published target is also
	// reported healthy, and has been for MinSuccessSeconds; one not
	// healthy within the progress deadline of its publication has failed.
	// +optional
	Health *pv.HealthCheck `json:"health,omitempty"`
	// MinSuccessSeconds is how long a moved child must stay healthy before
	// it counts as done (a soak; Open Cluster Management's
	// minSuccessTime). Default 0; it needs health.
	// +kubebuilder:validation:Minimum=0
	MinSuccessSeconds *int32 `json:"minSuccessSeconds,omitempty"`
	// SpreadBy is a label key (of the Repository or object each child was
	// made for): a wave with a size takes children in turn from each value
	// of this label (values sorted, a child without it last), not in name
	// order, so that a 10% wave of a fleet named by region is not one
	// region.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	SpreadBy string `json:"spreadBy,omitempty"`
	// OnFailure is what a rollout does when more children fail than the
	// error budget allows: pause (the default: it waits, the fleet split
	// between two revisions, for a person to fix, skip or undo) or undo
	// (it undoes itself as pvctl rollout undo would: every child back to
	// the revision it rolled out from, Paused RolledBack, an Event; it
	// stays so until a person resumes, pvkit.dev/rollout-retry, and a
	// second failure of the same revision undoes it again, never
	// looping).
	// +optional
	// +kubebuilder:validation:Enum=pause;undo
	OnFailure string `json:"onFailure,omitempty"`
	// Windows say when the rollout may move children (Argo CD's sync
	// windows): with allow windows, only while one is open; never while a
	// deny window is open. A window held back opens no wave and moves no
	// new child; children already moved finish, and an undo is never held
	// (package window).
	// +optional
	// +kubebuilder:validation:MaxItems=20
	Windows []Window `json:"windows,omitempty"`
}

// Window is an allow or deny window of a rollout: it opens at each start
// its cron schedule names, in its time zone, for its duration.
type Window struct {
	// Name, shown in messages.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name,omitempty"`
	// Kind is allow or deny.
	// +kubebuilder:validation:Enum=allow;deny
	Kind string `json:"kind"`
	// Schedule is a five-field cron line (minute hour day-of-month month
	// day-of-week) or a descriptor such as @daily: when the window opens.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=100
	Schedule string `json:"schedule"`
	// Duration is how long it stays open from each start (1h, 90m; from
	// 1m to 168h).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=20
	Duration string `json:"duration"`
	// TimeZone is an IANA name (Europe/Berlin); default UTC.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}

// Wave is one stage of a rollout.
type Wave struct {
	// Name of the wave, unique in the rollout.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// Selector picks the wave's targets by the labels of the Repository or
	// object each child was made for; none: any target.
	// +optional
	Selector *meta.LabelSelector `json:"selector,omitempty"`
	// Size caps how many targets the wave takes (a count, or a percent of
	// the rollout's children, rounded up); none: every target the selector
	// picks that no earlier wave took.
	// +kubebuilder:validation:XIntOrString
	Size *IntOrPercent `json:"size,omitempty"`
	// MaxUpdate caps the wave's children moving at once (a count, or a
	// percent of the wave, rounded up, at least 1); none: all of them.
	// +kubebuilder:validation:XIntOrString
	MaxUpdate *IntOrPercent `json:"maxUpdate,omitempty"`
	// ErrorBudget is how many of the wave's members may fail (a count, or
	// a percent of the wave's members, rounded up) before the rollout
	// pauses (or undoes itself), naming them: the wave's own budget, in
	// place of the rollout's for its members. None: the first wave of a
	// rollout of two or more (the canary) has a budget of 0, and every
	// other wave shares the rollout's errorBudget. A failure within the
	// budget does not hold the wave back; a wave whose every member failed
	// or was skipped cannot complete, and fails whatever its budget.
	// +kubebuilder:validation:XIntOrString
	ErrorBudget *IntOrPercent `json:"errorBudget,omitempty"`
	// AllowEmpty lets a wave whose selector matches no child be empty. By
	// default a rollout does not start past such a wave: a selector with a
	// typo, or a canary that lost its label, pauses it, naming the wave
	// (an empty canary used to complete at once and let the next wave
	// move).
	// +optional
	AllowEmpty bool `json:"allowEmpty,omitempty"`
}

// Target is exactly one of Repositories, RepositorySelector and
// ObjectSelector, and an optional Template.
// +kubebuilder:validation:XValidation:rule="(has(self.repositories) ? 1 : 0) + (has(self.repositorySelector) ? 1 : 0) + (has(self.objectSelector) ? 1 : 0) == 1",message="must specify exactly one of repositories, repositorySelector or objectSelector"
type Target struct {
	// Repositories is an explicit list of repositories and package names.
	// +kubebuilder:validation:MinItems=1
	Repositories []RepositoryTarget `json:"repositories,omitempty"`
	// RepositorySelector selects Repository objects by label.
	RepositorySelector *RepositorySelector `json:"repositorySelector,omitempty"`
	// ObjectSelector selects objects of any kind by label.
	ObjectSelector *ObjectSelector `json:"objectSelector,omitempty"`
	// Template computes the fields of each generated PackageVariant.
	Template *PackageVariantTemplate `json:"template,omitempty"`
}

// RepositoryTarget is one repository and, optionally, the package names to
// create in it (default: the upstream package name).
type RepositoryTarget struct {
	// Name of a Repository in the set's namespace.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// PackageNames are the packages to create in it (default: one, named
	// like the upstream).
	// +kubebuilder:validation:items:MinLength=1
	PackageNames []string `json:"packageNames,omitempty"`
}

// RepositorySelector is a label selector over Repository objects. Porch's
// type is a plain metav1.LabelSelector (same JSON); PackageNames is pvkit's
// (design doc) addition.
type RepositorySelector struct {
	meta.LabelSelector `json:",inline"`
	// PackageNames, when set, creates each of these packages in every
	// selected repository instead of one package named like the upstream.
	// +kubebuilder:validation:items:MinLength=1
	PackageNames []string `json:"packageNames,omitempty"`
}

// ObjectSelector selects objects of one apiVersion and kind in the set's
// namespace by label (and by name, when Name is set).
type ObjectSelector struct {
	meta.LabelSelector `json:",inline"`
	// APIVersion of the selected objects.
	// +required
	// +kubebuilder:validation:MinLength=1
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind of the selected objects.
	// +required
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind,omitempty"`
	// Name, when set, selects only the object of that name.
	Name *string `json:"name,omitempty"`
	// PackageNames is as in RepositorySelector (pvkit's addition).
	// +kubebuilder:validation:items:MinLength=1
	PackageNames []string `json:"packageNames,omitempty"`
}

// PackageVariantTemplate computes a generated PackageVariant's fields; each
// field has a plain form and, where it varies per target, a CEL form.
type PackageVariantTemplate struct {
	Downstream      *DownstreamTemplate         `json:"downstream,omitempty"`
	AdoptionPolicy  *pv.AdoptionPolicy          `json:"adoptionPolicy,omitempty"`
	DeletionPolicy  *pv.DeletionPolicy          `json:"deletionPolicy,omitempty"`
	Labels          map[string]string           `json:"labels,omitempty"`
	LabelExprs      []MapExpr                   `json:"labelExprs,omitempty"`
	Annotations     map[string]string           `json:"annotations,omitempty"`
	AnnotationExprs []MapExpr                   `json:"annotationExprs,omitempty"`
	PackageContext  *PackageContextTemplate     `json:"packageContext,omitempty"`
	Pipeline        *PipelineTemplate           `json:"pipeline,omitempty"`
	Injectors       []InjectionSelectorTemplate `json:"injectors,omitempty"`
}

// DownstreamTemplate overrides the default downstream repository and package.
// +kubebuilder:validation:XValidation:rule="!(has(self.repo) && has(self.repoExpr))",message="may specify only one of repo and repoExpr"
// +kubebuilder:validation:XValidation:rule="!(has(self.__package__) && has(self.packageExpr))",message="may specify only one of package and packageExpr"
type DownstreamTemplate struct {
	Repo        *string `json:"repo,omitempty"`
	Package     *string `json:"package,omitempty"`
	RepoExpr    *string `json:"repoExpr,omitempty"`
	PackageExpr *string `json:"packageExpr,omitempty"`
}

// PackageContextTemplate computes the package context.
// +kubebuilder:validation:XValidation:rule="!has(self.data) || !('name' in self.data || 'package-path' in self.data)",message="data must not contain the reserved keys name and package-path (kpt and Porch set them)"
type PackageContextTemplate struct {
	Data           map[string]string `json:"data,omitempty"`
	RemoveKeys     []string          `json:"removeKeys,omitempty"`
	DataExprs      []MapExpr         `json:"dataExprs,omitempty"`
	RemoveKeyExprs []string          `json:"removeKeyExprs,omitempty"`
}

// InjectionSelectorTemplate computes an injector; exactly one of Name and
// NameExpr.
// +kubebuilder:validation:XValidation:rule="has(self.name) != has(self.nameExpr)",message="must specify exactly one of name and nameExpr"
type InjectionSelectorTemplate struct {
	Group    *string `json:"group,omitempty"`
	Version  *string `json:"version,omitempty"`
	Kind     *string `json:"kind,omitempty"`
	Name     *string `json:"name,omitempty"`
	NameExpr *string `json:"nameExpr,omitempty"`
}

// MapExpr computes one map entry: exactly one of Key and KeyExpr, at most
// one of Value and ValueExpr.
// +kubebuilder:validation:XValidation:rule="has(self.key) != has(self.keyExpr)",message="must specify exactly one of key and keyExpr"
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueExpr))",message="may specify only one of value and valueExpr"
type MapExpr struct {
	Key       *string `json:"key,omitempty"`
	Value     *string `json:"value,omitempty"`
	KeyExpr   *string `json:"keyExpr,omitempty"`
	ValueExpr *string `json:"valueExpr,omitempty"`
}

// PipelineTemplate computes the pipeline.
type PipelineTemplate struct {
	Validators []FunctionTemplate `json:"validators,omitempty"`
	Mutators   []FunctionTemplate `json:"mutators,omitempty"`
}

// FunctionTemplate is a kpt function whose configMap entries may be computed.
// The CRD's rules test presence only (has): a comparison with the empty string
// or its size puts the rule over the apiserver's cost budget in these nested
// lists, so an `image: ""` next to an `exec` is refused at apply, where
// validation would read it as no image.
// +kubebuilder:validation:XValidation:rule="has(self.image) != has(self.exec)",message="must specify exactly one of image and exec"
// +kubebuilder:validation:XValidation:rule="!(has(self.configPath) && (has(self.configMap) || has(self.configMapExprs)))",message="may specify only one of configMap (or configMapExprs) and configPath"
type FunctionTemplate struct {
	pv.Function    `json:",inline"`
	ConfigMapExprs []MapExpr `json:"configMapExprs,omitempty"`
}

// RolloutStatus is where a set's staged rollout stands (the set's
// status.rollout).
type RolloutStatus struct {
	// Target is the revision the rollout moves the children to; From the
	// one it moves them from (none for the set's first revision).
	Target RevisionRef  `json:"target"`
	From   *RevisionRef `json:"from,omitempty"`
	// Phase is Progressing, Paused or Complete.
	Phase RolloutPhase `json:"phase"`
	// Message says what the rollout waits for or what blocks it.
	Message string `json:"message,omitempty"`
	// Waves are the waves' states and counts, in order.
	Waves []WaveStatus `json:"waves,omitempty"`
	// Failed are children that failed (name: why, the why cut short): at
	// most the first 20 by name; FailedCount is how many failed in all.
	// Held and Skipped are the ones an operator held or skipped.
	Failed      []string `json:"failed,omitempty"`
	FailedCount int      `json:"failedCount,omitempty"`
	Held        []string `json:"held,omitempty"`
	Skipped     []string `json:"skipped,omitempty"`
	// Undone: the operator undid the rollout (pvkit.dev/rollout-undo
	// naming its target): every child is pinned back to From at once, and
	// the rollout stays Paused until resumed (it then starts again from
	// wave one) or a new revision starts another from From.
	// +optional
	Undone bool `json:"undone,omitempty"`
	// UndoneOnFailure: the rollout undid itself (spec.rollout.onFailure:
	// undo) when its failures exceeded the error budget; it stays undone
	// until a person retries it (pvkit.dev/rollout-retry, pvctl rollout
	// resume).
	// +optional
	UndoneOnFailure bool `json:"undoneOnFailure,omitempty"`
	// Retried is the last pvkit.dev/rollout-retry the rollout acted on
	// (TARGET@STAMP): the same value does not retry it again.
	// +optional
	Retried string `json:"retried,omitempty"`
	// Window, while a window holds the rollout back (spec.rollout.
	// windows), says which and until when.
	// +optional
	Window *WindowHold `json:"window,omitempty"`
	// UndoProgress, while the rollout is undone, counts the children on
	// their way back to From.
	// +optional
	UndoProgress *UndoProgress `json:"undoProgress,omitempty"`
	// Next is the next gate the rollout waits on that is due at a known
	// instant (a child's soak or progress deadline, a window opening or
	// closing): nothing changes before it unless a child's status does.
	// pvctl run --until waits for it.
	// +optional
	Next *NextGate `json:"next,omitempty"`
}

// NextGate is a gate due at a known instant.
type NextGate struct {
	// At is when (RFC 3339).
	At string `json:"at"`
	// What happens then.
	What string `json:"what"`
}

// UndoProgress counts an undone rollout's children on their way back:
// of Children, Back are pinned to From again and Done are there (the
// revision published and Ready, and healthy when the rollout has a health
// check), read from the children's status.
type UndoProgress struct {
	Children int `json:"children"`
	Back     int `json:"back"`
	Done     int `json:"done"`
}

// WindowHold is a window holding a rollout back.
type WindowHold struct {
	// Reason names the window (or says that no allow window is open).
	Reason string `json:"reason"`
	// Until is when it stops holding (RFC 3339): the deny window's end,
	// or the next allow window's start; empty when none is due.
	// +optional
	Until string `json:"until,omitempty"`
}

// RolloutPhase is where a staged rollout stands.
// +kubebuilder:validation:Enum=Progressing;Paused;Complete
type RolloutPhase string

// The phases of a rollout.
const (
	RolloutProgressing RolloutPhase = "Progressing"
	RolloutPaused      RolloutPhase = "Paused"
	RolloutComplete    RolloutPhase = "Complete"
)

// WaveState is where a wave of a staged rollout stands.
// +kubebuilder:validation:Enum=Pending;Open;Complete
type WaveState string

// The states of a wave.
const (
	WavePending  WaveState = "Pending"
	WaveOpen     WaveState = "Open"
	WaveComplete WaveState = "Complete"
)

// RevisionRef names an upstream revision exactly.
type RevisionRef struct {
	Name      string `json:"name"`
	Workspace string `json:"workspace,omitempty"`
	Revision  int    `json:"revision,omitempty"`
}

// WaveStatus is one wave of a rollout: its children (fixed when the
// rollout starts; a target that appears later joins a wave and is added),
// its state (Pending, Open, Complete) and counts.
type WaveStatus struct {
	Name    string    `json:"name"`
	State   WaveState `json:"state"`
	Members []string  `json:"members,omitempty"`
	// Moved is how many members were moved to the target; Done how many
	// are there, published and Ready.
	Moved int `json:"moved"`
	Done  int `json:"done"`
	// Failed is how many moved members failed and count against a budget
	// (not skipped); Skipped how many an operator skipped.
	// +optional
	Failed int `json:"failed,omitempty"`
	// +optional
	Skipped int `json:"skipped,omitempty"`
	// DoneMembers, while the wave is not complete, are the members
	// confirmed done at the target (their status read past the cache):
	// the set does not read them again. A complete wave drops the list.
	// +optional
	DoneMembers []string `json:"doneMembers,omitempty"`
	// Waiting, while the wave is not complete, are its members moved to
	// the target and neither done nor failed, each with the instant the
	// rollout moved it (RFC 3339): the time it started waiting. A member
	// moved before the rollout kept this (an older pvkit) is listed
	// without. Bounded by the wave's in-flight children (maxUpdate).
	// +optional
	Waiting []WaitingMember `json:"waiting,omitempty"`
}

// WaitingMember is a member of a wave moved to the target and not done.
type WaitingMember struct {
	Name string `json:"name"`
	// Since is when the rollout moved it (RFC 3339); empty when not known.
	// +optional
	Since string `json:"since,omitempty"`
}
