package packagevariant

import (
	"fmt"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/chain"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/packagecontext"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
	check "github.com/pvkit/pvkit/pkg/validate"
)

// validate returns every problem of the spec joined with "; " ("" when
// valid): the reference's checks in kpt style, plus the checks the
// package-context and pipeline-prepend functions make of the same spec.
func validate(v *pvapi.PackageVariant) string {
	var msgs []string
	add := func(format string, a ...any) { msgs = append(msgs, fmt.Sprintf(format, a...)) }
	switch u := v.Spec.Upstream; {
	case u == nil:
		add("`spec.upstream` must be set")
	default:
		if u.Repo == "" {
			add("`spec.upstream.repo` must not be empty")
		}
		if u.Package == "" {
			add("`spec.upstream.package` must not be empty")
		}
		if msg := check.DNS1123Subdomain(u.Repo); u.Repo != "" && msg != "" {
			add("`spec.upstream.repo` %s", msg)
		}
		if msg := check.PackagePath(u.Package); u.Package != "" && msg != "" {
			add("`spec.upstream.package` %s", msg)
		}
		if u.Revision < 0 {
			add("`spec.upstream.revision` must be a published revision number (1 or more), found %d", u.Revision)
		}
	}
	switch d := v.Spec.Downstream; {
	case d == nil:
		add("`spec.downstream` must be set")
	default:
		if d.Repo == "" {
			add("`spec.downstream.repo` must not be empty")
		}
		if d.Package == "" {
			add("`spec.downstream.package` must not be empty")
		}
		if msg := check.DNS1123Subdomain(d.Repo); d.Repo != "" && msg != "" {
			add("`spec.downstream.repo` %s", msg)
		}
		if msg := check.PackagePath(d.Package); d.Package != "" && msg != "" {
			add("`spec.downstream.package` %s", msg)
		}
	}
	if p := v.Spec.AdoptionPolicy; p != "" && p != pv.AdoptionPolicyAdoptNone && p != pv.AdoptionPolicyAdoptExisting {
		add("`spec.adoptionPolicy` must be %q or %q, found %q", pv.AdoptionPolicyAdoptNone, pv.AdoptionPolicyAdoptExisting, p)
	}
	if p := v.Spec.DeletionPolicy; p != "" && p != pv.DeletionPolicyDelete && p != pv.DeletionPolicyOrphan {
		add("`spec.deletionPolicy` must be %q or %q, found %q", pv.DeletionPolicyDelete, pv.DeletionPolicyOrphan, p)
	}
	msgs = append(msgs, check.Labels("spec.labels", v.Spec.Labels)...)
	msgs = append(msgs, check.Annotations("spec.annotations", v.Spec.Annotations)...)
	for i, inj := range v.Spec.Injectors {
		if inj.Name == "" {
			add("`spec.injectors[%d].name` must not be empty", i)
		}
	}
	steps, err := chain.Steps(v, nil)
	if err != nil {
		add("%v", err)
	} else {
		for _, s := range steps[:2] { // package-context and pipeline-prepend read the variant itself
			var problems []krm.Problem
			if s.Name == "package-context" {
				_, problems = packagecontext.ConfigFromObject(s.Config)
			} else {
				_, problems = pipelineprepend.ConfigFromObject(s.Config)
			}
			for _, p := range problems {
				if p.Severity == "error" {
					msgs = append(msgs, p.Message)
				}
			}
		}
	}
	return strings.Join(msgs, "; ")
}
