package pvsexpand

import (
	"fmt"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/upstream"
	"github.com/pvkit/pvkit/pkg/validate"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Groups of packages (rule package-groups): a set's spec.group
// names a package whose revisions are the group's versions; the
// PackageGroup its group.yaml holds lists the members. The set has one
// child per target and member: the member's upstream, the downstream
// package named from the member, the set's template applied to each the
// same way.

// AddGroup adds the PackageGroup of a group package revision (by the
// revision's name). The controller reads it from the revision's
// group.yaml; the function from an input object of kind PackageGroup
// annotated pvkit.dev/group-revision with the revision's name.
func (w *World) AddGroup(revision string, g *v1alpha2.PackageGroup) {
	if w.groups == nil {
		w.groups = map[string]*v1alpha2.PackageGroup{}
	}
	w.groups[revision] = g
}

// AddGroupError records that the PackageGroup of a group package
// revision cannot be read, and why: Expand names it.
func (w *World) AddGroupError(revision, msg string) {
	if w.groupErrs == nil {
		w.groupErrs = map[string]string{}
	}
	w.groupErrs[revision] = msg
}

// group is a grouped set's group at the revision its spec.group selects.
type group struct {
	rev     *Revision
	members []v1alpha2.GroupMember
}

// findGroup resolves the set's group to a revision of the group package
// and its PackageGroup, checked (CheckGroup). An error stops the whole
// expansion: no target can be computed without the group.
func findGroup(w *World, ref *pv.Upstream) (*group, error) {
	rev, err := findUpstream(w, ref)
	if err != nil {
		return nil, err
	}
	if msg, bad := w.groupErrs[rev.Name]; bad {
		return nil, groupError{fmt.Errorf("the group's package revision %s: its %s: %s", rev.Name, v1alpha2.GroupFile, msg)}
	}
	g := w.groups[rev.Name]
	if g == nil {
		return nil, fmt.Errorf("%w: the group's package revision %s (%s) has no %s among the inputs: its %s, or an object of kind %s annotated %s: %s",
			ErrUpstreamNotFound, rev.Name, upstream.Describe(*ref), v1alpha2.GroupKind, v1alpha2.GroupFile, v1alpha2.GroupKind, v1alpha2.GroupRevisionAnnotation, rev.Name)
	}
	if problems := CheckGroup(g); len(problems) > 0 {
		return nil, groupError{fmt.Errorf("the group %s (package revision %s): %s", g.Metadata.Name, rev.Name, problems[0])}
	}
	return &group{rev: rev, members: g.Spec.Members}, nil
}

// groupError is a selected group revision whose group.yaml cannot be used
// (it does not read, or CheckGroup refuses it): the set stalls as for an
// upstream not found (errors.Is ErrUpstreamNotFound; rules stall-or-retry
// and package-groups), its text as it was, naming the field. Retrying
// cannot mend it: a new revision of the group package brings the next
// reconcile.
type groupError struct{ err error }

func (e groupError) Error() string        { return e.err.Error() }
func (e groupError) Unwrap() error        { return e.err }
func (e groupError) Is(target error) bool { return target == ErrUpstreamNotFound }

// CheckGroup lists what is wrong with a PackageGroup, each naming its
// field in group.yaml: no member, a member without a valid name or
// upstream (a Repository's name, a relative package path), a name or a
// downstream package twice.
func CheckGroup(g *v1alpha2.PackageGroup) []string {
	if len(g.Spec.Members) == 0 {
		return []string{v1alpha2.GroupFile + ": spec.members: a group has at least one member"}
	}
	var out []string
	names, pkgs := map[string]int{}, map[string]int{}
	for i, m := range g.Spec.Members {
		field := fmt.Sprintf("%s: spec.members[%d]", v1alpha2.GroupFile, i)
		if msg := validate.DNS1123Label(m.Name); msg != "" {
			out = append(out, fmt.Sprintf("%s.name: %s", field, msg))
		} else if j, dup := names[m.Name]; dup {
			out = append(out, fmt.Sprintf("%s.name: %q is spec.members[%d]'s name too; each member is named once", field, m.Name, j))
		} else {
			names[m.Name] = i
		}
		switch {
		case m.Upstream.Repo == "" || m.Upstream.Package == "":
			out = append(out, fmt.Sprintf("%s.upstream: repo and package are required", field))
		case validate.DNS1123Subdomain(m.Upstream.Repo) != "":
			out = append(out, fmt.Sprintf("%s.upstream.repo: a Repository's name %s", field, validate.DNS1123Subdomain(m.Upstream.Repo)))
		case validate.PackagePath(m.Upstream.Package) != "":
			out = append(out, fmt.Sprintf("%s.upstream.package: the upstream package %s", field, validate.PackagePath(m.Upstream.Package)))
		}
		pkg := m.DownstreamPackage()
		if msg := validate.PackagePath(pkg); msg != "" {
			out = append(out, fmt.Sprintf("%s.package: the downstream package %s", field, msg))
		} else if j, dup := pkgs[pkg]; dup {
			out = append(out, fmt.Sprintf("%s: its downstream package %q is spec.members[%d]'s too; each member deploys a package of its own", field, pkg, j))
		} else {
			pkgs[pkg] = i
		}
	}
	return out
}

// children are the children of a target entry whose rendered child is c:
// c itself for a set without a group (g nil), else one a member, each with
// the member's upstream and downstream package and the group's labels.
func (g *group) children(set *v1alpha2.PackageVariantSet, c Child) []Child {
	if g == nil {
		return []Child{c}
	}
	out := make([]Child, 0, len(g.members))
	for _, m := range g.members {
		spec := *c.Spec
		up, down := m.Upstream, *spec.Downstream
		down.Package = m.DownstreamPackage()
		spec.Upstream, spec.Downstream = &up, &down
		mc := c
		mc.Spec = &spec
		mc.Group, mc.Member, mc.GroupRevision = set.Spec.Group.Package, m.Name, g.rev.Name
		out = append(out, mc)
	}
	return out
}

// ReadGroup reads a group package's group.yaml (the controller's and
// pvctl's edge; the function reads PackageGroup input items): the
// PackageGroup, or why it cannot be read, naming the field.
func ReadGroup(text string) (*v1alpha2.PackageGroup, string) {
	n, err := yaml.Parse(text)
	if err != nil {
		return nil, err.Error()
	}
	if err := krm.CheckAliases(n.YNode()); err != nil {
		return nil, err.Error()
	}
	if !GroupGVK.Is(n) {
		apiVersion, kind := krm.TypeMeta(n.YNode())
		return nil, fmt.Sprintf("not a %s %s (found %s %s)", GroupGVK.APIVersion, GroupGVK.Kind, apiVersion, kind)
	}
	g := &v1alpha2.PackageGroup{}
	if problems := krm.Decode(n, g); krm.HasErrorProblems(problems) {
		return nil, problems[0].Message
	}
	return g, ""
}
