package gitstore

import (
	"strings"
	"testing"
)

// FuzzMetadata: any bytes as a repository's pvkit-metadata.json: a clear
// error or metadata, never a panic; what parses can be written back.
func FuzzMetadata(f *testing.F) {
	f.Add([]byte(`{"revisions":{"deploy.app.ws":{"owners":[{"apiVersion":"v","kind":"PackageVariant","name":"pv","uid":"u","controller":true}],"labels":{"a":"b"}}}}`))
	f.Add([]byte(`{"revisions":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMetadata("meta.json", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "meta.json: ") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if m.Revisions == nil {
			t.Fatal("parsed metadata has no revision map")
		}
		for name, r := range m.Revisions {
			_ = r.owners()
			_ = name
		}
	})
}
