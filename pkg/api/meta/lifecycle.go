package meta

// Lifecycle is a package revision's lifecycle, as Porch has it: the one
// type for it, in the functions (pvs-expand's upstream rule) and in the
// orchestrator's stores alike.
type Lifecycle string

// Porch's lifecycles.
const (
	LifecycleDraft            Lifecycle = "Draft"
	LifecycleProposed         Lifecycle = "Proposed"
	LifecyclePublished        Lifecycle = "Published"
	LifecycleDeletionProposed Lifecycle = "DeletionProposed"
)

// IsPublished reports Published or DeletionProposed, as Porch does.
func (l Lifecycle) IsPublished() bool {
	return l == LifecyclePublished || l == LifecycleDeletionProposed
}
