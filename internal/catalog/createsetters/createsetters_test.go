package createsetters

import (
	"bytes"
	"strings"
	"testing"
)

func run(t *testing.T, b Behaviour, items, data string) (int, string, string) {
	t.Helper()
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items +
		"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: setters}\n  data:\n" + data
	var out, stderr bytes.Buffer
	code := b.Run(strings.NewReader(in), &out, &stderr)
	return code, out.String(), stderr.String()
}

const deployment = `- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: webp
    annotations:
      config.kubernetes.io/path: app.yaml
  spec:
    template:
      spec:
        containers:
        - name: c
          image: nginx:1.2
`

// Each commented field is a result: the comment and value, the field's
// path (dots, [i] for an element) and the file.
func TestResults(t *testing.T) {
	code, out, stderr := run(t, Unstable, deployment, "    image: nginx\n    tag: '1.2'\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `results:
- message: 'Added line comment "kpt-set: ${image}:${tag}" for field with value "nginx:1.2"'
  field:
    path: spec.template.spec.containers[0].image
  file:
    path: app.yaml
`
	if !strings.Contains(out, want) || !strings.Contains(out, "image: nginx:1.2 # kpt-set: ${image}:${tag}") {
		t.Fatalf("want\n%s\nin\n%s", want, out)
	}
}

// The main branch replaces each part of a value once, longest setter
// first; v0.1.0 replaced one setter after another, so a later one matched
// inside the ${...} an earlier one wrote.
func TestOneAfterAnother(t *testing.T) {
	data := "    app: web\n    p: p\n"
	_, out, _ := run(t, Unstable, deployment, data)
	if !strings.Contains(out, "name: webp # kpt-set: ${app}${p}") {
		t.Fatalf("unstable:\n%s", out)
	}
	_, out, _ = run(t, V01, deployment, data)
	if !strings.Contains(out, "name: webp # kpt-set: ${a${p}${p}}${p}") {
		t.Fatalf("v0.1:\n%s", out)
	}
}

// Two setters of one value: the one whose name sorts first names the
// field, every time (the catalog's choice is Go's map order).
func TestEqualValuesAreDeterministic(t *testing.T) {
	for i := 0; i < 20; i++ {
		_, out, _ := run(t, Unstable, deployment, "    zz: nginx\n    aa: nginx\n    mm: nginx\n")
		if !strings.Contains(out, "image: nginx:1.2 # kpt-set: ${aa}:1.2") {
			t.Fatalf("run %d:\n%s", i, out)
		}
	}
}

// A multi-line value is left alone on the main branch and commented by
// v0.1.0.
func TestMultiLine(t *testing.T) {
	items := "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  data:\n    notes: |\n      runs web\n      twice\n    app: web\n"
	_, out, _ := run(t, Unstable, items, "    app: web\n")
	if strings.Contains(out, "notes: | #") || !strings.Contains(out, "app: web # kpt-set: ${app}") {
		t.Fatalf("unstable:\n%s", out)
	}
	_, out, _ = run(t, V01, items, "    app: web\n")
	if !strings.Contains(out, "notes: | # kpt-set: runs ${app}") {
		t.Fatalf("v0.1:\n%s", out)
	}
}

// Each error is its message, in the error result and on stderr, exit 1.
func TestErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"nothing matches", "    app: nowhere\n", "no matches for the input list of setters"},
		{"empty", "    {}\n", "config map cannot be empty"},
		{"not yaml", "    app: '['\n", "parsing error: data.app is not YAML: "},
		{"blank", "    app: ''\n", "parsing error: data.app is not YAML: EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := run(t, Unstable, deployment, tc.data)
			if code != 1 || !strings.HasPrefix(stderr, tc.want) || !strings.Contains(out, "message: 'failed to create setters: "+tc.want) {
				t.Fatalf("exit %d, stderr %q\n%s", code, stderr, out)
			}
		})
	}
}
