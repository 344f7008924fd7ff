package krm

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// plainString's fast answer never differs from kyaml's YAML 1.1 check:
// a value it calls plain reads back as a string.
func TestPlainStringAgreesWithKyaml(t *testing.T) {
	values := []string{"app", "nginx", "v1", "app-prod", "gcr.io/kpt-fn/set-labels", "a.b_c/d-e", "x1", "Yes", "YES", "yes", "y", "Y", "n", "No", "on", "Off",
		"true", "False", "null", "NULL", "nil", "yesno", "onion", "nully", "e1", "E10", "inf", "nan", "x:y", "a b", "a#b", "1", "1e3", "0x10", ".inf", "~", "-1", "_a"}
	for _, v := range values {
		if plainString(v) && yaml.IsValueNonString(v) {
			t.Errorf("%q: plainString says plain, kyaml says not a string", v)
		}
	}
	for _, v := range []string{"app", "gcr.io/kpt-fn/set-labels", "onion", "E10"} {
		if !plainString(v) {
			t.Errorf("%q is not taken for plain", v)
		}
	}
}

func FuzzPlainStringAgreesWithKyaml(f *testing.F) {
	for _, v := range []string{"app", "yes", "e1", "a.b"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if plainString(v) && yaml.IsValueNonString(v) {
			t.Errorf("%q: plainString says plain, kyaml says not a string", v)
		}
	})
}
