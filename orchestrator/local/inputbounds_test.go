package local

import (
	"fmt"
	"strings"
	"testing"
)

// unknownFieldsVariant is a PackageVariant with n fields its spec does
// not know.
func unknownFieldsVariant(n int) []byte {
	var sb strings.Builder
	sb.WriteString("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-prod\nspec:\n" +
		"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: deploy, package: app}\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "  unknownfield%d: x\n", i)
	}
	return []byte(sb.String())
}

// An object over the size an API server stores is refused for its size,
// before its fields are checked one by one: 100,000 unknown fields are
// one line naming the bound.
func TestObjectSizeIsCheckedFirst(t *testing.T) {
	_, err := readInput([]string{"-"}, "default", unknownFieldsVariant(100000))
	if err == nil {
		t.Fatal("a 2 MB PackageVariant was taken")
	}
	msg := err.Error()
	var size int
	if _, err := fmt.Sscanf(msg, "(stdin): PackageVariant \"app-prod\": the object is %d bytes as JSON", &size); err != nil || size <= MaxObjectSize {
		t.Fatalf("got %q", msg)
	}
	if want := fmt.Sprintf(" bytes as JSON, at most %d, what an API server stores (etcd's default request bound)", MaxObjectSize); !strings.HasSuffix(msg, want) || strings.Contains(msg, "unknownfield") {
		t.Fatalf("got %q", msg)
	}
}

// The problems of one object are said in one line that names the first
// MaxProblemsSaid and counts the rest.
func TestProblemsSaidAreBounded(t *testing.T) {
	_, err := readInput([]string{"-"}, "default", unknownFieldsVariant(MaxProblemsSaid+10))
	if err == nil {
		t.Fatal("unknown fields were taken")
	}
	msg := err.Error()
	if got := strings.Count(msg, "is not a field of PackageVariant"); got != MaxProblemsSaid {
		t.Errorf("%d problems named, want %d: %s", got, MaxProblemsSaid, msg)
	}
	if !strings.HasPrefix(msg, "(stdin): PackageVariant \"app-prod\": `spec.unknownfield0` is not a field of PackageVariant; refused, as kubectl's strict field validation refuses it; ") ||
		!strings.HasSuffix(msg, "; and 10 more") {
		t.Errorf("got %q", msg)
	}
}

// Refusing unknown fields costs time linear in their number (kyaml's JSON
// round trip was quadratic: 60,000 fields took 23 s): ns/field stays flat
// from 10,000 to 100,000. The 100,000 case is refused for its size first.
func BenchmarkRefuseUnknownFields(b *testing.B) {
	for _, n := range []int{10000, 60000, 100000} {
		in := unknownFieldsVariant(n)
		b.Run(fmt.Sprintf("%dfields", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := readInput([]string{"-"}, "default", in); err == nil {
					b.Fatal("taken")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/field")
		})
	}
}
