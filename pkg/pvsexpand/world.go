package pvsexpand

import (
	"errors"
	"fmt"
	"sort"

	"github.com/pvkit/pvkit/pkg/api/meta"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
)

// Kinds the set reads from its inputs.
var (
	RepositoryGVK      = krm.GVK{APIVersion: "config.porch.kpt.dev/v1alpha1", Kind: "Repository"}
	PackageRevisionGVK = krm.GVK{APIVersion: "porch.kpt.dev/v1alpha1", Kind: "PackageRevision"}
	GroupGVK           = krm.GVK{APIVersion: v1alpha2.GroupAPIVersion, Kind: v1alpha2.GroupKind}
)

// Revision is what a set needs of a PackageRevision: its metadata (the CEL
// `upstream`) and what the upstream rule (pkg/upstream) reads.
type Revision struct {
	Object
	Repository, Package, Workspace string
	Revision                       int
	Lifecycle                      meta.Lifecycle
}

// World is everything a set is expanded against, typed: the Repositories
// in its namespace, the upstream package's revisions, and the objects of
// each kind an objectSelector selects, as CEL sees them (Object). The
// controller fills it from its caches and the store; the function from its
// input items (WorldFromItems).
type World struct {
	Namespace string
	objects   map[krm.GVK][]*Object
	sorted    map[krm.GVK]bool
	repos     map[string]*Object
	revisions []Revision
	// groups are the PackageGroups of group package revisions, by the
	// revision's name (AddGroup); perTarget is how many children a target
	// entry makes (a grouped set's members; 0: one).
	groups    map[string]*v1alpha2.PackageGroup
	groupErrs map[string]string // a PackageGroup input that does not decode, by revision
	perTarget int
	// Unavailable names the kinds that could not be listed, with the reason.
	// A target that selects such a kind fails; it never counts as selecting
	// nothing (rule: no-removal-on-partial).
	Unavailable map[krm.GVK]string
	// MaxChildren bounds the children one set may have (0:
	// DefaultMaxChildren): a set whose targets ask for more fails whole,
	// before any child is computed.
	MaxChildren int
}

// DefaultMaxChildren (rule: children-bound) is how many PackageVariants one
// set may fan out to
// unless the operator says otherwise (pvkit-controller and pvctl run:
// --max-children-per-set). A fleet of a few thousand clusters fits; a set
// of 300 repositories x 300 package names (46 KB of YAML) does not.
const DefaultMaxChildren = 5000

// ErrTooManyChildren: the set's targets ask for more children than the
// bound allows; none is computed.
var ErrTooManyChildren = errors.New("too many children")

// maxChildren is the bound on the set's children (a grouped set's count
// each member of each target: unroll).
func (w *World) maxChildren() int {
	if w.MaxChildren > 0 {
		return w.MaxChildren
	}
	return DefaultMaxChildren
}

// NewWorld is an empty world of a namespace.
func NewWorld(namespace string) *World {
	return &World{Namespace: namespace, objects: map[krm.GVK][]*Object{}, sorted: map[krm.GVK]bool{}, repos: map[string]*Object{}}
}

// Add adds an object of kind g: a Repository is also found by name, a
// PackageRevision is not an object a target selects (AddRevision). Empty
// label and annotation maps are nil, as CEL sees a missing map.
func (w *World) Add(g krm.GVK, o Object) {
	if len(o.Labels) == 0 {
		o.Labels = nil
	}
	if len(o.Annotations) == 0 {
		o.Annotations = nil
	}
	w.objects[g] = append(w.objects[g], &o)
	w.sorted[g] = false
	if g == RepositoryGVK {
		w.repos[o.Name] = &o
	}
}

// AddRevision adds a PackageRevision.
func (w *World) AddRevision(r Revision) {
	if len(r.Labels) == 0 {
		r.Labels = nil
	}
	if len(r.Annotations) == 0 {
		r.Annotations = nil
	}
	w.revisions = append(w.revisions, r)
}

// Objects returns the objects of a kind in name order (the order the
// apiserver lists them in), or an error when the kind could not be listed.
func (w *World) Objects(g krm.GVK) ([]*Object, error) {
	if reason, ok := w.Unavailable[g]; ok {
		return nil, fmt.Errorf("%s objects could not be listed: %s", g, reason)
	}
	objs := w.objects[g]
	if !w.sorted[g] {
		sort.SliceStable(objs, func(i, j int) bool { return objs[i].Name < objs[j].Name })
		w.sorted[g] = true
	}
	return objs, nil
}

// Repository returns the Repository named name, or nil.
func (w *World) Repository(name string) *Object {
	return w.repos[name]
}
