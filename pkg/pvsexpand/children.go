package pvsexpand

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/api/meta"
	"github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
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
	// target could not be computed (F8).
	Keep Action = "keep"
)

// Step is the planned action for one child.
type Step struct {
	Action  Action
	Name    string
	Where   string      // the target entry, for create/update/unchanged
	Item    *yaml.RNode // the existing child (nil for create)
	Desired *yaml.RNode // the child as it should be (nil for remove/keep)
}

// SetID is the value of the set label on its children: the set's UID, or its
// name when it has none (a set read from a file).
func SetID(set *v1alpha2.PackageVariantSet) string {
	if set.Metadata.UID != "" {
		return set.Metadata.UID
	}
	return set.Metadata.Name
}

// Plan matches the computed children with the existing ones (items of kind
// PackageVariant in the set's namespace carrying the set label), by
// downstream repository and package as Porch does, not by name.
//
// A child to create whose name another PackageVariant of the namespace
// already has (one that is not this set's child: a hand-written variant,
// another set's child) is never planned: applying it would replace that
// variant. Its target entry becomes a failure naming both (so nothing is
// removed either), and the set waits for one of them to be renamed.
func Plan(set *v1alpha2.PackageVariantSet, x *Expansion, items []*yaml.RNode) ([]Step, error) {
	id := SetID(set)
	existing := map[[2]string]*yaml.RNode{}
	others := map[string]string{} // name -> its set label, of the namespace's other PackageVariants
	var order []*yaml.RNode
	for _, it := range items {
		n := it.YNode()
		apiVersion, kind := krm.TypeMeta(n)
		if apiVersion != v1alpha1.APIVersion || kind != v1alpha1.Kind || krm.Namespace(n) != set.Metadata.Namespace {
			continue
		}
		if v, _ := krm.ScalarAt(n, "metadata", "labels", v1alpha2.SetLabel); v != id {
			others[krm.Name(n)] = v
			continue
		}
		repo, _ := krm.ScalarAt(n, "spec", "downstream", "repo")
		pkg, _ := krm.ScalarAt(n, "spec", "downstream", "package")
		existing[[2]string{repo, pkg}] = it
		order = append(order, it)
	}
	var steps []Step
	matched := map[*yaml.RNode]bool{}
	for _, c := range x.Children {
		desired, err := childNode(set, id, c)
		if err != nil {
			return nil, err
		}
		cur := existing[[2]string{c.Spec.Downstream.Repo, c.Spec.Downstream.Package}]
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
		step := Step{Action: Create, Name: c.Name, Where: c.Where, Item: cur, Desired: desired}
		if cur != nil {
			matched[cur] = true
			step.Name = krm.Name(cur.YNode())
			step.Action = Update
			if krm.SemanticEqual(krm.Field(cur.YNode(), "spec"), krm.Field(desired.YNode(), "spec")) {
				step.Action = Unchanged
			}
		}
		steps = append(steps, step)
	}
	for _, it := range order {
		if matched[it] {
			continue
		}
		a := Remove
		if !x.Complete() {
			a = Keep
		}
		steps = append(steps, Step{Action: a, Name: krm.Name(it.YNode()), Item: it})
	}
	return steps, nil
}

// childNode builds a child PackageVariant.
func childNode(set *v1alpha2.PackageVariantSet, id string, c Child) (*yaml.RNode, error) {
	spec, err := krm.Encode(c.Spec)
	if err != nil {
		return nil, err
	}
	md := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	krm.SetField(md, "name", krm.StringNode(c.Name))
	if set.Metadata.Namespace != "" {
		krm.SetField(md, "namespace", krm.StringNode(set.Metadata.Namespace))
	}
	labels := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	krm.SetField(labels, v1alpha2.SetLabel, krm.StringNode(id))
	krm.SetField(md, "labels", labels)
	if set.Metadata.UID != "" {
		controller := true
		ref, err := krm.Encode([]meta.OwnerReference{{APIVersion: v1alpha2.APIVersion, Kind: v1alpha2.Kind,
			Name: set.Metadata.Name, UID: set.Metadata.UID, Controller: &controller}})
		if err != nil {
			return nil, err
		}
		krm.SetField(md, "ownerReferences", ref)
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
	krm.SetField(n, "apiVersion", krm.StringNode(v1alpha1.APIVersion))
	krm.SetField(n, "kind", krm.StringNode(v1alpha1.Kind))
	krm.SetField(n, "metadata", md)
	krm.SetField(n, "spec", spec)
	return yaml.NewRNode(n), nil
}

// Apply carries out the steps on items and returns the new items: updates
// replace the spec in place, creations are appended (one file each under
// ChildrenDir), removals are dropped.
func Apply(items []*yaml.RNode, steps []Step) []*yaml.RNode {
	drop := map[*yaml.RNode]bool{}
	var created []*yaml.RNode
	for _, s := range steps {
		switch s.Action {
		case Update:
			krm.SetField(s.Item.YNode(), "spec", krm.Field(s.Desired.YNode(), "spec"))
		case Remove:
			drop[s.Item] = true
		case Create:
			path := ChildrenDir + "/" + s.Name + ".yaml"
			ann := krm.EnsureMap(krm.EnsureMap(s.Desired.YNode(), "metadata"), "annotations")
			krm.SetField(ann, kioutil.PathAnnotation, krm.StringNode(path))
			krm.SetField(ann, kioutil.LegacyPathAnnotation, krm.StringNode(path))
			created = append(created, s.Desired)
		}
	}
	out := make([]*yaml.RNode, 0, len(items)+len(created))
	for _, it := range items {
		if !drop[it] {
			out = append(out, it)
		}
	}
	return append(out, created...)
}
