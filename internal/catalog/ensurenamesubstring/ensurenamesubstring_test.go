package ensurenamesubstring

import (
	"bytes"
	"strings"
	"testing"
)

func run(t *testing.T, b Behaviour, items, config string) (int, string, string) {
	t.Helper()
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
	if config != "" {
		in += "functionConfig:\n" + config
	}
	var out, stderr bytes.Buffer
	code := b.Run(strings.NewReader(in), &out, &stderr)
	return code, out.String(), stderr.String()
}

const configMap = "- {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: shop}}\n"

// Every error the function config can have is its own message, after the
// catalog's prefix, exit 1.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"none", "", "substring must not be empty"},
		{"no name", "  {apiVersion: v1, kind: ConfigMap, data: {prepend: a-}}\n", "missing metadata.name"},
		{"no kind", "  {apiVersion: v1, metadata: {name: c}}\n", "missing kind"},
		{"two keys", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {prepend: a-, append: -b}}\n",
			"only 1 entry is allowed in the ConfigMap, but got: 2"},
		{"no keys", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n", "only 1 entry is allowed in the ConfigMap, but got: 0"},
		{"unknown key", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {prefix: a-}}\n",
			"unknown editMode: prefix, only prepend and append are allowed"},
		{"empty value", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {append: ''}}\n", "substring must not be empty"},
		{"not a string", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {append: [x]}}\n", "cannot unmarshal array"},
		{"other kind", "  {apiVersion: apps/v1, kind: Deployment, metadata: {name: c}}\n",
			"function config must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=EnsureNameSubstring, but we got: apps/v1, Kind=Deployment"},
		{"unknown mode", "  {apiVersion: fn.kpt.dev/v1alpha1, kind: EnsureNameSubstring, metadata: {name: c}, substring: a-, editMode: suffix}\n",
			"unknown editMode: suffix, only prepend and append are allowed"},
		{"both field lists", "  {apiVersion: fn.kpt.dev/v1alpha1, kind: EnsureNameSubstring, metadata: {name: c}, substring: a-, fieldSpecs: [{path: a}], additionalNameFields: [{path: b}]}\n",
			"`fieldSpecs` has been deprecated, please rename it to `additionalNameFields`"},
		{"no substring", "  {apiVersion: fn.kpt.dev/v1alpha1, kind: EnsureNameSubstring, metadata: {name: c}, editMode: append}\n", "substring must not be empty"},
		{"bad field list", "  {apiVersion: fn.kpt.dev/v1alpha1, kind: EnsureNameSubstring, metadata: {name: c}, substring: a-, additionalNameFields: nope}\n", "cannot unmarshal string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, V02, configMap, tc.config)
			if code != 1 || !strings.HasPrefix(stderr, "failed to load the `functionConfig`: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 and %q", code, stderr, tc.want)
			}
		})
	}
}

// Two objects with one identity cannot be told apart by references: the
// function refuses the package, naming the object.
func TestDuplicateObjectRefused(t *testing.T) {
	code, _, stderr := run(t, Unstable, configMap+configMap, "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {prepend: a-}}\n")
	if code != 1 || !strings.HasPrefix(stderr, "failed to convert items to resource map: ") || !strings.Contains(stderr, "settings") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// The field the substring goes in must be a path kyaml can look up.
func TestBadFieldPath(t *testing.T) {
	code, _, stderr := run(t, V02, "- {apiVersion: v1, kind: Widget, metadata: {name: w}, spec: {names: [a, b]}}\n",
		"  {apiVersion: fn.kpt.dev/v1alpha1, kind: EnsureNameSubstring, metadata: {name: c}, substring: a-, additionalNameFields: [{kind: Widget, path: 'spec/names/[=x'}]}\n")
	if code != 1 || !strings.HasPrefix(stderr, "failed to transform name substring: unable to lookup path spec/names/[=x in ") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// Annotations stay where and as they were written: order, quoting,
// comments; a renamed depends-on in place; the file annotations of the
// main branch gone, and an annotations field left empty gone too.
func TestAnnotationsKeepTheirLayout(t *testing.T) {
	items := `- apiVersion: v1
  kind: Secret
  metadata:
    annotations:
      zeta: 'z' # last in the alphabet, first here
      config.kubernetes.io/depends-on: /namespaces/shop/ConfigMap/settings
      alpha: "a"
      config.kubernetes.io/path: app.yaml
      internal.config.kubernetes.io/path: app.yaml
    name: creds
    namespace: shop
- apiVersion: v1
  kind: ConfigMap
  metadata:
    annotations:
      config.kubernetes.io/path: app.yaml
      internal.config.kubernetes.io/path: app.yaml
    name: settings
    namespace: shop
`
	config := "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {prepend: eu-}}\n"
	code, out, stderr := run(t, V02, items, config)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `    annotations:
      zeta: 'z' # last in the alphabet, first here
      config.kubernetes.io/depends-on: /namespaces/shop/ConfigMap/eu-settings
      alpha: "a"
      config.kubernetes.io/path: app.yaml
      internal.config.kubernetes.io/path: app.yaml
    name: eu-creds
`
	if !strings.Contains(out, want) {
		t.Fatalf("v0.2: want\n%s\nin\n%s", want, out)
	}
	code, out, stderr = run(t, Unstable, items, config)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want = `    annotations:
      zeta: 'z' # last in the alphabet, first here
      config.kubernetes.io/depends-on: /namespaces/shop/ConfigMap/eu-settings
      alpha: "a"
    name: eu-creds
`
	if !strings.Contains(out, want) || strings.Contains(out, "path:") || !strings.Contains(out, "  metadata:\n    name: eu-settings\n") {
		t.Fatalf("unstable: want\n%s\nand no file annotations in\n%s", want, out)
	}
}

// A name that holds the substring anywhere is left; kept kinds keep their
// names; a depends-on naming an object outside the package is left.
func TestWhatIsLeftAlone(t *testing.T) {
	items := `- {apiVersion: v1, kind: ConfigMap, metadata: {name: shop-eu-x}}
- {apiVersion: v1, kind: Namespace, metadata: {name: shop}}
- {apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: widgets.example.com}}
- {apiVersion: apiregistration.k8s.io/v1, kind: APIService, metadata: {name: v1.example.com}}
- {apiVersion: kpt.dev/v1, kind: Kptfile, metadata: {name: pkg}}
- {apiVersion: v1, kind: Secret, metadata: {name: s, annotations: {config.kubernetes.io/depends-on: /namespaces/shop/ConfigMap/elsewhere}}}
`
	code, out, stderr := run(t, V02, items, "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {append: -eu}}\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"name: shop-eu-x}", "name: shop}", "name: widgets.example.com}", "name: v1.example.com}", "name: pkg}",
		"name: s-eu, annotations: {config.kubernetes.io/depends-on: /namespaces/shop/ConfigMap/elsewhere}"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
}
