package setnamespace

import (
	"bytes"
	"strings"
	"testing"
)

func run(t *testing.T, items, config string) (int, string) {
	t.Helper()
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
	if config != "" {
		in += "functionConfig:\n" + config
	}
	var out, stderr bytes.Buffer
	code := Run(strings.NewReader(in), &out, &stderr)
	if stderr.Len() > 0 {
		t.Logf("stderr: %s", stderr.String())
	}
	return code, out.String()
}

const service = "- {apiVersion: v1, kind: Service, metadata: {name: s, namespace: old}}\n"

// A config error is an error result naming the config object; the
// function exits 0 and changes nothing, as the catalog's does.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, config, want string }{
		{"none", "", "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"},
		{"other kind", "  {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}}\n",
			"unknown functionConfig Kind=Deployment ApiVersion=apps/v1, expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"},
		{"ConfigMap of another group", "  {apiVersion: example.com/v1, kind: ConfigMap, metadata: {name: c}, data: {namespace: x}}\n",
			"unknown functionConfig Kind=ConfigMap ApiVersion=example.com/v1"},
		{"no namespace", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {name: x}}\n", "`data.namespace` should not be empty"},
		{"empty package context", "  {apiVersion: v1, kind: ConfigMap, metadata: {name: kptfile.kpt.dev}, data: {name: ''}}\n", "`data.name` should not be empty"},
		{"SetNamespace without one", "  {apiVersion: fn.kpt.dev/v1alpha1, kind: SetNamespace, metadata: {name: s}, namespaceMatcher: old}\n", "`namespace` should not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := run(t, service, tc.config)
			if code != 0 || !strings.Contains(out, tc.want) || !strings.Contains(out, "severity: error") || !strings.Contains(out, "namespace: old") {
				t.Fatalf("exit %d, want 0, the error %q and nothing changed:\n%s", code, tc.want, out)
			}
		})
	}
}

// The package context's name is the namespace; namespaceMatcher narrows
// the change and says which objects matched by origin.
func TestMatcherAndPackageContext(t *testing.T) {
	items := service + `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: c
    namespace: renamed-locally
    annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|old|c'}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: other, namespace: keep}}
`
	code, out := run(t, items, "  {apiVersion: v1, kind: ConfigMap, metadata: {name: kptfile.kpt.dev}, data: {name: new, namespaceMatcher: old}}\n")
	for _, want := range []string{"name: s, namespace: new}", "namespace: new\n", "name: other, namespace: keep}",
		"has matching origin old", `namespace [old renamed-locally] updated to "new", 2 value(s) changed`} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// Objects from more than one upstream namespace need a matcher; a
// namespaced object whose origin is cluster-scoped, or an origin that does
// not parse, is an error result; nothing is changed.
func TestOriginErrors(t *testing.T) {
	config := "  {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {namespace: new}}\n"
	for _, tc := range []struct{ name, items, want string }{
		{"two origins", "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: old, annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|x|a'}}}\n" +
			"- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: old, annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|y|b'}}}\n",
			"expect a single upstream namespace, found [x y]. please switch to use `namespaceMatcher`"},
		{"cluster-scoped origin", "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: old, annotations: {internal.kpt.dev/upstream-identifier: '|ConfigMap|~C|a'}}}\n",
			"is namespace-scoped, but has cluster-scoped or unknown scoepd origin"},
		{"bad origin", "- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: old, annotations: {internal.kpt.dev/upstream-identifier: 'nonsense'}}}\n",
			"nonsense is in bad format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := run(t, tc.items, config)
			if code != 0 || !strings.Contains(out, tc.want) || strings.Contains(out, "namespace: new,") {
				t.Fatalf("exit %d, want %q and nothing changed:\n%s", code, tc.want, out)
			}
		})
	}
}

// Objects with no upstream origin are changed, each with a warning.
func TestNoOriginWarns(t *testing.T) {
	_, out := run(t, service, "  {apiVersion: fn.kpt.dev/v1alpha1, kind: SetNamespace, metadata: {name: s}, namespace: new}\n")
	if !strings.Contains(out, "Resource(apiVersion=v1, kind=Service, namespace=old, name=s) does not have upstream origin.") ||
		!strings.Contains(out, "severity: warning") || !strings.Contains(out, "name: s, namespace: new}") {
		t.Fatalf("%s", out)
	}
}
