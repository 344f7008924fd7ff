package catalog

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	for image, want := range map[string]string{
		"gcr.io/kpt-fn/set-labels:v0.2.0":                        "set-labels-v0.2",
		"gcr.io/kpt-fn/set-labels:v0.2":                          "set-labels-v0.2",
		"ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2.1": "set-labels-v0.2",
		"set-labels:v0.2":                                        "set-labels-v0.2",
		"gcr.io/kpt-fn/set-labels":                               "set-labels-v0.2",
		"gcr.io/kpt-fn/set-labels:latest":                        "set-labels-v0.2",
		"gcr.io/kpt-fn/set-labels:unstable":                      "set-labels-v0.2",
		"gcr.io/kpt-fn/set-labels:v0":                            "set-labels-v0.2",
		"gcr.io/kpt-fn/set-labels:v0.1":                          "set-labels-v0.1",
		"gcr.io/kpt-fn/set-labels:v0.1.5":                        "set-labels-v0.1",
		"gcr.io/kpt-fn/set-labels@sha256:0dfc3c8aba8b791d0c45fe7eafbc8cf3c5920a09f69848f46dcc270ae3423641": "set-labels-v0.1",
		"gcr.io/kpt-fn/set-annotations:v0.1.4":   "set-annotations-v0.1",
		"gcr.io/kpt-fn/set-annotations:latest":   "set-annotations-v0.1",
		"gcr.io/kpt-fn/set-annotations:unstable": "set-annotations-unstable",
		// not pvkit's: an unknown version, tag, digest, registry or function
		"gcr.io/kpt-fn/set-labels:v0.1.3":    "",
		"gcr.io/kpt-fn/set-labels:v0.3":      "",
		"gcr.io/kpt-fn/set-labels:v0.2.9":    "",
		"gcr.io/kpt-fn/set-labels:v0.2.x":    "",
		"gcr.io/kpt-fn/set-labels:v0.2.0.1":  "",
		"gcr.io/kpt-fn/set-labels@sha256:00": "",
		"example.com/kpt-fn/set-labels:v0.2": "",
		"gcr.io/kpt-fn/sub/set-labels:v0.2":  "",
		"gcr.io/kpt-fn/set-namespace:v0.4.1": "",
		"gcr.io/kpt-fn/set-labels:v0.20":     "",
		"nginx:1.0":                          "",
	} {
		got := ""
		if f := Resolve(image); f != nil {
			got = f.Executable
		}
		if got != want {
			t.Errorf("Resolve(%q) = %q, want %q", image, got, want)
		}
	}
}

// Porch's function runner matches names exactly: every name Images lists
// resolves back to its function, no name is listed twice, and the config
// lists every function.
func TestImagesAndConfig(t *testing.T) {
	seen := map[string]string{}
	for _, f := range Functions {
		images := Images(f)
		if len(images) == 0 {
			t.Fatalf("%s: no images", f.Executable)
		}
		for _, i := range images {
			if Resolve(i) != f {
				t.Errorf("%s lists %s, which resolves elsewhere", f.Executable, i)
			}
			if prev, dup := seen[i]; dup {
				t.Errorf("%s is listed by %s and %s", i, prev, f.Executable)
			}
			seen[i] = f.Executable
		}
	}
	cfg := string(Config())
	for _, f := range Functions {
		if !strings.Contains(cfg, "  - function: "+f.Executable+"\n") {
			t.Errorf("the config has no entry for %s", f.Executable)
		}
	}
	if !strings.Contains(cfg, "      - gcr.io/kpt-fn/set-annotations:v0.1.4\n") {
		t.Errorf("the config does not map Nephio's set-annotations:\n%s", cfg)
	}
}

// A panic in a function is its own failure, said on its stderr.
func TestCallRecoversAPanic(t *testing.T) {
	f := &Function{Executable: "boom", Run: func(io.Reader, io.Writer, io.Writer) int { panic("nil map") }}
	var stderr bytes.Buffer
	if code := f.Call(strings.NewReader(""), io.Discard, &stderr); code != 1 || stderr.String() != "boom: internal error: nil map" {
		t.Fatalf("Call = %d, stderr %q", code, stderr.String())
	}
}

// Input that is not a ResourceList is each function's error, exit 1.
func TestBadInput(t *testing.T) {
	for _, f := range Functions {
		var out, stderr bytes.Buffer
		code := f.Call(strings.NewReader("items: [\n"), &out, &stderr)
		if code != 1 || stderr.Len() == 0 {
			t.Errorf("%s: exit %d, stderr %q", f.Executable, code, stderr.String())
		}
	}
}
