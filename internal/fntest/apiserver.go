package fntest

import (
	"os"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// APIServer starts a real kube-apiserver (envtest, the binaries in
// KUBEBUILDER_ASSETS: make envtest links the ones make e2e-porch builds)
// serving crds, stopped when the test ends. Without the binaries the test
// skips, unless PVKIT_REQUIRE_ENVTEST is set (make envtest sets it: there a
// skip is a failure).
func APIServer(t *testing.T, crds ...*apiextv1.CustomResourceDefinition) *rest.Config {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("PVKIT_REQUIRE_ENVTEST") != "" {
			t.Fatal("KUBEBUILDER_ASSETS is not set (make envtest sets it)")
		}
		t.Skip("KUBEBUILDER_ASSETS is not set: make envtest runs this test on a real kube-apiserver")
	}
	env := &envtest.Environment{CRDs: crds, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	return cfg
}
