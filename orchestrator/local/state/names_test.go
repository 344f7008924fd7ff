package state

import (
	"strings"
	"testing"
)

// A state file whose objects' names an API server would refuse (a
// terminal escape, a second line) is refused, naming the field: pvctl
// prints those names in listings and shell completion.
func TestStateNamesAreChecked(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"packageVariants:\n- metadata: {name: \"evil\\u001b[2Jname\\nsecond\", namespace: default}\n",
			`pvctl-state.yaml: packageVariants[0].metadata.name must be a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit), found "evil\x1b[2Jname\nsecond" (delete it to start from no variants; the repositories keep the packages)`},
		{"packageVariantSets:\n- metadata: {name: ok, namespace: \"Team A\"}\n", `pvctl-state.yaml: packageVariantSets[0].metadata.namespace "Team A" `},
		{"repositories:\n- metadata: {name: \"\"}\n", "pvctl-state.yaml: repositories[0].metadata.name must not be empty"},
	} {
		if _, err := Parse(File, []byte(c.text)); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v\nwant %s", c.text, err, c.want)
		}
	}
	if _, err := Parse(File, []byte("packageVariants:\n- metadata: {name: app-prod, namespace: default}\n")); err != nil {
		t.Fatal(err)
	}
}
