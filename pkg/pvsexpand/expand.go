package pvsexpand

import (
	"context"
	"errors"
	"fmt"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/validate"
)

// Child is one PackageVariant a set should have.
type Child struct {
	Name  string
	Field string // the target entry's field path
	Where string // the target entry it comes from, for messages
	Spec  *pv.PackageVariantSpec
	// Labels are the labels of the object the child was made for (an
	// objectSelector's object), else of its downstream Repository: what a
	// staged rollout's waves select by (pkg/rollout).
	Labels map[string]string
	// Group, Member and GroupRevision are set for a child of a grouped set
	// (rule package-groups): the group's package, the member it deploys,
	// and the group's package revision its upstream comes from.
	Group, Member, GroupRevision string
}

// Failure is a target entry that could not be computed; it stops no other
// entry (rule: failed-target-isolated).
type Failure struct {
	Field   string // the target's field path, e.g. spec.targets[1].repositorySelector
	Where   string // the entry in words: the field and the repository or object and package
	Message string
	// Unavailable: the selected kind could not be listed, a failure that may
	// heal by itself (the controller retries it); every other failure needs
	// a change of the set or of the cluster.
	Unavailable bool
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
// children whose target disappeared be removed (rule: no-removal-on-partial).
func (x *Expansion) Complete() bool { return len(x.Failures) == 0 }

// ErrUpstreamNotFound: no revision of the upstream package matches
// spec.upstream, so no target can be computed.
var ErrUpstreamNotFound = errors.New("upstream package revision not found")

// Expand computes the children of a valid set (see Validate) against w. An
// error means nothing can be computed (ErrUpstreamNotFound, wrapped, when the
// upstream is missing); a failing target entry is a Failure and the others
// are still computed.
func Expand(ctx context.Context, set *v1alpha2.PackageVariantSet, w *World) (*Expansion, error) {
	eng, err := celEngine()
	if err != nil {
		return nil, err
	}
	ref, g := set.Spec.Upstream, (*group)(nil)
	if set.Spec.Group != nil {
		if g, err = findGroup(w, set.Spec.Group); err != nil {
			return nil, err
		}
		ref, w.perTarget = set.Spec.Group, len(g.members)
	}
	up, err := findUpstream(w, ref)
	if err != nil {
		return nil, err
	}
	r := &renderer{ctx: ctx, eng: eng, world: w, upstream: ref, upObject: &up.Object}
	insts, failures, err := unroll(set, w)
	if err != nil {
		return nil, err
	}
	x := &Expansion{}
	for _, f := range failures {
		x.Failures = append(x.Failures, Failure{Field: f.field, Where: f.where, Message: f.err.Error(), Unavailable: true})
	}
	var rendered []Child
	byDownstream := map[[2]string][]int{} // downstream -> indexes in rendered
	for _, in := range insts {
		field := fmt.Sprintf("spec.targets[%d].template", in.target)
		spec, err := r.render(in, set.Spec.Targets[in.target].Template, field)
		if err != nil {
			x.Failures = append(x.Failures, Failure{Field: in.field, Where: in.where, Message: err.Error()})
			continue
		}
		if err := validChild(spec, field); err != nil {
			x.Failures = append(x.Failures, Failure{Field: in.field, Where: in.where, Message: err.Error()})
			continue
		}
		var labels map[string]string
		if o, ok := in.targetVar.(*Object); ok {
			labels = o.Labels
		} else if repo := w.Repository(spec.Downstream.Repo); repo != nil {
			labels = repo.Labels
		}
		c := Child{Field: in.field, Spec: spec, Labels: labels}
		for _, c := range g.children(set, c) { // a grouped set's: one a member (rule package-groups)
			key := [2]string{c.Spec.Downstream.Repo, c.Spec.Downstream.Package}
			c.Name, c.Where = ChildName(set.Metadata.Name, key[0], key[1]), in.rendered(key[0], key[1])
			byDownstream[key] = append(byDownstream[key], len(rendered))
			rendered = append(rendered, c)
		}
	}
	policy := SetPolicy(set)
	// Two entries rendering one downstream are both failures (rule: one-downstream-one-entry): neither
	// may win silently.
	for i, c := range rendered {
		if policy != nil { // rule policy-flows-down
			c.Spec.Policy = policy.DeepCopy()
		}
		same := byDownstream[[2]string{c.Spec.Downstream.Repo, c.Spec.Downstream.Package}]
		if len(same) == 1 {
			x.Children = append(x.Children, c)
			continue
		}
		var others []string
		for _, j := range same {
			if j != i {
				others = append(others, rendered[j].Where)
			}
		}
		x.Failures = append(x.Failures, Failure{Field: c.Field, Where: c.Where, Message: fmt.Sprintf(
			"renders the same downstream (repository %q, package %q) as %s; each downstream may come from one target entry only",
			c.Spec.Downstream.Repo, c.Spec.Downstream.Package, strings.Join(others, " and "))})
	}
	return x, nil
}

// validChild checks a rendered child as the apiserver and Porch would: the
// downstream repository is an object name, the package a package path, the
// labels and annotations valid keys and values. A CEL expression can produce
// anything; what it produced must never become a path or a key unchecked.
func validChild(spec *pv.PackageVariantSpec, field string) error {
	var msgs []string
	if msg := validate.DNS1123Subdomain(spec.Downstream.Repo); msg != "" {
		msgs = append(msgs, fmt.Sprintf("the downstream repository %s", msg))
	}
	if msg := validate.PackagePath(spec.Downstream.Package); msg != "" {
		msgs = append(msgs, fmt.Sprintf("the downstream package %s", msg))
	}
	msgs = append(msgs, validate.Labels(field+".labels", spec.Labels)...)
	msgs = append(msgs, validate.Annotations(field+".annotations", spec.Annotations)...)
	if len(msgs) > 0 {
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}
