package krm

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// FuzzResourceList: any bytes as a function's stdin. Parsing must never
// panic; a ResourceList that parses encodes to one that parses to the same
// encoding (no undefined alias, no lost item). Seeds: a minimal list, the
// alias bomb, an anchor outside its item.
func FuzzResourceList(f *testing.F) {
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + aliasBomb(7)[:40]))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {data: &d {a: b}}\nitems:\n- {kind: ConfigMap, data: *d}\n"))
	f.Add([]byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- &x {kind: A}\n- *x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rl, err := ParseResourceList(b)
		if err != nil {
			return
		}
		out, err := rl.Bytes()
		if err != nil {
			return
		}
		rl2, err := ParseResourceList(out)
		if err != nil {
			t.Fatalf("the encoding of a parsed ResourceList does not parse: %v\n%s", err, out)
		}
		out2, err := rl2.Bytes()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s\n----\n%s", out, out2)
		}
	})
}

// scalarBomb is an anchor on one scalar of size bytes, aliased width times
// in a list, that list aliased width times: few nodes, many bytes.
func scalarBomb(size, width int) string {
	row := strings.TrimSuffix(strings.Repeat("*a, ", width), ", ")
	rows := strings.TrimSuffix(strings.Repeat("*b, ", width), ", ")
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a: &a " + strings.Repeat("x", size) +
		"\n  b: &b [" + row + "]\n  c: [" + rows + "]\n"
}

// FuzzAliasBound: a document CheckAliases lets through converts to JSON
// (what every decoder of pvkit does with it) within a fixed multiple of
// its written size: the bound counts bytes, so an anchor on a large scalar
// cannot multiply it (issue 18 #5: 10.7 KB of YAML became 467 MB). JSON
// may escape a byte as six (\u003c), and flow syntax writes a node in two
// bytes where the bound counts nodeBytes+1.
func FuzzAliasBound(f *testing.F) {
	f.Add([]byte(scalarBomb(2000, 30)))
	f.Add([]byte(aliasBomb(3)))
	f.Add([]byte("a: &a {x: [1, 2, <3>]}\nb: [*a, *a, *a]\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := yaml.Parse(string(b))
		if err != nil || CheckAliases(n.YNode()) != nil {
			return
		}
		js, err := n.MarshalJSON()
		if err != nil {
			return
		}
		if bound := 6 * (aliasSlack + aliasRatio*(nodeBytes+1)*len(b)); len(js) > bound {
			t.Fatalf("%d bytes of YAML passed the alias bound and became %d bytes of JSON (bound %d)", len(b), len(js), bound)
		}
	})
}
