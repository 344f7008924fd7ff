package pvsexpand

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/pkg/api/meta"
	"github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ChildrenDir is where the function writes new PackageVariants, one file each.
const ChildrenDir = "packagevariants"

// Action is what happens to one child.
type Action string

const (
	Create    Action = "create"
	Update    Action = "update"
	Unchanged Action = "unchanged"
	Remove    Action = "remove"
	// Keep is a child whose target is gone but which is kept because some
	// target could not be computed (rule: no-removal-on-partial).
	Keep Action = "keep"
)

// Step is the planned action for one child.
type Step struct {
	Action Action
	Name   string
	Where  string // the target entry, for create/update/unchanged
	// Current is the existing child (nil for create).
	Current *v1alpha1.PackageVariant
	// Desired is the child as it should be (nil for remove and keep): for
	// an update, the existing child's name with the computed spec.
	Desired *v1alpha1.PackageVariant

	item *yaml.RNode // Current's input item, at the function's edge (PlanItems)
}

// SetID is the value of the set label on its children: the set's UID, or its
// name when it has none (a set read from a file).
func SetID(set *v1alpha2.PackageVariantSet) string {
	if set.Metadata.UID != "" {
		return set.Metadata.UID
	}
	return set.Metadata.Name
}

// Plan (rules: child-never-replaces, no-removal-on-partial) matches the
// computed children with the existing PackageVariants of
// the set's namespace (existing: the set's children, those carrying its set
// label, and any other PackageVariant whose name a child would take), by
// downstream repository and package as Porch does, not by name.
//
// A child to create whose name another PackageVariant of the namespace
// already has (one that is not this set's child: a hand-written variant,
// another set's child) is never planned: applying it would replace that
// variant. Its target entry becomes a failure naming both (so nothing is
// removed either), and the set waits for one of them to be renamed.
func Plan(set *v1alpha2.PackageVariantSet, x *Expansion, existing []*v1alpha1.PackageVariant) ([]Step, error) {
	id := SetID(set)
	mine := map[[2]string]*v1alpha1.PackageVariant{}
	others := map[string]string{} // name -> its set label, of the namespace's other PackageVariants
	var order []*v1alpha1.PackageVariant
	for _, pv := range existing {
		if !krm.SameNamespace(pv.Metadata.Namespace, set.Metadata.Namespace) {
			continue
		}
		if pv.Metadata.Labels[v1alpha2.SetLabel] != id {
			others[pv.Metadata.Name] = pv.Metadata.Labels[v1alpha2.SetLabel]
			continue
		}
		mine[downstreamOf(pv)] = pv
		order = append(order, pv)
	}
	var steps []Step
	matched := map[*v1alpha1.PackageVariant]bool{}
	for _, c := range x.Children {
		desired := NewChild(set, c)
		cur := mine[[2]string{c.Spec.Downstream.Repo, c.Spec.Downstream.Package}]
		if label, taken := others[c.Name]; taken && cur == nil {
			owner := "one that is no set's child"
			if label != "" {
				owner = fmt.Sprintf("a child of another set, %s=%s", v1alpha2.SetLabel, label)
			}
			x.Failures = append(x.Failures, Failure{Field: c.Field, Where: c.Where, Message: fmt.Sprintf(
				"its PackageVariant would be named %q, the name of another PackageVariant of the namespace (%s); "+
					"the set never replaces it: rename the set, the target or the other PackageVariant", c.Name, owner)})
			continue
		}
		step := Step{Action: Create, Name: c.Name, Where: c.Where, Current: cur, Desired: desired}
		if cur != nil {
			matched[cur] = true
			step.Name, desired.Metadata.Name = cur.Metadata.Name, cur.Metadata.Name
			step.Action = Update
			if sameSpec(cur.Spec, desired.Spec) && SameMetadata(cur, desired) {
				step.Action = Unchanged
			}
		}
		steps = append(steps, step)
	}
	for _, pv := range order {
		if matched[pv] {
			continue
		}
		a := Remove
		if !x.Complete() {
			a = Keep
		}
		steps = append(steps, Step{Action: a, Name: pv.Metadata.Name, Current: pv})
	}
	return steps, nil
}

func downstreamOf(pv *v1alpha1.PackageVariant) [2]string {
	if d := pv.Spec.Downstream; d != nil {
		return [2]string{d.Repo, d.Package}
	}
	return [2]string{}
}

// sameSpec compares two specs by meaning: their JSON (omitted empty fields,
// sorted map keys), so that an empty list and a missing one are the same.
func sameSpec(a, b v1alpha1.PackageVariantSpec) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// SameShard says whether a child carries the shard label its set gives it
// (the same value, or neither has one).
func SameShard(cur, desired *v1alpha1.PackageVariant) bool {
	return cur.Metadata.Labels[v1alpha2.ShardLabel] == desired.Metadata.Labels[v1alpha2.ShardLabel]
}

// NewChild is the PackageVariant a set has for a computed child: its name,
// the set's namespace, the set label, the set's shard label when it has
// one (a set and its children share a shard: its rollout reads them), the
// set as its controller owner when the set has a UID, and the computed
// spec.
func NewChild(set *v1alpha2.PackageVariantSet, c Child) *v1alpha1.PackageVariant {
	labels := map[string]string{v1alpha2.SetLabel: SetID(set)}
	copied := targetLabels(set, c.Labels) // rule child-labels
	for k, v := range copied {
		labels[k] = v
	}
	if shard := set.Metadata.Labels[v1alpha2.ShardLabel]; shard != "" {
		labels[v1alpha2.ShardLabel] = shard
	}
	if c.Group != "" {
		labels[v1alpha2.GroupLabel], labels[v1alpha2.MemberLabel] = c.Group, c.Member
	}
	pv := &v1alpha1.PackageVariant{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind,
		Metadata: meta.ObjectMeta{Name: c.Name, Namespace: set.Metadata.Namespace, Labels: labels},
		Spec:     *c.Spec}
	if len(copied) > 0 {
		pv.Metadata.Annotations = map[string]string{v1alpha2.CopiedLabelsAnnotation: strings.Join(slices.Sorted(maps.Keys(copied)), ",")}
	}
	if c.GroupRevision != "" {
		if pv.Metadata.Annotations == nil {
			pv.Metadata.Annotations = map[string]string{}
		}
		pv.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation] = c.GroupRevision
	}
	if set.Metadata.UID != "" {
		pv.Metadata.OwnerReferences = []meta.OwnerReference{{APIVersion: v1alpha2.APIVersion, Kind: v1alpha2.Kind,
			Name: set.Metadata.Name, UID: set.Metadata.UID, Controller: true}}
	}
	return pv
}
