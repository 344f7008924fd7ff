// Package approval decides, as Nephio's approval controller does, whether a
// draft package revision that asks for it is approved: the annotations
// approval.nephio.org/policy (initial or always) and approval.nephio.org/delay
// on the revision (a PackageVariant's spec.annotations put them there).
// pvctl run applies it to the drafts of its variants; the decision is pure,
// so that the controller (behind a flag: Nephio runs its own) can share it.
//
// The rules (nephio-project/nephio, controllers/pkg/reconcilers/approval):
//   - only a Draft or Proposed revision with a policy annotation is
//     considered;
//   - its owning PackageVariant must be Ready, and every readiness gate of
//     the revision True;
//   - policy initial approves only when the package has no published
//     revision yet; always approves every time; any other value is an error;
//   - with a delay annotation (a Go duration, 0 or more), not before the
//     revision has existed that long.
//
// pvkit adds three rules: a draft a person changed since the variant's last
// write (pvctl push, a git commit) is left to a person, so is a draft
// that requires provenance (pvkit.dev/require-provenance) whose content is
// not what its provenance record says, and so is a draft whose publication
// would replace a newer published revision a person made.
package approval

import (
	"fmt"
	"strings"
	"time"
)

// Annotations Nephio's approval controller reads.
const (
	PolicyAnnotation = "approval.nephio.org/policy"
	DelayAnnotation  = "approval.nephio.org/delay"
	Initial          = "initial"
	Always           = "always"
)

// EditedSince reports whether a draft whose content has the digest now was
// changed by someone since the variant last wrote it (its digest
// lastWrite): a draft the variant never wrote (lastWrite "") counts as
// changed, so only a person approves it.
func EditedSince(lastWrite, now string) bool { return lastWrite == "" || lastWrite != now }

// Split separates annotations a variant gives its drafts into those
// written when the draft is created (now) and those that ask for its
// approval (later: every approval.nephio.org/ annotation), written only
// once the draft is finished, so that no approver sees a half-made draft
// that asks to be approved.
func Split(annotations map[string]string) (now, later map[string]string) {
	for k, v := range annotations {
		if strings.HasPrefix(k, "approval.nephio.org/") {
			if later == nil {
				later = map[string]string{}
			}
			later[k] = v
			continue
		}
		if now == nil {
			now = map[string]string{}
		}
		now[k] = v
	}
	return now, later
}

// Facts are what the decision reads about one draft.
type Facts struct {
	Annotations map[string]string
	// Created is when the revision was created (zero: unknown, which
	// satisfies any delay), Now the time of the decision.
	Created, Now time.Time
	// VariantReady: the owning PackageVariant is Ready (true when none owns
	// the revision).
	VariantReady bool
	// GatesTrue: every readiness gate of the revision has a True condition.
	GatesTrue bool
	// PublishedExists: the package has a published revision already.
	PublishedExists bool
	// EditedByPerson: someone but the variant changed the draft since the
	// variant's last write.
	EditedByPerson bool
	// ProvenanceProblem, when not "", is why the draft's provenance record
	// does not hold while the draft requires it
	// (pvkit.dev/require-provenance): its content differs from the record,
	// or the record is missing or not signed by an allowed key.
	ProvenanceProblem string
	// Replaces, when not "", names a published revision of the package
	// that a person made, newer than the one the draft starts from:
	// publishing the draft would put the person's content back (rule
	// published-drift), so a person decides.
	Replaces string
}

// Decision is the outcome: approve or not, and why, in words.
type Decision struct {
	Approve bool
	Policy  string // "" when the revision asks for no approval
	Why     string
	// Wait, when the delay holds the approval back, is how long until it
	// is due.
	Wait time.Duration
}

// Decide applies the rules to f. An error is a bad annotation (an unknown
// policy, a delay that does not parse), which a person must fix.
func Decide(f Facts) (Decision, error) {
	policy, ok := f.Annotations[PolicyAnnotation]
	if !ok {
		return Decision{Why: "no " + PolicyAnnotation + " annotation"}, nil
	}
	d := Decision{Policy: policy}
	if policy != Initial && policy != Always {
		return d, fmt.Errorf("invalid %s annotation %q: want %q or %q", PolicyAnnotation, policy, Initial, Always)
	}
	var delay time.Duration
	if s, ok := f.Annotations[DelayAnnotation]; ok {
		v, err := time.ParseDuration(s)
		if err != nil {
			return d, fmt.Errorf("invalid %s annotation %q: %v", DelayAnnotation, s, err)
		}
		if v < 0 {
			return d, fmt.Errorf("invalid %s annotation %q: a delay must be 0 or more", DelayAnnotation, s)
		}
		delay = v
	}
	switch {
	case !f.VariantReady:
		d.Why = "its PackageVariant is not Ready"
	case !f.GatesTrue:
		d.Why = "a readiness gate is not True"
	case f.ProvenanceProblem != "":
		d.Why = "pvkit.dev/require-provenance: " + f.ProvenanceProblem + "; approve it by hand"
	case f.EditedByPerson:
		d.Why = "a person changed it since its variant's last write; approve it by hand"
	case f.Replaces != "":
		d.Why = "a person decides whose content wins: publishing it would replace " + f.Replaces
	case policy == Initial && f.PublishedExists:
		d.Why = "policy initial: the package has a published revision already"
	case delay > 0 && f.Created.IsZero():
		d.Why = fmt.Sprintf("%s %s: the draft's creation time is unknown", DelayAnnotation, delay)
	case delay > 0 && f.Now.Sub(f.Created) < delay:
		d.Why = fmt.Sprintf("%s %s: created %s ago", DelayAnnotation, delay, f.Now.Sub(f.Created).Round(time.Second))
		d.Wait = delay - f.Now.Sub(f.Created)
	default:
		d.Approve, d.Why = true, "policy "+policy+" met"
	}
	return d, nil
}
