package upsertresource

import (
	"bytes"
	"strings"
	"testing"
)

// A List item that is not an object is the function's error, named as the
// catalog names it, exit 1; the items are written back unchanged.
func TestNotAnObject(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- {apiVersion: v1, kind: Service, metadata: {name: web}}\n" +
		"functionConfig: {apiVersion: v1, kind: List, metadata: {name: l}, items: [just-a-string]}\n"
	var out, stderr bytes.Buffer
	code := Run(strings.NewReader(in), &out, &stderr)
	if code != 1 || !strings.HasPrefix(stderr.String(), "failed to upsert resource: ") || !strings.Contains(out.String(), "name: web") {
		t.Fatalf("exit %d, stderr %q:\n%s", code, stderr.String(), out.String())
	}
}

// A function config object of the package is never replaced, and an
// object of another group is another resource.
func TestNeverAFunctionConfigNorAnotherGroup(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		"- {apiVersion: v1, kind: ConfigMap, metadata: {name: c, annotations: {config.kubernetes.io/function: 'x'}}, data: {a: old}}\n" +
		"- {apiVersion: example.com/v1, kind: ConfigMap, metadata: {name: c}, data: {a: other}}\n" +
		"functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: new}}\n"
	var out, stderr bytes.Buffer
	if code := Run(strings.NewReader(in), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	got := out.String()
	if !strings.Contains(got, "a: old") || !strings.Contains(got, "a: other") || strings.Count(got, "a: new") != 2 {
		// the config itself is echoed back as functionConfig, and added once
		t.Fatalf("want both objects left and the ConfigMap added:\n%s", got)
	}
}
