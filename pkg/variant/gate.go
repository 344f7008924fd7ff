package variant

import (
	"fmt"
	"slices"

	"github.com/pvkit/pvkit/pkg/kptfile"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MutationGate (rule: gate-from-first-write) is the readiness gate a
// PackageVariant's drafts carry from
// their creation (store.DraftSpec.ReadinessGates, its condition False) until
// the chain has run on them: a draft whose mutation has not run, or failed,
// is not approvable (porchctl, Nephio's approval controller and pvctl
// approve check every gate).
const MutationGate = "pvkit.dev/mutation"

// The condition the chain sets when it has run.
const (
	MutatedReason  = "Mutated"
	MutatedMessage = "the PackageVariant's mutations ran"
)

// closeGate sets the MutationGate's condition True in a package that has
// the gate; a package without it is left alone (a draft pvkit did not
// create: taken over from Porch's controllers, say). It returns what still
// holds the package back (Result.OpenGate): a gate other than the
// mutation's whose condition is not True, or "".
func closeGate(items []*yaml.RNode) (string, error) {
	kf, err := kptfile.Find(items)
	if err != nil || kf == nil {
		return "", err
	}
	gates, err := kf.ReadinessGates()
	if err != nil {
		return "", fmt.Errorf("Kptfile: %w", err)
	}
	if slices.Contains(gates, MutationGate) {
		if err := kf.SetConditions([]kptfile.Condition{{Type: MutationGate, Status: kptfile.ConditionTrue, Reason: MutatedReason, Message: MutatedMessage}}); err != nil {
			return "", fmt.Errorf("Kptfile: %w", err)
		}
	}
	return openGate(kf), nil
}

// openGate says why a Kptfile's package cannot be approved without a
// change: a readiness gate other than MutationGate whose condition is not
// True (one without a condition is not counted: nothing has said it is
// False yet); "" when none.
func openGate(kf *kptfile.Kptfile) string {
	gate, c, err := kf.NotReady()
	if err != nil || gate == "" || gate == MutationGate || c == nil {
		return ""
	}
	return fmt.Sprintf("readiness gate %q is %s (%s: %s)", gate, c.Status, c.Reason, c.Message)
}
