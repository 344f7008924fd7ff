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

// Package content is untrusted: an alias bomb (10^8 copies of a 1 KB
// string when expanded) in an object, in a place each function walks
// (labels, a Deployment's template) and one it does not (data), goes
// through every function in process unexpanded: the output stays the size
// of the input, the anchors kept. kustomize's filters (the v0.1 behaviours)
// refuse an alias where they set labels, naming the field, and the kpt SDK
// (set-labels v0.2) panics on one, which Call makes the function's failure:
// bounded too.
func TestAliasBombIsNotExpanded(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: bomb\n    labels: &l {app: x}\n" +
		"  spec:\n    selector: {matchLabels: *l}\n    template: {metadata: {labels: *l}, spec: {containers: [{name: c, image: nginx}]}}\n  data:\n")
	b.WriteString("    a0: &a0 \"" + strings.Repeat("x", 1000) + "\"\n")
	for i := 1; i <= 8; i++ {
		b.WriteString("    a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.TrimSuffix(strings.Repeat("*a"+string(rune('0'+i-1))+", ", 10), ", ") + "]\n")
	}
	bomb := b.String()
	// Each function's config: a label or annotation team=payments.
	withConfig := func(f *Function, s string) string {
		if f.Name == "apply-replacements" {
			return s + "functionConfig:\n  apiVersion: fn.kpt.dev/v1alpha1\n  kind: ApplyReplacements\n  metadata: {name: r}\n" +
				"  replacements:\n  - source: {kind: Deployment, name: bomb, fieldPath: spec.selector.matchLabels.app}\n" +
				"    targets: [{select: {kind: Deployment}, fieldPaths: [metadata.annotations.team], options: {create: true}}]\n" +
				"  - source: {kind: Deployment, name: bomb, fieldPath: metadata.annotations.team}\n" +
				"    targets: [{select: {kind: Deployment}, fieldPaths: [metadata.annotations.team], options: {delimiter: '-', index: -1}}]\n"
		}
		if f.Name == "search-replace" {
			return s + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {by-value: x, put-value: payments}\n"
		}
		if f.Name == "starlark" {
			return s + "functionConfig:\n  apiVersion: fn.kpt.dev/v1alpha1\n  kind: StarlarkRun\n  metadata: {name: s}\n" +
				"  source: |\n    for r in ctx.resource_list['items']:\n      r['metadata']['annotations'] = {'team': 'payments'}\n"
		}
		if f.Name == "set-namespace" {
			return s + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {namespace: payments}\n"
		}
		if f.Name == "create-setters" {
			return s + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {image: nginx}\n"
		}
		if f.Name == "ensure-name-substring" {
			return s + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {prepend: payments-}\n"
		}
		if f.Name == "set-image" {
			return s + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {name: nginx, newTag: payments}\n"
		}
		return s + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {team: payments}\n"
	}
	// Without the alias where labels go, every function succeeds.
	plain := strings.Replace(strings.Replace(strings.Replace(bomb, "labels: &l {app: x}", "labels: {app: x}", 1),
		"{matchLabels: *l}", "{matchLabels: {app: x}}", 1), "{labels: *l}", "{labels: {app: x}}", 1)
	for _, f := range Functions {
		var out, stderr bytes.Buffer
		in := withConfig(f, plain)
		code := f.Call(strings.NewReader(in), &out, &stderr)
		if f.Name == "starlark" {
			// starlark reads the objects into its own values, expanding
			// aliases: the YAML decoder refuses a bomb, bounded
			if code != 1 || !strings.Contains(out.String(), "document contains excessive aliasing") || out.Len() > 4*len(in) {
				t.Fatalf("%s: exit %d, %d bytes from %d: %s%s", f.Executable, code, out.Len(), len(in), stderr.String(), out.String())
			}
			continue
		}
		if code != 0 || out.Len() > 4*len(in) || !strings.Contains(out.String(), "*a7") {
			t.Fatalf("%s: exit %d, %d bytes from %d: %s%s", f.Executable, code, out.Len(), len(in), stderr.String(), out.String())
		}
	}
	for _, f := range Functions {
		var out, stderr bytes.Buffer
		in := withConfig(f, bomb)
		code := f.Call(strings.NewReader(in), &out, &stderr)
		if f.Name == "starlark" {
			if code != 1 || !strings.Contains(out.String(), "document contains excessive aliasing") {
				t.Fatalf("%s: exit %d: %s", f.Executable, code, stderr.String())
			}
			continue
		}
		if code != 0 {
			// kustomize names the field (apply-replacements in its
			// results); the SDK panics on an alias node,
			// which Call turns into the function's failure.
			if code != 1 || !strings.Contains(stderr.String()+out.String(), "AliasNode") && stderr.String() != f.Executable+": internal error: unhandled yaml node kind" {
				t.Fatalf("%s: exit %d: %s", f.Executable, code, stderr.String())
			}
			continue
		}
		want := "team: payments"
		switch f.Name {
		case "apply-replacements":
			want = "team: x-x" // through the alias of the selector
		case "set-image":
			want = "nginx:payments"
		case "search-replace":
			want = "app: payments"
		case "ensure-name-substring":
			want = "name: payments-bomb"
		case "create-setters":
			want = "kpt-set: ${image}"
		case "set-namespace":
			want = "namespace: payments"
		}
		if out.Len() > 4*len(in) || !strings.Contains(out.String(), "*a7") || !strings.Contains(out.String(), want) {
			t.Fatalf("%s: the output (%d bytes from %d) expanded the aliases or lost the labels:\n%.2000s", f.Executable, out.Len(), len(in), out.String())
		}
	}
}
