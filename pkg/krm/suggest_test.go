package krm

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

type suggestSpec struct {
	RepositorySelector map[string]string `json:"repositorySelector,omitempty"`
	Rollout            *suggestRollout   `json:"rollout,omitempty"`
}

type suggestRollout struct {
	SpreadBy string        `json:"spreadBy,omitempty"`
	Waves    []suggestWave `json:"waves,omitempty"`
}

type suggestWave struct {
	Name string `json:"name"`
}

type suggestObj struct {
	Spec suggestSpec `json:"spec"`
}

// Issue 62 #3: an unknown field names the nearest known one beside it, or
// the place a field of that exact name is; nothing when neither is near.
func TestUnknownFieldSuggestions(t *testing.T) {
	obj := yaml.MustParse(`spec:
  repositorySelecter: {}
  rollout:
    waves:
    - name: a
      spreadBy: region
  zzzzzz: 1
`)
	var got []string
	for _, p := range Decode(obj, &suggestObj{}) {
		got = append(got, p.Message)
	}
	want := []string{
		"`spec.repositorySelecter` is not a field of suggestObj (did you mean `repositorySelector`?); it is ignored",
		"`spec.rollout.waves[0].spreadBy` is not a field of suggestObj (did you mean `spec.rollout.spreadBy`?); it is ignored",
		"`spec.zzzzzz` is not a field of suggestObj; it is ignored",
	}
	var msgs []string
	for _, g := range got {
		if strings.Contains(g, "is not a field") {
			msgs = append(msgs, g)
		}
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"selecter", "selector", 1}, {"kitten", "sitting", 3}} {
		if d := EditDistance(tc.a, tc.b); d != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, d, tc.d)
		}
	}
}
