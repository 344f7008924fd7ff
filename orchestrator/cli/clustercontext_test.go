package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"
)

// Issue 58 #1, pvctl's other way to reach a cluster: --cluster
// NAME=CONTEXT reads the health object from a real kube-apiserver (envtest:
// make envtest links the binaries make e2e-porch builds) through a context
// of the user's kubeconfig, in the check's namespace; the canary is done
// when it reports the revision. Without the binaries it skips, unless
// PVKIT_REQUIRE_ENVTEST is set.
func TestClusterContextOnAnAPIServer(t *testing.T) {
	apply := edgeAPIServer(t)

	w := rolloutWS(t)
	w.rolloutSpec(`    health:
      apiVersion: kustomize.toolkit.fluxcd.io/v1
      kind: Kustomization
      clusterExpr: downstream.repo
      namespace: flux-system
      nameExpr: downstream.package
      condition: has(object.status) && object.status.lastAppliedRevision.startsWith(revision.ref + "@")
`)
	// The kind is readable: pvctl's files give it (another cluster's).
	w.write("edge.yaml", edgeKustomization("fleet-00", "app/v1@sha1:0"))
	run := func() { w.t.Helper(); w.mustCmd(ExitOK, "run", "-f", w.in, "--cluster", "fleet-07=edge-07") }
	run()
	w.publishV2()
	run()
	if d := w.approveDrafts(); len(d) != 1 {
		t.Fatalf("the canary's draft: %v", d)
	}
	run()
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		`health: Unknown ObjectNotFound: no Kustomization "app" in namespace "flux-system" of cluster fleet-07`)
	apply(strings.Replace(edgeKustomization("fleet-07", "app/v2@sha1:0123"), "  annotations: {pvkit.dev/cluster: fleet-07}\n", "", 1))
	run()
	run()
	contains(t, w.mustCmd(ExitOK, "status", "packagevariant/app-fleet-07-app"),
		"health: True Healthy: cluster fleet-07: Kustomization flux-system/app reports fleet-07.app.packagevariant-2")
	contains(t, w.mustCmd(ExitOK, "rollout", "status", "app"), "wave canary       Complete")
}

// edgeAPIServer starts a kube-apiserver (envtest) that serves Flux's
// Kustomization kind and namespace flux-system, points $KUBECONFIG at a
// kubeconfig whose context edge-07 reaches it, and returns how to apply an
// object there.
func edgeAPIServer(t *testing.T) func(string) {
	t.Helper()
	crd := &apiextv1.CustomResourceDefinition{}
	if err := sigsyaml.Unmarshal([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: kustomizations.kustomize.toolkit.fluxcd.io}
spec:
  group: kustomize.toolkit.fluxcd.io
  names: {kind: Kustomization, listKind: KustomizationList, plural: kustomizations, singular: kustomization}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`), crd); err != nil {
		t.Fatal(err)
	}
	cfg := fntest.APIServer(t, crd)
	edge, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	apply := func(text string) {
		t.Helper()
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal([]byte(text), &u.Object); err != nil {
			t.Fatal(err)
		}
		cur := u.DeepCopy()
		if err := edge.Get(ctx, client.ObjectKeyFromObject(u), cur); err == nil {
			u.SetResourceVersion(cur.GetResourceVersion())
			err = edge.Update(ctx, u)
		} else {
			err = edge.Create(ctx, u)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["edge-07"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	return apply

}
