package main

import (
	"context"
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	"net/http"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The controller's wiring (scheme, store indexes, both reconcilers and their
// watches) is built without a cluster: only Start talks to the API server.
func TestSetup(t *testing.T) {
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "http://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		MapperProvider: func(*rest.Config, *http.Client) (apimeta.RESTMapper, error) {
			m := apimeta.NewDefaultRESTMapper(nil)
			for gvk := range scheme.AllKnownTypes() {
				m.Add(gvk, apimeta.RESTScopeNamespace)
			}
			return m, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := setup(context.Background(), mgr); err != nil {
		t.Fatal(err)
	}
}
