package v1alpha1

// The annotations a variant's policies were given by before spec.policy
// (deprecated where a field replaces them: a variant reads one only where
// its spec.policy leaves the field out); on a set, they are the policies
// it writes into each child's spec.policy (rule policy-flows-down).
const (
	DriftPolicyAnnotation       = "pvkit.dev/drift-policy"
	ObserveIntervalAnnotation   = "pvkit.dev/observe-interval"
	DraftUpgradeAnnotation      = "pvkit.dev/draft-upgrade"
	RequireProvenanceAnnotation = "pvkit.dev/require-provenance"
)

// PolicyAnnotations are the policy annotations, in the order they are
// checked, each with its spec.policy field.
var PolicyAnnotations = []struct{ Annotation, Field string }{
	{DriftPolicyAnnotation, "drift"},
	{ObserveIntervalAnnotation, "observeInterval"},
	{DraftUpgradeAnnotation, "draftUpgrade"},
	{RequireProvenanceAnnotation, "requireProvenance"},
}

// Get is the policy's value for an annotation key, as the annotation
// would say it ("" when the field is absent), and the field's name.
func (p *Policy) Get(annotation string) (field, value string) {
	if p == nil {
		return fieldOf(annotation), ""
	}
	switch annotation {
	case DriftPolicyAnnotation:
		return "drift", p.Drift
	case ObserveIntervalAnnotation:
		return "observeInterval", p.ObserveInterval
	case DraftUpgradeAnnotation:
		return "draftUpgrade", p.DraftUpgrade
	case RequireProvenanceAnnotation:
		if p.RequireProvenance == nil {
			return "requireProvenance", ""
		}
		if *p.RequireProvenance {
			return "requireProvenance", "true"
		}
		return "requireProvenance", "false"
	}
	return "", ""
}

// Set sets the field of an annotation key from the annotation's value
// (require-provenance: true only for "true", as the annotation reads).
func (p *Policy) Set(annotation, value string) {
	switch annotation {
	case DriftPolicyAnnotation:
		p.Drift = value
	case ObserveIntervalAnnotation:
		p.ObserveInterval = value
	case DraftUpgradeAnnotation:
		p.DraftUpgrade = value
	case RequireProvenanceAnnotation:
		b := value == "true"
		p.RequireProvenance = &b
	}
}

// Clear drops the field of an annotation key.
func (p *Policy) Clear(annotation string) {
	switch annotation {
	case DriftPolicyAnnotation:
		p.Drift = ""
	case ObserveIntervalAnnotation:
		p.ObserveInterval = ""
	case DraftUpgradeAnnotation:
		p.DraftUpgrade = ""
	case RequireProvenanceAnnotation:
		p.RequireProvenance = nil
	}
}

// Empty: no field set.
func (p *Policy) Empty() bool {
	return p == nil || *p == (Policy{})
}

func fieldOf(annotation string) string {
	for _, a := range PolicyAnnotations {
		if a.Annotation == annotation {
			return a.Field
		}
	}
	return ""
}
