package pvsexpand

import (
	"fmt"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// Child is one PackageVariant a set should have.
type Child struct {
	Name  string
	Where string // the target entry it comes from, for messages
	Spec  *pv.PackageVariantSpec
}

// Failure is a target entry that could not be computed.
type Failure struct {
	Where   string
	Message string
}

// Expansion is the outcome of expanding a set against a world.
type Expansion struct {
	// Children are the computed PackageVariants, in target order.
	Children []Child
	// Failures are the entries that could not be computed; they do not stop
	// the others.
	Failures []Failure
}

// Complete reports whether every target was computed: only then may
// children whose target disappeared be removed (F8).
func (x *Expansion) Complete() bool { return len(x.Failures) == 0 }

// Expand computes the children of a valid set (see Validate) against w. An
// error means nothing can be computed (the upstream is missing); a failing
// target entry is a Failure and the others are still computed.
func Expand(set *v1alpha2.PackageVariantSet, w *World) (*Expansion, error) {
	eng, err := celEngine()
	if err != nil {
		return nil, err
	}
	up, err := findUpstream(w, set.Spec.Upstream)
	if err != nil {
		return nil, err
	}
	r := &renderer{eng: eng, world: w, upstream: set.Spec.Upstream, upObject: objectOf(up)}
	insts, failures := unroll(set, w)
	x := &Expansion{}
	for _, f := range failures {
		x.Failures = append(x.Failures, Failure{Where: f.where, Message: f.err.Error()})
	}
	seen := map[[2]string]int{} // downstream -> index in x.Children
	dup := map[int]bool{}
	for _, in := range insts {
		field := fmt.Sprintf("spec.targets[%d].template", in.target)
		spec, err := r.render(in, set.Spec.Targets[in.target].Template, field)
		if err != nil {
			x.Failures = append(x.Failures, Failure{Where: in.where, Message: err.Error()})
			continue
		}
		key := [2]string{spec.Downstream.Repo, spec.Downstream.Package}
		if j, ok := seen[key]; ok {
			first := x.Children[j].Where
			x.Failures = append(x.Failures, Failure{Where: in.where,
				Message: fmt.Sprintf("renders the same downstream (repository %q, package %q) as %s; each downstream may come from one target entry only", key[0], key[1], first)})
			dup[j] = true
			continue
		}
		seen[key] = len(x.Children)
		x.Children = append(x.Children, Child{Name: ChildName(set.Name, key[0], key[1]), Where: in.where, Spec: spec})
	}
	if len(dup) > 0 { // neither of two clashing entries may win silently
		kept := x.Children[:0]
		for j, c := range x.Children {
			if dup[j] {
				x.Failures = append(x.Failures, Failure{Where: c.Where,
					Message: fmt.Sprintf("renders the same downstream (repository %q, package %q) as another target entry", c.Spec.Downstream.Repo, c.Spec.Downstream.Package)})
				continue
			}
			kept = append(kept, c)
		}
		x.Children = kept
	}
	return x, nil
}
