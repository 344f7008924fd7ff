package pvsexpand

import (
	"strings"
	"testing"
)

// ReadGroup reads a group.yaml, and names what it cannot read: not YAML,
// another kind, a field of the wrong type (aliases are bounded as every
// input's: pkg/krm).
func TestReadGroup(t *testing.T) {
	g, msg := ReadGroup("apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata: {name: g}\nspec:\n  members:\n  - {name: upf, upstream: {repo: catalog, package: upf, revision: 2}, package: user-plane}\n")
	if msg != "" || len(g.Spec.Members) != 1 || g.Spec.Members[0].DownstreamPackage() != "user-plane" || g.Spec.Members[0].Upstream.Revision != 2 {
		t.Fatalf("%+v %s", g, msg)
	}
	for _, c := range []struct{ text, want string }{
		{"a: [unclosed\n", "did not find expected"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\n", "not a pvkit.dev/v1alpha1 PackageGroup (found v1 ConfigMap)"},
		{"apiVersion: pvkit.dev/v1alpha1\nkind: PackageGroup\nmetadata: {name: g}\nspec:\n  members: {}\n", "`spec.members` must be"},
	} {
		if _, msg := ReadGroup(c.text); !strings.Contains(msg, c.want) {
			t.Errorf("ReadGroup(%.40q): %q, want %q", c.text, msg, c.want)
		}
	}
}
