package applyreplacements

import (
	"bytes"

	"github.com/pvkit/pvkit/internal/catalog/internal/reference"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"strings"
	"testing"
)

const items = `- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: kptfile.kpt.dev
    annotations:
      config.kubernetes.io/local-config: "true"
  data:
    name: edge01
    replicas: "3"
    image: nginx:1.25
    zone: us-east1-b
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: app # the app
    namespace: ns
    labels:
      tier: web
  spec:
    replicas: 1
    template:
      spec:
        containers:
        - name: app
          image: nginx:1.7.9
          env:
          - name: ZONE
            value: unset
        - name: side
          image: busybox
- apiVersion: v1
  kind: Service
  metadata:
    name: app
    namespace: ns
    annotations:
      owner: team-a
  spec:
    selector:
      app: app
`

// list is a ResourceList of items with a config of these replacements
// (none: no config at all).
func list(replacements string) string {
	s := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items
	if replacements != "" {
		s += "functionConfig:\n  apiVersion: fn.kpt.dev/v1alpha1\n  kind: ApplyReplacements\n  metadata:\n    name: r\n  replacements:\n" + indent(replacements, "  ")
	}
	return s
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// cases are the behaviours a replacement has; want* are checked on both
// behaviours unless a behaviour's own field says otherwise. Each case also
// runs against the released v0.1.1 (TestAgainstV011).
var cases = []struct {
	name, config string
	// in the output of both behaviours, or of one
	want, wantV01, wantV012 []string
	// out of the output of both
	notWant []string
	// failure message, of both or of one
	fail, failV01, failV012 string
	// a second run changes the output again (a prefix is added each time)
	notIdempotent bool
}{
	{name: "name into a field", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.name}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=app].env.[name=ZONE].value
`, want: []string{"value: edge01"}, notWant: []string{"value: unset"}},
	{name: "default field paths are metadata.name", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev}
  targets:
  - select: {kind: Service}
`, want: []string{"name: kptfile.kpt.dev\n    namespace: ns\n    annotations:\n      owner: team-a"}},
	{name: "a string into an int field", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.replicas}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.replicas]
`, wantV01: []string{`replicas: "3"`}, wantV012: []string{"replicas: 3"}},
	{name: "a missing target field is skipped, or an error", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.zone}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.spec.nodeSelector.zone]
`, notWant: []string{"nodeSelector"}, failV012: `unable to find field "spec.template.spec.nodeSelector.zone" in replacement target`},
	{name: "create makes the field", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.zone}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.spec.nodeSelector.zone]
    options: {create: true}
`, want: []string{"nodeSelector:\n          zone: us-east1-b"}},
	{name: "delimiter and index on source and target", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.image, options: {delimiter: ':', index: 1}}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=app].image
    options: {delimiter: ':', index: 1}
`, want: []string{"image: nginx:1.25"}, notWant: []string{"1.7.9"}},
	{name: "a negative target index prefixes", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.name}
  targets:
  - select: {kind: Deployment}
    fieldPaths:
    - spec.template.spec.containers.[name=side].image
    options: {delimiter: '/', index: -1}
`, want: []string{"image: edge01/busybox"}, notIdempotent: true},
	{name: "label selector and reject", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.name}
  targets:
  - select: {labelSelector: tier=web}
    fieldPaths: [metadata.labels.site]
    options: {create: true}
  - select: {namespace: ns}
    reject: [{kind: Deployment}, {annotationSelector: owner=team-b}]
    fieldPaths: [metadata.annotations.site]
    options: {create: true}
`, want: []string{"site: edge01\n  spec:\n    selector"}},
	{name: "wildcard paths", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.spec.containers.*.image]
`, wantV012: []string{"image: nginx:1.25\n          env", "name: side\n          image: nginx:1.25"},
		failV01: "wrong Node Kind for spec.template.spec.containers expected: MappingNode was SequenceNode: value: {- name: app\n  image: nginx:1.7.9\n  env:\n  - name: ZONE\n    value: unset\n- name: side\n  image: busybox}"},
	{name: "a path through a list", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.image}
  targets:
  - select: {kind: Deployment}
    fieldPaths: [spec.template.spec.containers.image]
`, failV01: "wrong Node Kind for spec.template.spec.containers expected: MappingNode was SequenceNode: value: {- name: app\n  image: nginx:1.7.9\n  env:\n  - name: ZONE\n    value: unset\n- name: side\n  image: busybox}",
		failV012: "unable to find field \"spec.template.spec.containers.image\" in replacement target: wrong node kind: expected MappingNode but got SequenceNode: node contents:\n- name: app\n  image: nginx:1.7.9\n  env:\n  - name: ZONE\n    value: unset\n- name: side\n  image: busybox\n"},
	{name: "a path through a scalar", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.name.x}
  targets:
  - select: {kind: Service}
`, failV01: "wrong Node Kind for data.name expected: MappingNode was ScalarNode: value: {edge01}",
		failV012: "error looking up replacement source: wrong node kind: expected MappingNode but got ScalarNode: node contents:\nedge01\n"},
	{name: "a source value", config: `- sourceValue: literal
  targets:
  - select: {kind: Service}
