package v1alpha1

import (
	"fmt"
	"strings"
)

// LegacyCreated starts a LastWrite older pvkit wrote for a draft recorded
// by its version as created (DownstreamTarget.CreatedAt now holds it).
const LegacyCreated = "created@"

// Target is the variant's status entry for a revision (the zero value
// when it has none).
func (v *PackageVariant) Target(name string) DownstreamTarget {
	for _, t := range v.Status.DownstreamTargets {
		if t.Name == name {
			return t
		}
	}
	return DownstreamTarget{}
}

// Created is the version the target's draft was recorded at as its
// creation left it ("": none), in the field or in the older form.
func (t DownstreamTarget) Created() string {
	if t.CreatedAt != "" {
		return t.CreatedAt
	}
	if v, ok := strings.CutPrefix(t.LastWrite, LegacyCreated); ok {
		return v
	}
	return ""
}

// LastLeft is the digest of the draft as the variant last left it, for a
// draft read at digest fp: its LastWrite, or its UnconfirmedWrite when the
// draft is at that digest (the write whose answer was an error landed as
// sent); "" when no digest is known.
func (t DownstreamTarget) LastLeft(fp string) string {
	if t.UnconfirmedWrite != "" && t.UnconfirmedWrite == fp {
		return fp
	}
	if strings.HasPrefix(t.LastWrite, LegacyCreated) {
		return "" // no digest known: not edited by anyone's reckoning
	}
	return t.LastWrite
}

// Rejected reports whether a person rejected the target's draft (rule
// rejected-drafts: Blocked, Rejected).
func (t DownstreamTarget) Rejected() bool {
	return t.Blocked != nil && t.Blocked.Reason == ReasonRejected
}

// PolicyOf is the variant's value of a policy (spec.policy's field, else
// its own annotation key, which the field replaces), with what gives it,
// for messages; ok is false when neither does.
func (v *PackageVariant) PolicyOf(key string) (what, val string, ok bool) {
	if field, val := v.Spec.Policy.Get(key); val != "" {
		return fmt.Sprintf("PackageVariant %s (`spec.policy.%s`)", v.Name, field), val, true
	}
	if val, ok = v.Annotations[key]; ok {
		return "PackageVariant " + v.Name, val, true
	}
	return "PackageVariant " + v.Name, "", false
}
