package variant

import (
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/health"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/upstream"
	check "github.com/pvkit/pvkit/pkg/validate"
)

// Validate returns every problem of a PackageVariant's spec, each with its
// field path: what Porch's controller checks (upstream and downstream set,
// the policies' values), names and keys as the apiserver and Porch check
// them, and the checks the chain's functions make of the configs built
// from the same spec (NewChain's). Only error-severity problems make the
// variant invalid (krm.InvalidFrom); the problems name no object.
func Validate(v *pv.PackageVariant) []krm.Problem {
	var problems []krm.Problem
	add := func(field, format string, a ...any) {
		problems = append(problems, krm.Errorf(nil, field, format, a...))
	}
	s := &v.Spec
	if u := s.Upstream; u == nil {
		add("spec.upstream", "`spec.upstream` must be set")
	} else {
		endpoint(add, "spec.upstream", u.Repo, u.Package)
		if u.Revision < -1 {
			add("spec.upstream.revision", "`spec.upstream.revision` must be a published revision number (1 or more), or -1 for the branch placeholder (Porch's `main`), found %d", u.Revision)
		}
		for _, msg := range upstream.CheckSemver(u) {
			add("spec.upstream.semver", "%s", msg)
		}
	}
	if d := s.Downstream; d == nil {
		add("spec.downstream", "`spec.downstream` must be set")
	} else {
		endpoint(add, "spec.downstream", d.Repo, d.Package)
	}
	if p := s.AdoptionPolicy; p != "" && p != pv.AdoptionPolicyAdoptNone && p != pv.AdoptionPolicyAdoptExisting {
		add("spec.adoptionPolicy", "`spec.adoptionPolicy` must be %q or %q, found %q", pv.AdoptionPolicyAdoptNone, pv.AdoptionPolicyAdoptExisting, p)
	}
	if p := s.DeletionPolicy; p != "" && p != pv.DeletionPolicyDelete && p != pv.DeletionPolicyOrphan {
		add("spec.deletionPolicy", "`spec.deletionPolicy` must be %q or %q, found %q", pv.DeletionPolicyDelete, pv.DeletionPolicyOrphan, p)
	}
	for _, msg := range check.Labels("spec.labels", s.Labels) {
		add("spec.labels", "%s", msg)
	}
	for _, msg := range check.Annotations("spec.annotations", s.Annotations) {
		add("spec.annotations", "%s", msg)
	}
	if s.Health != nil {
		for _, hp := range health.Validate("spec.health", s.Health) {
			add(hp.Field, "%s", hp.Message)
		}
	}
	_, p := newChain(v, nil)
	return append(problems, p...)
}

// endpoint checks an upstream's or downstream's repository (an object
// name) and package (a package path, Porch's rule).
func endpoint(add func(field, format string, a ...any), field, repo, pkg string) {
	if repo == "" {
		add(field+".repo", "`%s.repo` must not be empty", field)
	}
	if pkg == "" {
		add(field+".package", "`%s.package` must not be empty", field)
	}
	if msg := check.DNS1123Subdomain(repo); repo != "" && msg != "" {
		add(field+".repo", "`%s.repo` %s", field, msg)
	}
	if msg := check.PackagePath(pkg); pkg != "" && msg != "" {
		add(field+".package", "`%s.package` %s", field, msg)
	}
}