`, fail: "replacements must specify a source and at least one target"},
	{name: "nothing selected", config: `- source: {kind: ConfigMap, name: other, fieldPath: data.name}
  targets:
  - select: {kind: Service}
`, fail: "nothing selected by ConfigMap.[noVer].[noGrp]/other.[noNs]:data.name"},
	{name: "multiple matches", config: `- source: {name: app}
  targets:
  - select: {kind: Service}
`, fail: "multiple matches for selector [noKind].[noVer].[noGrp]/app.[noNs]"},
	{name: "a missing source field", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.missing}
  targets:
  - select: {kind: Service}
`, failV01: "fieldPath `data.missing` is missing for replacement source ConfigMap.[noVer].[noGrp]/kptfile.kpt.dev.[noNs]:data.missing",
		failV012: "fieldPath `data.missing` is missing for replacement source ConfigMap.[noVer].[noGrp]/kptfile.kpt.dev.[noNs]"},
	{name: "an index out of bounds", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data.image, options: {delimiter: ':', index: 2}}
  targets:
  - select: {kind: Service}
`, fail: "options.index 2 is out of bounds for value nginx:1.25"},
	{name: "a delimiter on a map", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev, fieldPath: data, options: {delimiter: ':'}}
  targets:
  - select: {kind: Service}
`, fail: "delimiter option can only be used with scalar nodes"},
	{name: "a target without select", config: `- source: {kind: ConfigMap, name: kptfile.kpt.dev}
  targets:
  - fieldPaths: [metadata.name]
`, fail: "target must specify resources to select"},
	{name: "no config", fail: "FunctionConfig is missing. Expect `ApplyReplacements`"},
}

// run is the behaviour on a ResourceList: its exit code and output.
func run(b *Behaviour, in string) (int, string, string) {
	var out, stderr bytes.Buffer
	code := b.Run(strings.NewReader(in), &out, &stderr)
	return code, out.String(), stderr.String()
}

func TestBehaviours(t *testing.T) {
	for _, c := range cases {
		for _, b := range []struct {
			name        string
			b           *Behaviour
			want        []string
			fail, fail2 string
		}{
			{"v0.1", V01, c.wantV01, c.failV01, ""},
			{"v0.1.2", V012, c.wantV012, c.failV012, ""},
		} {
			t.Run(c.name+"/"+b.name, func(t *testing.T) {
				in := list(c.config)
				code, out, stderr := run(b.b, in)
				fail := c.fail
				if b.fail != "" {
					fail = b.fail
				}
				if fail != "" {
					if msg := errorResult(t, out); code != 1 || msg != fail {
						t.Fatalf("want exit 1 and the error result %q; got %d and %q:\n%s\n%s", fail, code, msg, out, stderr)
					}
					// Nothing is changed.
					if !strings.Contains(out, "value: unset") || !strings.Contains(out, "replicas: 1") {
						t.Errorf("a failed run changed the items:\n%s", out)
					}
					return
				}
				if code != 0 {
					t.Fatalf("exit %d:\n%s\n%s", code, out, stderr)
				}
				objects, _, _ := strings.Cut(out, "functionConfig:")
				for _, w := range append(append([]string{}, c.want...), b.want...) {
					if !strings.Contains(objects, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				for _, w := range c.notWant {
					if strings.Contains(objects, w) {
						t.Errorf("output has %q:\n%s", w, out)
					}
				}
				// Idempotent: the output's items through again are the same.
				code2, out2, _ := run(b.b, out)
				if c.notIdempotent {
					return
				}
				if code2 != 0 || out2 != out {
					t.Errorf("a second run changed the output (exit %d):\n%s\nthen:\n%s", code2, out, out2)
				}
			})
		}
	}
}

// errorResult is the message of the output's one error result, or "".
func errorResult(t *testing.T, out string) string {
	t.Helper()
	rl, err := yaml.Parse(out)
	if err != nil {
		t.Fatalf("output is not YAML: %v\n%s", err, out)
	}
	results, err := rl.Pipe(yaml.Lookup("results"))
	if err != nil || results == nil {
		return ""
	}
	elems, err := results.Elements()
	if err != nil || len(elems) != 1 || yaml.GetValue(elems[0].Field("severity").Value) != "error" {
		t.Fatalf("want one error result:\n%s", out)
	}
	return yaml.GetValue(elems[0].Field("message").Value)
}

// TestAgainstV011 runs every case through the released apply-replacements
// v0.1.1 (built from the Go module proxy by make catalog-functions) and
// through V01: the same exit code and the same bytes out.
func TestAgainstV011(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := list(c.config)
			wantCode, want, wantErr := reference.Run(t, "apply-replacements-v0.1.1", in)
			code, got, gotErr := run(V01, in)
			if code != wantCode || got != want {
				t.Errorf("v0.1.1 exits %d with\n%s\npvkit's v0.1 exits %d with\n%s", wantCode, want, code, got)
			}
			if gotErr != wantErr {
				t.Errorf("stderr: v0.1.1 %q, pvkit %q", wantErr, gotErr)
			}
		})
	}
}
