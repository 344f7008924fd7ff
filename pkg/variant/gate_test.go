package variant

import (
	"testing"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

// Issue 42 #1: the chain says what still holds a package back once it has
// run (Result.OpenGate, what a variant's status calls GateClosed), from
// the Kptfile it left: the mutation gate it closes never does; another
// gate False does; a gate without a condition does not (nothing said it
// is False yet).
func TestOpenGate(t *testing.T) {
	kptfile := func(gates, conditions string) map[string]string {
		return map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\ninfo:\n  readinessGates:\n" + gates +
			"status:\n  conditions:\n" + conditions}
	}
	mutation := "  - conditionType: " + MutationGate + "\n"
	pending := "  - type: " + MutationGate + "\n    status: \"False\"\n    reason: Pending\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"the mutation gate alone", kptfile(mutation, pending), ""},
		{"a review gate False", kptfile(mutation+"  - conditionType: example.com/reviewed\n", pending+"  - type: example.com/reviewed\n    status: \"False\"\n    reason: NotYet\n    message: waiting\n"),
			`readiness gate "example.com/reviewed" is False (NotYet: waiting)`},
		{"a review gate True", kptfile(mutation+"  - conditionType: example.com/reviewed\n", pending+"  - type: example.com/reviewed\n    status: \"True\"\n    reason: Done\n"), ""},
		{"a gate without a condition", kptfile(mutation+"  - conditionType: example.com/reviewed\n", pending), ""},
	} {
		v := &pv.PackageVariant{}
		v.Metadata.Name = "app"
		c, err := NewChain(v, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(tc.files, c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if out.OpenGate != tc.want {
			t.Errorf("%s: OpenGate %q, want %q", tc.name, out.OpenGate, tc.want)
		}
	}
}
