package searchreplace

import (
	"bytes"
	"strings"
	"testing"
)

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		path, pattern string
		want          bool
	}{
		{"a.b.c", "a.b.c", true},
		{"a.b.c", "a.*.c", true},
		{"a.b.c", "a.*", false},
		{"a.b.c", "a.**", true},
		{"a", "a.**", true},
		{"a.b1.d[0].f.g.c", "a.**.c", true},
		{"a.b[1].c", "a.b[1].c", true},
		{"a.b[1].c", "a.b[*].c", true},
		{"a.b[1].c", "a.*[1].c", true},
		{"a.b[1].c", "a.b[2].c", false},
		{"a.b[1].c", "a.b.c", false},
		{"a.b[1].c", "a.*.c", true},
		{"a.b.c", "**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.**.x", false}, // memoised: no blow-up
	} {
		if got := globMatch(strings.Split(c.path, "."), strings.Split(c.pattern, ".")); got != c.want {
			t.Errorf("globMatch(%s, %s) = %v", c.path, c.pattern, got)
		}
	}
}

const items = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
	"- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n    annotations: {config.kubernetes.io/path: c.yaml, internal.config.kubernetes.io/path: c.yaml}\n" +
	"  data:\n    host: nginx.com\n    url: https://nginx.com/x\n  hosts:\n  - a\n  - b\n"

func run(t *testing.T, data string) (int, string, string) {
	t.Helper()
	in := items + "functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: f}, data: " + data + "}\n"
	var out, stderr bytes.Buffer
	code := Run(strings.NewReader(in), &out, &stderr)
	return code, out.String(), stderr.String()
}

func TestMutations(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{by-value-regex: '(.*)nginx.com(.*)', put-value: '${1}example.org${2}'}", "url: https://example.org/x"},
		{"{by-value-regex: '(.*)nginx.com(.*)', put-comment: 'kpt-set: ${1}${host}${2}'}", "url: https://nginx.com/x # kpt-set: https://${host}/x"},
		{"{by-path: data.replicas, put-value: '3'}", "replicas: 3\n"},
		{"{by-path: spec.a.b, put-value: x}", "spec:\n    a:\n      b: x"},
		{"{by-path: hosts, put-comment: 'kpt-set: ${hosts}'}", "hosts: # kpt-set: ${hosts}"},
		{"{by-path: 'data.*', by-value: nginx.com}", "message: Matched field value \"nginx.com\""},
		{"{by-value: nothing}", "message: no matches"},
		{"{by-value: nginx.com, by-file-path: 'other/*.yaml', put-value: x}", "message: no matches"},
	} {
		code, out, stderr := run(t, c.data)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("%s: exit %d (%s), want %q in:\n%s", c.data, code, stderr, c.want, out)
		}
	}
}

// Each error is the one result and the stderr line, exit 1, nothing
// changed.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{by-name: x}", `invalid matcher "by-name", must be one of ["by-value" "by-file-path" "by-value-regex" "by-path" "put-value" "put-comment"]`},
		{"{by-value: a, by-value-regex: b}", `only one of ["by-value", "by-value-regex"] can be provided`},
		{"{by-value-regex: '(', put-value: x}", "error parsing regexp: missing closing ): `(`"},
		{"{by-value-regex: 'nginx', put-value: '${1}'}", "unable to resolve capture groups"},
		{"{by-value: x, by-file-path: '[', put-value: y}", "syntax error in pattern"},
	} {
		code, out, stderr := run(t, c.data)
		if code != 1 || stderr != c.want+"\n" || !strings.Contains(out, "severity: error") || !strings.Contains(out, "host: nginx.com") {
			t.Errorf("%s: exit %d, stderr %q, want %q:\n%s", c.data, code, stderr, c.want, out)
		}
	}
}
