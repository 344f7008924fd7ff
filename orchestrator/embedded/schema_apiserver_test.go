package embedded

import (
	"context"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/config/crd"
	"github.com/pvkit/pvkit/config/crd/crdtest"
	"github.com/pvkit/pvkit/internal/fntest"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"
)

// embeddedVerdict is what pvctl's embedded cluster says of creating u:
// "" when it takes it.
func embeddedVerdict(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	sch, err := crdSchemas()
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.validate(context.Background(), u.GroupVersionKind(), u.GetName(), u, nil); err != nil {
		return err.Error()
	}
	return ""
}

// Issue 28 #1 and #6: the embedded cluster refuses and takes what the
// table of config/crd/crdtest says an API server refuses and takes, with
// the API server's message.
func TestEmbeddedSchemaCases(t *testing.T) {
	for _, c := range schemaCases(t) {
		got := embeddedVerdict(t, c.u)
		if c.Refused == "" && got != "" || !strings.Contains(got, c.Refused) {
			t.Errorf("%s: the embedded cluster says %q, want %q", c.Name, got, c.Refused)
		}
	}
}

// Issue 28 #6: both CRDs' schemas on a real kube-apiserver (envtest, the
// binaries in KUBEBUILDER_ASSETS: make envtest links the ones make
// e2e-porch builds), and the embedded cluster saying exactly what it says.
// Without the binaries it skips, unless PVKIT_REQUIRE_ENVTEST is set (make
// envtest sets it: there a skip is a failure).
func TestSchemasOnAnAPIServer(t *testing.T) {
	var crds []*apiextv1.CustomResourceDefinition
	for _, b := range [][]byte{crd.PackageVariants, crd.PackageVariantSets} {
		c := &apiextv1.CustomResourceDefinition{}
		if err := sigsyaml.UnmarshalStrict(b, c); err != nil {
			t.Fatal(err)
		}
		crds = append(crds, c)
	}
	cfg := fntest.APIServer(t, crds...)
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range schemaCases(t) {
		u := c.u
		u.SetNamespace("default")
		var got string
		if err := cl.Create(context.Background(), u.DeepCopy(), client.DryRunAll); err != nil {
			got = err.Error()
		}
		if c.Refused == "" && got != "" || !strings.Contains(got, c.Refused) {
			t.Errorf("%s: kube-apiserver says %q, want %q", c.Name, got, c.Refused)
		}
		if emb := embeddedVerdict(t, u); emb != got {
			t.Errorf("%s: the embedded cluster and kube-apiserver differ:\nembedded:  %s\napiserver: %s", c.Name, emb, got)
		}
	}
}

// schemaCase is a case of config/crd/crdtest with its object.
type schemaCase struct {
	crdtest.Case
	u *unstructured.Unstructured
}

func schemaCases(t *testing.T) []schemaCase {
	t.Helper()
	cases, err := crdtest.Cases()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]schemaCase, 0, len(cases))
	for _, c := range cases {
		u, err := c.Unstructured()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, schemaCase{Case: c, u: u})
	}
	return out
}
