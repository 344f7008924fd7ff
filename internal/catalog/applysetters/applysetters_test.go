package applysetters

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/catalog/internal/reference"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// list is a ResourceList of the items with a ConfigMap of the setters.
func list(items, data string) string {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
	if data != "" {
		in += "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: setters}\n  data:\n" + data
	}
	return in
}

const deployment = `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web # kpt-set: ${app}
    annotations:
      config.kubernetes.io/path: app.yaml
  spec:
    replicas: 4 # kpt-set: ${replicas}
    template:
      spec:
        containers:
        - name: web
          image: "registry.example.com/web:1.2" # kpt-set: ${registry}/${app}:${tag}
          args: [--a, --b] # kpt-set: ${args}
        tolerations: # kpt-set: ${tolerations}
        - key: a
        hostname: "" # kpt-set: ${host}
- apiVersion: example.com/v1
  kind: Zoning
  metadata:
    name: zoning
    annotations:
      config.kubernetes.io/path: zoning.yaml
  zones: # kpt-set: ${zones}
  - eu-1a
  flags: [] # kpt-set: ${flags}
  quoted: 'x' # kpt-set: ${quoted}
  enabled: "true" # kpt-set: ${enabled}
  count: 3 # kpt-set: ${count}
  domain: app.dev.example.com # kpt-set: app.${stage}.${domain}.${tld}
  other: keep # kpt-set ${app}
`

var cases = []struct{ name, items, data string }{
	{"scalars", deployment, "    app: shop\n    tag: '2.0'\n    registry: gcr.io/x\n    replicas: '3'\n"},
	{"arrays", deployment, "    args: '[--c]'\n    tolerations: |\n      - key: b\n      - key: c\n    zones: '[eu-1b, eu-1c]'\n    flags: '- on'\n"},
	{"empty values", deployment, "    app: ''\n    args: ''\n    zones: ''\n    host: ''\n"},
	{"types", deployment, "    quoted: '7'\n    enabled: 'false'\n    count: 'four'\n"},
	{"read back", deployment, "    stage: prod\n"},
	{"no matches", deployment, "    nothing: here\n"},
	{"no config", deployment, ""},
	{"missing setter", deployment, "    registry: gcr.io/x\n    app: ''\n"},
	{"array pattern", "- {apiVersion: v1, kind: X, metadata: {name: x}, list: [a] # kpt-set: ${a}-${b}\n  }\n", "    a: '[x]'\n"},
	{"not an array", deployment, "    zones: just-a-string\n"},
	{"not yaml", deployment, "    zones: '[a'\n"},
}

// run runs the function on in: its exit code, output and stderr.
func run(in string) (int, string, string) {
	var out, stderr bytes.Buffer
	code := Run(strings.NewReader(in), &out, &stderr)
	return code, out.String(), stderr.String()
}

// outcome is what the two builds must agree on: the items as written,
// and the results' messages, fields and files (v0.2.0 writes its results
// in the kyaml framework's old shape, a mapping with items).
func outcome(t *testing.T, out string) (string, []string) {
	t.Helper()
	rl, err := yaml.Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	items, err := rl.Pipe(yaml.Lookup("items"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := items.String()
	if err != nil {
		t.Fatal(err)
	}
	results := rl.Field("results")
	var list []*yaml.Node
	if results != nil {
		list = results.Value.YNode().Content
		if r := results.Value.Field("items"); r != nil {
			list = r.Value.YNode().Content
		}
	}
	var got []string
	for _, r := range list {
		n := yaml.NewRNode(r)
		get := func(path ...string) string {
			v, _ := n.Pipe(yaml.Lookup(path...))
			if v == nil {
				return ""
			}
			return v.YNode().Value
		}
		got = append(got, strings.Join([]string{get("message"), get("severity"), get("field", "path"), get("file", "path")}, " | "))
	}
	return text, got
}

// TestAgainstV020 runs every case through the released apply-setters
// v0.2.0 (built from the Go module proxy by make catalog-functions) and
// through pvkit's: the same exit code, the same items byte for byte, the
// same results, the same message.
func TestAgainstV020(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := list(c.items, c.data)
			wantCode, want, wantErr := reference.Run(t, "apply-setters-v0.2.0", in)
			code, got, gotErr := run(in)
			wantItems, wantResults := outcome(t, want)
			gotItems, gotResults := outcome(t, got)
			if code != wantCode || gotItems != wantItems {
				t.Errorf("v0.2.0 exits %d with\n%s\npvkit's exits %d with\n%s", wantCode, wantItems, code, gotItems)
			}
			if diff := cmp.Diff(wantResults, gotResults); diff != "" {
				t.Errorf("results (-v0.2.0 +pvkit):\n%s", diff)
			}
			// v0.2.0 prints its error twice (kyaml's command, then its main)
			if wantErr != gotErr && wantErr != strings.TrimSuffix(gotErr, "\n")+gotErr {
				t.Errorf("stderr: v0.2.0 %q, pvkit %q", wantErr, gotErr)
			}
		})
	}
}

// A setter whose value names another setter: the names are applied in
// their order, every time (v0.2.0's order is Go's map order: the same input
// gave "v1" or an error from run to run).
func TestSetterOrderIsTheNames(t *testing.T) {
	for i := 0; i < 20; i++ {
		code, out, stderr := run(list(deployment, "    app: ${tag}\n    tag: v1\n    registry: r\n"))
		if code != 0 || !strings.Contains(out, "name: v1 # kpt-set: ${app}") || !strings.Contains(out, `image: "r/v1:v1"`) {
			t.Fatalf("run %d: exit %d %s\n%s", i, code, stderr, out)
		}
	}
}
