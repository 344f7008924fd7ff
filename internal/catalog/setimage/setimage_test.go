package setimage

import (
	"bytes"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	for _, c := range []struct {
		image string
		set   Image
		want  string
	}{
		{"nginx", Image{NewTag: "1.27"}, "nginx:1.27"},
		{"nginx:1.20", Image{NewName: "mirror/nginx"}, "mirror/nginx:1.20"},
		{"nginx@sha256:ab", Image{NewName: "mirror/nginx"}, "mirror/nginx@sha256:ab"},
		{"nginx:1.20@sha256:ab", Image{NewName: "m/nginx"}, "m/nginx:1.20@sha256:ab"},
		{"nginx:1.20@sha256:ab", Image{NewTag: "1.27"}, "nginx:1.27"},
		{"nginx:1.20", Image{Digest: "sha256:cd"}, "nginx@sha256:cd"},
		{"nginx:1.20", Image{NewTag: "1.27", Digest: "sha256:cd"}, "nginx@sha256:cd"},
		{"localhost:5000/nginx:1.20", Image{NewTag: "1.27"}, "localhost:5000/nginx:1.27"},
		{"localhost:5000/nginx", Image{NewTag: "1.27"}, "localhost:5000/nginx:1.27"},
	} {
		if got := c.set.apply(c.image); got != c.want {
			t.Errorf("%+v on %s = %s, want %s", c.set, c.image, got, c.want)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		image, name string
		want        bool
	}{
		{"nginx", "nginx", true},
		{"nginx:1.20", "nginx", true},
		{"nginx@sha256:ab", "nginx", true},
		{"nginx:1.20@sha256:ab", "nginx", true},
		{"nginx-exporter:1", "nginx", false},
		{"docker.io/nginx:1", "nginx", false},
		{"nginx:1.20", "(", false}, // not a regular expression: no match, no panic
	} {
		if got := matches(c.image, c.name); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.image, c.name, got)
		}
	}
}

// A config error is two error results and the catalog's stderr, exit 1;
// nothing is changed.
func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{newTag: v1}", "must specify `name`"},
		{"{name: nginx}", "must specify one of `newName`, `newTag`, or `digest`"},
		{"{name: nginx, tag: v1, zone: a}", "ConfigMap has wrong field name tag"},
	} {
		in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
			"- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: nginx}]}}\n" +
			"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: " + c.data + "}\n"
		var out, stderr bytes.Buffer
		code := Run(strings.NewReader(in), &out, &stderr)
		if code != 1 || stderr.String() != "failed to evaluate function: function is terminated: "+c.want ||
			!strings.Contains(out.String(), "image: nginx}") || strings.Count(out.String(), "severity: error") != 2 {
			t.Errorf("%s: exit %d, stderr %q:\n%s", c.data, code, stderr.String(), out.String())
		}
	}
}

// An image set is written plain whatever quoting the old one had, as the
// catalog's set-image v0.1.x writes it; a container left alone keeps its
// quoting, and a comment on the field stays.
func TestSetImageWritesPlain(t *testing.T) {
	in := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: d
  spec:
    template:
      spec:
        containers:
        - name: a
          image: "nginx" # the web
        - name: b
          image: 'redis'
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
  spec:
    containers:
    - name: c
      image: 'nginx:1.20'
functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {name: nginx, newTag: "1.27"}}
`
	var out, stderr bytes.Buffer
	if code := Run(strings.NewReader(in), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"image: nginx:1.27 # the web\n", "image: 'redis'\n", "      image: nginx:1.27\n", "updated a total of 2 image(s)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
