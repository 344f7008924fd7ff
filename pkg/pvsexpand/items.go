package pvsexpand

import (
	"maps"
	"slices"
	"strconv"

	"github.com/pvkit/pvkit/pkg/api/meta"
	"github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// This file is the function's edge: the set's world read from the input
// items (YAML) into typed values. The controller builds the same World
// from typed objects and never goes through YAML.

// WorldFromItems indexes the objects of namespace among items: Repositories,
// PackageRevisions and every other kind, as CEL sees them.
func WorldFromItems(namespace string, items []*yaml.RNode) *World {
	w := NewWorld(namespace)
	for _, it := range items {
		n := it.YNode()
		if !krm.SameNamespace(krm.Namespace(n), namespace) {
			continue
		}
		apiVersion, kind := krm.TypeMeta(n)
		g := krm.GVK{APIVersion: apiVersion, Kind: kind}
		if g == PackageRevisionGVK {
			w.AddRevision(readRevision(n))
		}
		if g == GroupGVK { // a group's group.yaml, for the revision it names (rule package-groups)
			grp := &v1alpha2.PackageGroup{}
			rev := krm.Annotation(it, v1alpha2.GroupRevisionAnnotation)
			if problems := krm.Decode(it, grp); krm.HasErrorProblems(problems) {
				w.AddGroupError(rev, problems[0].Message)
			} else {
				w.AddGroup(rev, grp)
			}
		}
		w.Add(g, toObject(n))
	}
	return w
}

// toObject is the CEL view of an object: name, namespace, labels, annotations.
func toObject(n *yaml.Node) Object {
	o := Object{Name: krm.Name(n), Namespace: krm.Namespace(n)}
	o.Labels = stringMap(krm.Lookup(n, "metadata", "labels"), nil)
	// kpt's own path and index annotations are not the object's: an
	// expression must see the same object under kpt and in-process.
	o.Annotations = stringMap(krm.Lookup(n, "metadata", "annotations"), krm.IsReaderAnnotation)
	return o
}

func stringMap(m *yaml.Node, skip func(string) bool) map[string]string {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i].Value; skip == nil || !skip(k) {
			out[k] = m.Content[i+1].Value
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func readRevision(n *yaml.Node) Revision {
	rev := Revision{Object: toObject(n)}
	rev.Repository, _ = krm.ScalarAt(n, "spec", "repository")
	rev.Package, _ = krm.ScalarAt(n, "spec", "packageName")
	rev.Workspace, _ = krm.ScalarAt(n, "spec", "workspaceName")
	lifecycle, _ := krm.ScalarAt(n, "spec", "lifecycle")
	rev.Lifecycle = meta.Lifecycle(lifecycle)
	s, _ := krm.ScalarAt(n, "spec", "revision")
	rev.Revision, _ = strconv.Atoi(s)
	return rev
}

// PlanItems is Plan on the function's input items: the PackageVariants of
// the set's namespace among them are read into typed values. A child whose
// spec cannot be read exactly (a field of the wrong type, or one pvkit does
// not know) never counts as unchanged: its spec is rewritten, as it would be
// from the YAML before.
func PlanItems(set *v1alpha2.PackageVariantSet, x *Expansion, items []*yaml.RNode) ([]Step, error) {
	var existing []*v1alpha1.PackageVariant
	nodes := map[*v1alpha1.PackageVariant]*yaml.RNode{}
	unreadable := map[*v1alpha1.PackageVariant]bool{}
	for _, it := range items {
		n := it.YNode()
		apiVersion, kind := krm.TypeMeta(n)
		if apiVersion != v1alpha1.APIVersion || kind != v1alpha1.Kind || !krm.SameNamespace(krm.Namespace(n), set.Metadata.Namespace) {
			continue
		}
		pv := &v1alpha1.PackageVariant{}
		if problems := krm.Decode(it, pv); len(problems) > 0 {
			pv = &v1alpha1.PackageVariant{Metadata: meta.ObjectMeta{Name: krm.Name(n), Namespace: krm.Namespace(n)}}
			pv.Metadata.Labels = stringMap(krm.Lookup(n, "metadata", "labels"), nil)
			repo, _ := krm.ScalarAt(n, "spec", "downstream", "repo")
			pkg, _ := krm.ScalarAt(n, "spec", "downstream", "package")
			pv.Spec.Downstream = &v1alpha1.Downstream{Repo: repo, Package: pkg}
			unreadable[pv] = true
		}
		existing = append(existing, pv)
		nodes[pv] = it
	}
	steps, err := Plan(set, x, existing)
	for i := range steps {
		s := &steps[i]
		s.item = nodes[s.Current]
		if s.Action == Unchanged && unreadable[s.Current] {
			s.Action = Update
		}
	}
	return steps, err
}

// ApplyItems carries out the steps on the items PlanItems read and returns
// the new items: updates replace the spec in place (the rest of the item,
// its comments and file, kept; the shard label follows the set's),
// creations are appended (one file each under ChildrenDir), removals are
// dropped.
func ApplyItems(items []*yaml.RNode, steps []Step) ([]*yaml.RNode, error) {
	drop := map[*yaml.RNode]bool{}
	var created []*yaml.RNode
	for _, s := range steps {
		switch s.Action {
		case Update:
			spec, err := krm.Encode(s.Desired.Spec)
			if err != nil {
				return nil, err
			}
			krm.SetField(s.item.YNode(), "spec", spec)
			if !SameMetadata(s.Current, s.Desired) {
				applyMetadata(s.item, ChildMetadata(s.Current, s.Desired))
			}
		case Remove:
			drop[s.item] = true
		case Create:
			n, err := krm.Encode(s.Desired)
			if err != nil {
				return nil, err
			}
			path := ChildrenDir + "/" + s.Name + ".yaml"
			ann := krm.EnsureMap(krm.EnsureMap(n, "metadata"), "annotations")
			krm.SetField(ann, kioutil.PathAnnotation, krm.StringNode(path))
			krm.SetField(ann, kioutil.LegacyPathAnnotation, krm.StringNode(path))
			created = append(created, yaml.NewRNode(n))
		}
	}
	out := make([]*yaml.RNode, 0, len(items)+len(created))
	for _, it := range items {
		if !drop[it] {
			out = append(out, it)
		}
	}
	return append(out, created...), nil
}

// applyMetadata makes a child's metadata change on its item, the rest of
// the item kept.
func applyMetadata(item *yaml.RNode, ch MetadataChange) {
	md := krm.EnsureMap(item.YNode(), "metadata")
	for _, f := range []struct {
		field  string
		set    map[string]string
		remove []string
	}{{"labels", ch.SetLabels, ch.RemoveLabels}, {"annotations", ch.SetAnnotations, ch.RemoveAnnotations}} {
		if len(f.set) == 0 && len(f.remove) == 0 {
			continue
		}
		m := krm.EnsureMap(md, f.field)
		for _, k := range slices.Sorted(maps.Keys(f.set)) {
			krm.SetField(m, k, krm.StringNode(f.set[k]))
		}
		for _, k := range f.remove {
			krm.RemoveField(m, k)
		}
	}
}
