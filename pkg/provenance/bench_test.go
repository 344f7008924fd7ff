package provenance

import (
	"fmt"
	"testing"
)

// BenchmarkStamp is the record's cost for one draft of n resource files
// (what each write of a draft adds: the digests by meaning, the statement),
// and BenchmarkCheck what pvctl verify and require-provenance pay to check
// it.
func BenchmarkStamp(b *testing.B) {
	for _, n := range []int{10, 100} {
		files := sizedPackage(n)
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Stamp(files, inputs(), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{10, 100} {
		files, err := Stamp(sizedPackage(n), inputs(), nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := Check(files, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// sizedPackage is the test package with n Deployments more.
func sizedPackage(n int) map[string]string {
	files := pkg()
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("deploy-%03d.yaml", i)] = fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d\n  labels: {app: a, tier: web}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n        ports: [{containerPort: 80}]\n", i)
	}
	return files
}
