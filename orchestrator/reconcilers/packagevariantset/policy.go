package packagevariantset

import (
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/pvsexpand"
)

// keepOwnPolicies leaves out of each computed child's spec.policy (the
// set's policies, pvsexpand.SetPolicy: rule policy-flows-down) what the
// live child is annotated with itself: a variant's own policy annotation
// wins over its set's, as it did when the child read its set's
// annotations. A policy left empty is none.
func keepOwnPolicies(x *pvsexpand.Expansion, existing []*pv.PackageVariant) {
	live := make(map[string]map[string]string, len(existing))
	for _, c := range existing {
		live[c.Metadata.Name] = c.Metadata.Annotations
	}
	for i := range x.Children {
		c := &x.Children[i]
		ann := live[c.Name]
		if c.Spec.Policy == nil || len(ann) == 0 {
			continue
		}
		for _, a := range pv.PolicyAnnotations {
			if _, own := ann[a.Annotation]; own {
				c.Spec.Policy.Clear(a.Annotation)
			}
		}
		if c.Spec.Policy.Empty() {
			c.Spec.Policy = nil
		}
	}
}
