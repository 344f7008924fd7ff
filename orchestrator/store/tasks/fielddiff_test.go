package tasks

import (
	"strings"
	"testing"
)

// FieldChanges names each difference as narrowly as it can: a field (a
// list entry by name, else by index), a whole object, a whole file; a
// comment or key order is no difference.
func TestFieldChanges(t *testing.T) {
	from := map[string]string{
		"a.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\"\n  y: \"2\"\n",
		"k.yaml":    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: k\npipeline:\n  mutators:\n  - image: f:v1\n  - image: g:v1\n",
		"gone.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n",
		"README.md": "# a\n",
		"same.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata: {p: q, r: s}\n",
	}
	to := map[string]string{
		"a.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # a comment\ndata:\n  y: \"2\"\n  x: \"3\"\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n",
		"k.yaml":    "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: k\npipeline:\n  mutators:\n  - image: f:v2\n  - image: g:v1\n",
		"README.md": "# b\n",
		"same.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  r: s\n  p: q\n",
	}
	var got []string
	for _, c := range FieldChanges(from, to, "published", "rebuilt") {
		got = append(got, c.String())
	}
	want := []string{
		"README.md: published and rebuilt differ (not YAML objects)",
		"a.yaml: ConfigMap/a data.x: published 1, rebuilt 3",
		"a.yaml: Secret/b: published <absent>, rebuilt present",
		"gone.yaml: published present, rebuilt <absent>",
		"k.yaml: Kptfile/k pipeline.mutators[0].image: published f:v1, rebuilt f:v2",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
