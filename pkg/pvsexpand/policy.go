package pvsexpand

import (
	"fmt"
	"time"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
)

// Policy flows down (rule policy-flows-down): the policies a set is
// annotated with (pvkit.dev/drift-policy, observe-interval, draft-upgrade,
// require-provenance) are written into every child's spec.policy, as the
// set writes its pins, approval and health, so that a child obeys what
// its own spec says and reads nothing of its set, and a policy change on
// the set is a write that wakes each child. A value a child's schema would
// refuse (or a child could not obey) makes the set invalid, naming the
// annotation.

// SetPolicy is the policy a set gives its children (nil: none).
func SetPolicy(set *v1alpha2.PackageVariantSet) *pv.Policy {
	var p pv.Policy
	for _, a := range pv.PolicyAnnotations {
		if val, ok := set.Metadata.Annotations[a.Annotation]; ok {
			p.Set(a.Annotation, val)
		}
	}
	if p.Empty() {
		return nil
	}
	return &p
}

// policyProblems checks a set's policy annotations.
func policyProblems(set *v1alpha2.PackageVariantSet) []krm.Problem {
	var out []krm.Problem
	ann := set.Metadata.Annotations
	bad := func(key, format string, a ...any) {
		out = append(out, krm.Errorf(nil, fmt.Sprintf("metadata.annotations[%s]", key), "`metadata.annotations[%s]` %s; the set writes it into each child's spec.policy", key, fmt.Sprintf(format, a...)))
	}
	if val, ok := ann[pv.DriftPolicyAnnotation]; ok && val != "report" && val != "adopt" && val != "revert" {
		bad(pv.DriftPolicyAnnotation, "is %q, none of \"report\", \"adopt\" and \"revert\"", val)
	}
	if val, ok := ann[pv.DraftUpgradeAnnotation]; ok && val != "in-place" && val != "stall" {
		bad(pv.DraftUpgradeAnnotation, "is %q, neither \"in-place\" nor \"stall\"", val)
	}
	if val, ok := ann[pv.ObserveIntervalAnnotation]; ok {
		if d, err := time.ParseDuration(val); err != nil || d <= 0 || len(val) > 32 {
			bad(pv.ObserveIntervalAnnotation, "is %q, not a positive duration such as 10m", val)
		}
	}
	return out
}
