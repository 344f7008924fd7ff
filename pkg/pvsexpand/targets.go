package pvsexpand

import (
	"errors"
	"fmt"

	"github.com/pvkit/pvkit/pkg/api/meta"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
)

// instance is one target entry: one repository and package of a list, or one
// selected object and package name.
type instance struct {
	target         int    // index in spec.targets
	field          string // the entry's field path
	where          string // names the entry in messages (with the default package)
	subject        string // the repository or object it is for, in words (whereFor)
	repoDefault    string // default downstream repository
	packageDefault string // default downstream package
	targetVar      any    // *RepoTarget or *Object, the CEL `target`
	scope          scope
}

// whereFor names a target entry's instance in messages: its field, what it
// is for, and the downstream package (the default before the template
// renders, the rendered one after: a set's Events name the package its
// packageExpr made).
func whereFor(field, subject, pkg string) string {
	return fmt.Sprintf("`%s` (%s, package %q)", field, subject, pkg)
}

// rendered names the instance with the downstream its template made (a
// repoExpr's repository, a packageExpr's package).
func (in instance) rendered(repo, pkg string) string {
	if repo == in.repoDefault {
		return whereFor(in.field, in.subject, pkg)
	}
	return fmt.Sprintf("`%s` (%s, downstream repository %q, package %q)", in.field, in.subject, repo, pkg)
}

// failure is a target (or one of its entries) that could not be computed.
type failure struct {
	field string
	where string
	err   error
}

// unroll lists the instances of every target in spec order, objects in name
// order. A target whose objects cannot be listed is a failure.
func unroll(set *v1alpha2.PackageVariantSet, w *World) ([]instance, []failure, error) {
	var out []instance
	var failures []failure
	up := set.Spec.Upstream
	if up == nil { // a grouped set: each member names its package (rule package-groups)
		up = set.Spec.Group
	}
	pkg := up.Package
	max, per := w.maxChildren(), 1
	group := ""
	if w.perTarget > 1 { // a grouped set: a child per target and member
		per = w.perTarget
		group = fmt.Sprintf(", %d for each target: one a member of the group", per)
	}
	// Counted before anything is built: a set asking for 90,000 children
	// costs a count, not 90,000 instances.
	at := ""
	tooMany := func(n int) error {
		if (len(out)+n)*per <= max {
			return nil
		}
		return fmt.Errorf("%w: its targets ask for more than %d PackageVariants (%d counted at `%s`%s); "+
			"one set may have at most %d (pvkit-controller and pvctl run: --max-children-per-set): split the set", ErrTooManyChildren, max, (len(out)+n)*per, at, group, max)
	}
	for i, t := range set.Spec.Targets {
		field := fmt.Sprintf("spec.targets[%d]", i)
		switch {
		case t.Repositories != nil:
			for j, r := range t.Repositories {
				names := r.PackageNames
				if len(names) == 0 {
					names = []string{pkg}
				}
				at = fmt.Sprintf("%s.repositories[%d]", field, j)
				if err := tooMany(len(names)); err != nil {
					return nil, nil, err
				}
				for _, name := range names {
					f := fmt.Sprintf("%s.repositories[%d]", field, j)
					subject := fmt.Sprintf("repository %q", r.Name)
					out = append(out, instance{target: i, field: f, where: whereFor(f, subject, name), subject: subject,
						repoDefault: r.Name, packageDefault: name, targetVar: &RepoTarget{Repo: r.Name, Package: name}, scope: listScope})
				}
			}
		case t.RepositorySelector != nil:
			s := t.RepositorySelector
			at = field + ".repositorySelector"
			insts, err := selected(i, field+".repositorySelector", w, RepositoryGVK, &s.LabelSelector, nil, s.PackageNames, pkg, tooMany)
			if errors.Is(err, ErrTooManyChildren) {
				return nil, nil, err
			}
			out, failures = collect(out, failures, insts, err, field+".repositorySelector")
		case t.ObjectSelector != nil:
			s := t.ObjectSelector
			at = field + ".objectSelector"
			insts, err := selected(i, field+".objectSelector", w, krm.GVK{APIVersion: s.APIVersion, Kind: s.Kind}, &s.LabelSelector, s.Name, s.PackageNames, pkg, tooMany)
			if errors.Is(err, ErrTooManyChildren) {
				return nil, nil, err
			}
			out, failures = collect(out, failures, insts, err, field+".objectSelector")
		}
	}
	return out, failures, nil
}

func collect(out []instance, failures []failure, insts []instance, err error, field string) ([]instance, []failure) {
	if err != nil {
		return out, append(failures, failure{field: field, where: "`" + field + "`", err: err})
	}
	return append(out, insts...), failures
}

// selected lists the instances of a selector target: each matching object
// (by label, and by name when given) times each package name (default: the
// upstream package).
func selected(i int, field string, w *World, g krm.GVK, sel *meta.LabelSelector, name *string, packageNames []string, pkg string, tooMany func(int) error) ([]instance, error) {
	objs, err := w.Objects(g)
	if err != nil {
		return nil, err
	}
	names := packageNames
	if len(names) == 0 {
		names = []string{pkg}
	}
	var out []instance
	for _, obj := range objs {
		if (name != nil && obj.Name != *name) || !sel.Matches(obj.Labels) {
			continue
		}
		if err := tooMany(len(out) + len(names)); err != nil {
			return nil, err
		}
		for _, n := range names {
			subject := fmt.Sprintf("%s %q", g.Kind, obj.Name)
			out = append(out, instance{target: i, field: field, where: whereFor(field, subject, n), subject: subject,
				repoDefault: obj.Name, packageDefault: n, targetVar: obj, scope: objectScope})
		}
	}
	return out, nil
}
