package krm

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// agree fails t when JSON and kyaml's MarshalJSON differ on n: in bytes,
// or in whether and how they refuse it.
func agree(t *testing.T, where string, n *yaml.RNode) {
	t.Helper()
	want, wantErr := n.MarshalJSON()
	got, gotErr := JSON(n)
	switch {
	case (wantErr == nil) != (gotErr == nil):
		t.Errorf("%s: kyaml's error %v, JSON's %v", where, wantErr, gotErr)
	case wantErr != nil && !sameError(wantErr.Error(), gotErr.Error()):
		t.Errorf("%s: kyaml says %q, JSON %q", where, wantErr, gotErr)
	case string(want) != string(got):
		t.Errorf("%s: kyaml\n%s\nJSON\n%s", where, want, got)
	}
}

// sameError compares two errors' texts less their line numbers: kyaml
// counts lines in the document it writes again, JSON in the node's own.
func sameError(a, b string) bool {
	strip := func(s string) string {
		var out []string
		for _, f := range strings.Fields(s) {
			if strings.TrimRight(f, ":0123456789") == "" || strings.HasPrefix(f, "line") {
				continue
			}
			out = append(out, f)
		}
		return strings.Join(out, " ")
	}
	return strip(a) == strip(b)
}

// Every object of the repository's YAML files (golden inputs and outputs,
// examples, config) converts to the same JSON as kyaml converts it.
func TestJSONAgreesWithKyaml(t *testing.T) {
	count := 0
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return nil // not KRM (a test's broken input)
		}
		for i, n := range nodes {
			agree(t, fmt.Sprintf("%s: object %d", path, i), n)
			count++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count < 1000 {
		t.Fatalf("only %d objects compared: the walk missed the repository's files", count)
	}
}

// The cases where the two could part: tags, numbers, nulls, binary,
// keys that are not strings, duplicate keys, values JSON cannot hold,
// merge keys and aliases (kyaml's path).
func TestJSONAgreesWithKyamlOnEdges(t *testing.T) {
	for _, doc := range jsonEdgeCases {
		n, err := yaml.Parse(doc)
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		agree(t, fmt.Sprintf("%q", doc), n)
	}
}

var jsonEdgeCases = []string{
	"a: 1\nb: 1.5\nc: true\nd: ~\ne: null\nf: \"1\"\ng: 0x10\nh: 1e3\ni: yes\nj: 2001-12-14\nk: !!str 12\n",
	"a: .inf\n",
	"a: {b: .nan}\n",
	"a: !!binary aGVsbG8=\n",
	"a: !!int x\n",
	"1: a\ntrue: b\n~: c\n",
	"a: {1: x}\n",
	"a: {b: 1, b: 2}\n",
	"a: 1\na: 2\nb: {c: 1, c: 2}\n",
	"a: &x {b: 1}\nc: *x\n",
	"base: &b {x: 1}\nd: {<<: *b, y: 2}\n",
	"a: [1, [2, {b: c}], {}]\n",
	"a: !custom x\nb: !!float 1\n",
	"? [a, b]\n: c\n",
	"a: 12345678901234567890\nb: -0\nc: 0o17\nd: +1\n",
	"'': empty\n\"x y\": 1\n",
}

func FuzzJSONAgreesWithKyaml(f *testing.F) {
	for _, doc := range jsonEdgeCases {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		n, err := yaml.Parse(doc)
		if err != nil || n.YNode().Kind != yaml.MappingNode || CheckAliases(n.YNode()) != nil {
			return
		}
		agree(t, fmt.Sprintf("%q", doc), n)
	})
}

// JSON's cost grows with the number of keys, not its square: kyaml's
// round trip is measured beside it.
func BenchmarkJSON(b *testing.B) {
	for _, keys := range []int{10000, 100000} {
		var sb strings.Builder
		sb.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n")
		for i := 0; i < keys; i++ {
			fmt.Fprintf(&sb, "  key%d: x\n", i)
		}
		n, err := yaml.Parse(sb.String())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dkeys", keys), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := JSON(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// An object as packages hold them: JSON beside kyaml's round trip.
	dep, err := yaml.Parse("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: web-prod\n  labels: {app: web, team: web}\n" +
		"spec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n" +
		"      - name: web\n        image: nginx:1.27\n        ports: [{containerPort: 80}]\n        resources: {limits: {cpu: 500m, memory: 128Mi}}\n")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("deployment", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := JSON(dep); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("deployment-kyaml", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := dep.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A document that takes kyaml's path (merge keys, an alias as a key) is
// held to MaxKeysWithMerge keys a mapping, so that yaml.v3's quadratic
// check stays small; aliases elsewhere do not take it (100,000 keys and an
// alias convert in linear time).
func TestJSONPathsAreBounded(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("base: &b {x: 1}\n")
	for i := 0; i < MaxKeysWithMerge+1; i++ {
		fmt.Fprintf(&sb, "k%d: x\n", i)
	}
	n, err := yaml.Parse(sb.String() + "m: {<<: *b}\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := JSON(n); err == nil || err.Error() != fmt.Sprintf("a mapping of %d keys in a document with YAML merge keys (<<) or aliases as keys: pvkit reads at most %d keys in one mapping of such a document", MaxKeysWithMerge+3, MaxKeysWithMerge) {
		t.Fatalf("merge keys and %d keys: %v", MaxKeysWithMerge+3, err)
	}
	n, err = yaml.Parse(sb.String() + "c: *b\n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := JSON(n)
	if err != nil || !strings.Contains(string(b), `"c":{"x":1}`) {
		t.Fatalf("an alias among many keys: %v %.60s", err, b)
	}
}
