package starlark

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/catalog/internal/reference"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const items = `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # the web
    annotations:
      config.kubernetes.io/path: app.yaml
      config.kubernetes.io/index: '0'
  spec:
    replicas: 3
    template:
      spec:
        containers:
        - name: web
          image: nginx:1.2
          ports: [{containerPort: 80}]
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    annotations:
      config.kubernetes.io/path: app.yaml
      config.kubernetes.io/index: '1'
  data:
    mode: fast
    ratio: "0.5"
    enabled: "true"
`

func list(source string) string {
	return "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items +
		"functionConfig:\n  apiVersion: fn.kpt.dev/v1alpha1\n  kind: StarlarkRun\n  metadata: {name: prog}\n  source: |\n" +
		indent(source, "    ")
}

func indent(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString(prefix + l + "\n")
	}
	return b.String()
}

// programs that v0.4.3 and v0.5 run alike.
var programs = []struct{ name, source string }{
	{"set a field", `for r in ctx.resource_list["items"]:
  r["metadata"]["namespace"] = "prod"`},
	{"add and remove items", `items = ctx.resource_list["items"]
items.pop(1)
items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})`},
	{"numbers and lists", `for r in ctx.resource_list["items"]:
  if r["kind"] == "Deployment":
    r["spec"]["replicas"] = r["spec"]["replicas"] * 2
    r["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "envoy", "args": ["-c", 1, 2.5, True, None]})`},
	{"libraries", `load("encoding/json.star", "json")
load("encoding/yaml.star", "yaml")
load("re.star", "re")
load("encoding/base64.star", "base64")
for r in ctx.resource_list["items"]:
  if r["kind"] == "ConfigMap":
    r["data"]["json"] = json.encode({"b": 1, "a": [True]})
    r["data"]["b64"] = base64.encode("hello")
    r["data"]["matched"] = str(re.match("fa(st)", r["data"]["mode"]))`},
	{"params from the config", `fc = ctx.resource_list["functionConfig"]
for r in ctx.resource_list["items"]:
  r["metadata"]["labels"] = {"from": fc["metadata"]["name"]}`},
	{"a failing program", `fail("no way")`},
	{"print", `print("one")
print(2)`},
}

// TestAgainstV043 runs programs both releases run alike through the
// released v0.4.3 (built from the Go module proxy by make
// catalog-functions) and through pvkit's: the same exit code, items and
// results.
func TestAgainstV043(t *testing.T) {
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			in := list(p.source)
			wantCode, want, wantErr := reference.Run(t, "starlark-v0.4.3", in)
			var got, gotErr bytes.Buffer
			code := Run(strings.NewReader(in), &got, &gotErr)
			if code != wantCode {
				t.Fatalf("v0.4.3 exits %d (%s), pvkit's %d (%s)", wantCode, wantErr, code, gotErr.String())
			}
			wantItems, wantResults := outcome(t, want)
			gotItems, gotResults := outcome(t, got.String())
			if diff := cmp.Diff(wantItems, gotItems); diff != "" {
				t.Errorf("items (-v0.4.3 +pvkit):\n%s", diff)
			}
			// v0.4.3 names an unnamed program "stalark-function-run"; this
			// one is named, so messages are alike
			if diff := cmp.Diff(wantResults, gotResults); diff != "" {
				t.Errorf("results (-v0.4.3 +pvkit):\n%s", diff)
			}
		})
	}
}

// outcome is a function's output: its items as written, and its results.
func outcome(t *testing.T, out string) (string, string) {
	t.Helper()
	rl, err := yaml.Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	get := func(field string) string {
		f := rl.Field(field)
		if f == nil {
			return ""
		}
		s, err := f.Value.String()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return get("items"), get("results")
}

func runFn(t *testing.T, in string) (int, string, string) {
	t.Helper()
	var out, stderr bytes.Buffer
	code := Run(strings.NewReader(in), &out, &stderr)
	return code, out.String(), stderr.String()
}

// Each config error is the error result, exit 1 and the SDK's line.
func TestConfigErrors(t *testing.T) {
	head := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
	for _, tc := range []struct{ name, config, want string }{
		{"none", "", "FunctionConfig is missing. Expect `ConfigMap` or `StarlarkRun`"},
		{"other kind", "functionConfig: {apiVersion: apps/v1, kind: Deployment, metadata: {name: d}}\n",
			"`functionConfig` must be either /v1, Kind=ConfigMap or fn.kpt.dev/v1alpha1, Kind=StarlarkRun, but we got: apps/v1, Kind=Deployment"},
		{"no source", "functionConfig: {apiVersion: fn.kpt.dev/v1alpha1, kind: StarlarkRun, metadata: {name: s}}\n", "`source` must not be empty"},
		{"ConfigMap without source", "functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b}}\n", "`source` must not be empty"},
		{"syntax error", "functionConfig: {apiVersion: fn.kpt.dev/v1alpha1, kind: StarlarkRun, metadata: {name: s}, source: 'for r in'}\n",
			"s:1:9: got end of file, want primary expression"},
		{"unnamed program", "functionConfig: {apiVersion: v1, kind: ConfigMap, data: {source: 'for r in'}}\n", "starlark-function-run:1:9: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := runFn(t, head+tc.config)
			if code != 1 || !strings.Contains(out, tc.want) || stderr != "failed to evaluate function: error: function failure" {
				t.Fatalf("exit %d, stderr %q, want 1 and %q in:\n%s", code, stderr, tc.want, out)
			}
		})
	}
}

// A StarlarkRun of another version, and a ConfigMap's source, are run
// (v0.5 matches the config by group and kind); what the program prints
// is on stderr, a line each, and before the failure line when it fails.
func TestConfigKindsAndPrint(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items +
		"functionConfig: {apiVersion: fn.kpt.dev/v1beta1, kind: StarlarkRun, metadata: {name: s}, source: \"print('a')\\nprint('b')\\nfail('c')\"}\n"
	code, _, stderr := runFn(t, in)
	if code != 1 || stderr != "a\nb\nfailed to evaluate function: error: function failure" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	in = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items +
		"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {source: \"ctx.resource_list['items'].pop()\"}}\n"
	code, out, _ := runFn(t, in)
	if code != 0 || strings.Contains(out, "name: settings") || !strings.Contains(out, "name: web") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// krmfn.match_gvk matches an object's apiVersion and kind (v0.5.x never
// matches a grouped kind); match_name and match_namespace, the object's.
func TestKrmfn(t *testing.T) {
	source := `load("krmfn.star", "krmfn")
for r in ctx.resource_list["items"]:
  r["metadata"]["labels"] = {
    "gvk": str(krmfn.match_gvk(r, "apps/v1", "Deployment")),
    "core": str(krmfn.match_gvk(r, "v1", "ConfigMap")),
    "name": str(krmfn.match_name(r, "web")),
    "ns": str(krmfn.match_namespace(r, "")),
  }`
	code, out, stderr := runFn(t, list(source))
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	for _, want := range []string{"core: \"False\"\n      gvk: \"True\"\n      name: \"True\"\n      ns: \"True\"",
		"core: \"True\"\n      gvk: \"False\"\n      name: \"False\"\n      ns: \"True\""} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in\n%s", want, out)
		}
	}
}
