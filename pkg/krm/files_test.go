package krm

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestFilesRoundTripKeepsOriginalBytes(t *testing.T) {
	files := map[string]string{
		"Kptfile":      "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app   # odd spacing\n",
		"a/cms.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n",
		"README.md":    "# not a resource\n",
		"wide.yaml":    "apiVersion: v1\nkind: List\nitems:\n    - a\n    - b\n",
		"nested/x.yml": "kind: X\napiVersion: v1\nmetadata:\n  name: x\n",
	}
	items, err := FilesToItems(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 5 {
		t.Fatalf("got %d items, want 5", len(items))
	}
	if p, i := Path(items[2]), Index(items[2]); p != "a/cms.yaml" || i != 1 {
		t.Fatalf("third item is %s[%d], want a/cms.yaml[1]", p, i)
	}
	out, err := ItemsToFiles(items, files)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(files, out); diff != "" {
		t.Fatalf("unchanged items must give back the original bytes (-want +got):\n%s", diff)
	}
}

func TestItemsToFilesRewritesOnlyChangedFiles(t *testing.T) {
	files := map[string]string{
		"one.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: \"1\"\n",
		"two.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
	}
	items, err := FilesToItems(files)
	if err != nil {
		t.Fatal(err)
	}
	SetField(Field(items[0].YNode(), "data"), "b", StringNode("2"))
	out, err := ItemsToFiles(items, files)
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: one\ndata:\n  a: \"1\"\n  b: \"2\"\n"
	if out["one.yaml"] != want {
		t.Errorf("one.yaml =\n%s\nwant\n%s", out["one.yaml"], want)
	}
	if out["two.yaml"] != files["two.yaml"] {
		t.Errorf("two.yaml was rewritten:\n%s", out["two.yaml"])
	}
}

func TestItemsToFilesDropsEmptiedFiles(t *testing.T) {
	files := map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", "b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"}
	items, _ := FilesToItems(files)
	out, err := ItemsToFiles(items[:1], files)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out["b.yaml"]; ok || len(out) != 1 {
		t.Fatalf("files = %v, want only a.yaml", out)
	}
}

func TestFilesToItemsErrorsNameTheFile(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"package-context.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [bad\n", `failed to parse "package-context.yaml": MalformedYAMLError: yaml: line 3: did not find expected ',' or ']'`},
		{"list.yaml", "- a\n- b\n", `failed to parse "list.yaml": wrong node kind: expected MappingNode but got SequenceNode`},
	}
	for _, tt := range tests {
		_, err := FilesToItems(map[string]string{tt.name: tt.content, "ok.yaml": "kind: A\n"})
		if err == nil || err.Error() != tt.want {
			t.Errorf("FilesToItems(%s) error = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestItemsToFilesNeedsPaths(t *testing.T) {
	_, err := ItemsToFiles([]*yaml.RNode{yaml.MustParse("kind: ConfigMap\nmetadata:\n  name: x\n")}, nil)
	want := `ConfigMap "x" has no "internal.config.kubernetes.io/path" annotation, so it belongs to no file`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
}

func TestSemanticEqualFiles(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"a: 1\nb: 2\n", "b: 2\na: 1\n", true},
		{"a: 1 # c\n", "a: 1\n", true},
		{"a: [1, 2]\n", "a:\n- 1\n- 2\n", true},
		{"a: [1, 2]\n", "a: [2, 1]\n", false},
		{"a: 1\n", "a: \"1\"\n", false},
		{"a: null\nb: 1\n", "c: 5\nb: 1\n", false},
		{"a: 1\n", "a: 1\nb: 2\n", false},
		{"a: 1\n---\nb: 2\n", "a: 1\n", false},
		{"a: [\n", "a: [\n", true},
		{"a: [\n", "a: 1\n", false},
	}
	for _, tt := range tests {
		if got := SemanticEqualFiles(tt.a, tt.b); got != tt.want {
			t.Errorf("SemanticEqualFiles(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestParseResourceListErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{" \n", "the input is empty: a KRM function reads a ResourceList on stdin (run it with kpt fn eval or kpt fn render)"},
		{"kind: List\n", `the input must be a ResourceList, found kind "List"`},
		{"- a\n", "the input must be a ResourceList, found a list"},
		{"kind: ResourceList\nitems: {}\n", "`items` of the input ResourceList must be a list, found a map"},
		{"kind: ResourceList\nitems: [a]\n", "`items[0]` of the input ResourceList must be an object, found a scalar"},
		{"kind: ResourceList\nfunctionConfig: [a]\n", "`functionConfig` of the input ResourceList must be an object, found a list"},
		{"kind: ResourceList\nitems: [\n", "failed to parse the input ResourceList: yaml: line 2: did not find expected node content"},
	}
	for _, tt := range tests {
		_, err := ParseResourceList([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParseResourceList(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestResourceListRoundTrip(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a # keep\n" +
		"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: function-input\n"
	rl, err := ParseResourceList([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rl.Results = append(rl.Results, Errorf(rl.Items[0], "data", "`data` must be set").Result())
	out, err := rl.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := in + "results:\n- message: '`data` must be set'\n  severity: error\n  resourceRef:\n    apiVersion: v1\n    kind: ConfigMap\n    name: a\n  field:\n    path: data\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(ResultsError(rl.Results).Error(), `error: ConfigMap "a": `+"`data` must be set") {
		t.Fatalf("ResultsError = %v", ResultsError(rl.Results))
	}
}
