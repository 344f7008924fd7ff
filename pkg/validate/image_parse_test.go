package validate

import "testing"

// Issue 42 #8: one parse of image references, shared by validation, the
// catalog and the function runtime.
func TestParseImage(t *testing.T) {
	for ref, want := range map[string]Image{
		"set-labels":                              {Name: "set-labels"},
		"set-labels:v0.2":                         {Name: "set-labels", Tag: "v0.2"},
		"gcr.io/kpt-fn/set-labels:v0.2.0":         {Name: "gcr.io/kpt-fn/set-labels", Tag: "v0.2.0"},
		"localhost:5000/pvkit/config-inject":      {Name: "localhost:5000/pvkit/config-inject"},
		"localhost:5000/pvkit/config-inject:dev":  {Name: "localhost:5000/pvkit/config-inject", Tag: "dev"},
		"gcr.io/kpt-fn/set-labels@sha256:abc":     {Name: "gcr.io/kpt-fn/set-labels", Digest: "sha256:abc"},
		"gcr.io/kpt-fn/set-labels:v0.2@sha256:ab": {Name: "gcr.io/kpt-fn/set-labels", Tag: "v0.2", Digest: "sha256:ab"},
		"": {},
	} {
		got := ParseImage(ref)
		if got != want {
			t.Errorf("ParseImage(%q) = %+v, want %+v", ref, got, want)
		}
		if got.Name+got.Suffix() != ref {
			t.Errorf("%q: name and suffix give %q back", ref, got.Name+got.Suffix())
		}
	}
}
