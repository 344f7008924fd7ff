package krm

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

type decodeSpec struct {
	Spec struct {
		Revision int `json:"revision,omitempty"`
		Targets  []struct {
			Names []string `json:"names,omitempty"`
			Inline
		} `json:"targets,omitempty"`
	} `json:"spec"`
}

type Inline struct {
	Labels map[string]string `json:"labels,omitempty"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"spec:\n  revision: v1\n", "error spec.revision: `spec.revision` must be an integer, found a string"},
		{"spec:\n  targets:\n  - names: [a]\n  - names: [b, 3]\n", "error spec.targets[1].names[1]: `spec.targets[1].names[1]` must be a string, found a number"},
		{"spec:\n  targets:\n  - names: x\n", "error spec.targets[0].names: `spec.targets[0].names` must be a list, found a string"},
		{"spec:\n  targets:\n  - labels: {a: [1]}\n", "error spec.targets[0].labels.a: `spec.targets[0].labels.a` must be a string, found a list"},
		{"spec:\n  revison: 1\n  targets:\n  - labels: {a: b}\n    nmes: []\n", "warning spec.revison: `spec.revison` is not a field of decodeSpec (did you mean `revision`?); it is ignored\n" +
			"warning spec.targets[0].nmes: `spec.targets[0].nmes` is not a field of decodeSpec (did you mean `names`?); it is ignored"},
		{"spec:\n  revision: 3\n  targets:\n  - labels: {a: b}\n", ""},
		// Every value of the wrong type at once, with the unknown fields.
		{"spec:\n  revision: v1\n  targets:\n  - names: x\n    labels: {a: true}\n  typo: 1\n",
			"error spec.revision: `spec.revision` must be an integer, found a string\n" +
				"error spec.targets[0].names: `spec.targets[0].names` must be a list, found a string\n" +
				"error spec.targets[0].labels.a: `spec.targets[0].labels.a` must be a string, found a boolean\n" +
				"warning spec.typo: `spec.typo` is not a field of decodeSpec; it is ignored"},
		{"spec:\n  targets: &t\n  - names: [a]\n  other: *t\n", "warning spec.other: `spec.other` is not a field of decodeSpec; it is ignored"},
	}
	for _, tt := range tests {
		var v decodeSpec
		problems := Decode(yaml.MustParse(tt.in), &v)
		got := ""
		for i, p := range problems {
			if i > 0 {
				got += "\n"
			}
			got += string(p.Severity) + " " + p.Field + ": " + p.Message
		}
		if got != tt.want {
			t.Errorf("Decode(%q) =\n%s\nwant\n%s", tt.in, got, tt.want)
		}
	}
}

// Encode writes what encoding/json writes (as YAML), field order kept.
func TestEncodeMatchesJSON(t *testing.T) {
	type inner struct {
		B    bool              `json:"b"`
		N    int               `json:"n,omitempty"`
		M    map[string]string `json:"m,omitempty"`
		List []string          `json:"list,omitempty"`
	}
	type outer struct {
		Inline `json:",inline"`
		Z      string   `json:"z"`
		A      *inner   `json:"a,omitempty"`
		Empty  *inner   `json:"empty,omitempty"`
		Items  []inner  `json:"items"`
		Ptr    *string  `json:"ptr,omitempty"`
		Nil    []string `json:"nil"`
	}
	s := "x"
	v := outer{Inline: Inline{Labels: map[string]string{"b": "2", "a": "1"}}, Z: "3", A: &inner{B: true, N: 2, List: []string{}},
		Items: []inner{{M: map[string]string{"k": "true"}}}, Ptr: &s}
	n, err := Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := yaml.String(n)
	want := "labels:\n  a: \"1\"\n  b: \"2\"\nz: \"3\"\na:\n  b: true\n  n: 2\nitems:\n- b: false\n  m:\n    k: \"true\"\nptr: x\nnil: null\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
