package krm

import (
	"bytes"
	"testing"
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
