package pvsexpand

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Kinds the set reads from its inputs.
var (
	RepositoryGVK      = krm.GVK{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "Repository"}
	PackageRevisionGVK = krm.GVK{APIVersion: "porch.kpt.dev/v1alpha1", Kind: "PackageRevision"}
)

// World is everything a set is expanded against: the objects in its namespace
// (Repositories, PackageRevisions and whatever an objectSelector selects).
// The function builds it from its input items; the orchestrator from its
// caches.
type World struct {
	Namespace string
	byType    map[krm.GVK][]*yaml.RNode
	repos     map[string]*yaml.RNode
	// Unavailable names the kinds that could not be listed, with the reason.
	// A target that selects such a kind fails; it never counts as selecting
	// nothing (F8).
	Unavailable map[krm.GVK]string
	// MaxChildren bounds the children one set may have (0:
	// DefaultMaxChildren): a set whose targets ask for more fails whole,
	// before any child is computed.
	MaxChildren int
}

// DefaultMaxChildren is how many PackageVariants one set may fan out to
// unless the operator says otherwise (pvkit-controller and pvctl run:
// --max-children-per-set). A fleet of a few thousand clusters fits; a set
// of 300 repositories x 300 package names (46 KB of YAML) does not.
const DefaultMaxChildren = 5000

// ErrTooManyChildren: the set's targets ask for more children than the
// bound allows; none is computed.
var ErrTooManyChildren = errors.New("too many children")

func (w *World) maxChildren() int {
	if w.MaxChildren > 0 {
		return w.MaxChildren
	}
	return DefaultMaxChildren
}

// NewWorld indexes the objects of namespace among items, each kind's objects
// sorted by name (the order the apiserver lists them in).
func NewWorld(namespace string, items []*yaml.RNode) *World {
	w := &World{Namespace: namespace, byType: map[krm.GVK][]*yaml.RNode{}, repos: map[string]*yaml.RNode{}}
	for _, it := range items {
		n := it.YNode()
		if krm.Namespace(n) != namespace {
			continue
		}
		apiVersion, kind := krm.TypeMeta(n)
		g := krm.GVK{APIVersion: apiVersion, Kind: kind}
		w.byType[g] = append(w.byType[g], it)
		if g == RepositoryGVK {
			w.repos[krm.Name(n)] = it
		}
	}
	for _, objs := range w.byType {
		sort.SliceStable(objs, func(i, j int) bool { return krm.Name(objs[i].YNode()) < krm.Name(objs[j].YNode()) })
	}
	return w
}

// Objects returns the objects of a kind, or an error when the kind could not
// be listed.
func (w *World) Objects(g krm.GVK) ([]*yaml.RNode, error) {
	if reason, ok := w.Unavailable[g]; ok {
		return nil, fmt.Errorf("%s objects could not be listed: %s", g, reason)
	}
	return w.byType[g], nil
}

// Repository returns the Repository named name, or nil.
func (w *World) Repository(name string) *yaml.RNode {
	return w.repos[name]
}

// toObject is the CEL view of an object: name, namespace, labels, annotations.
func toObject(n *yaml.Node) *Object {
	o := &Object{Name: krm.Name(n), Namespace: krm.Namespace(n)}
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

// revision is what the set needs of a PackageRevision.
type revision struct {
	repository, packageName, workspace, lifecycle string
	number                                        int
}

func readRevision(r *yaml.RNode) revision {
	n := r.YNode()
	var rev revision
	rev.repository, _ = krm.ScalarAt(n, "spec", "repository")
	rev.packageName, _ = krm.ScalarAt(n, "spec", "packageName")
	rev.workspace, _ = krm.ScalarAt(n, "spec", "workspaceName")
	rev.lifecycle, _ = krm.ScalarAt(n, "spec", "lifecycle")
	s, _ := krm.ScalarAt(n, "spec", "revision")
	rev.number, _ = strconv.Atoi(s)
	return rev
}
