package functionrunner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/nephio-project/porch/func/evaluator"
	"github.com/pvkit/pvkit/internal/fntest"
)

// Issue 30, the controller's side: Porch renders every draft the controller
// writes with its function runner, so pvkit's catalog builds must run there
// under the image names Nephio's packages use. Porch v1.5.3's runner serves
// bin/catalog/config.yaml (its exec runtime) and evaluates them by name.
func TestCatalogThroughPorchFunctionRunner(t *testing.T) {
	ready(t)
	if err := fntest.EnsureCatalog(); err != nil {
		t.Fatal(err)
	}
	config := os.Getenv(fntest.CatalogEnv)
	c, stop, err := serve(t.TempDir(), config, filepath.Dir(config))
	if stop != nil {
		defer stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: a}\n" +
		"  spec:\n    selector: {matchLabels: {app: a}}\n    template: {metadata: {labels: {app: a}}}\n" +
		"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {nephio.org/site-type: edge}\n"
	for image, want := range map[string]string{
		"gcr.io/kpt-fn/set-labels:v0.2.0":                      "selector: {matchLabels: {app: a, nephio.org/site-type: edge}}",
		"ghcr.io/kptdev/krm-functions-catalog/set-labels:v0.2": "selector: {matchLabels: {app: a, nephio.org/site-type: edge}}",
		"gcr.io/kpt-fn/set-labels:v0.1.5":                      "nephio.org/site-type: edge",
		"gcr.io/kpt-fn/set-annotations:v0.1.4":                 "annotations: {nephio.org/site-type: edge}",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := c.EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{ResourceList: []byte(in), Image: image})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", image, err)
		}
		if !strings.Contains(string(resp.ResourceList), want) {
			t.Fatalf("%s: the output lacks %q:\n%s", image, want, resp.ResourceList)
		}
	}
	// A function's failure comes back with its stderr, as Porch shows it.
	bad := strings.Replace(in, "data: {nephio.org/site-type: edge}", "data: {}", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = c.EvaluateFunction(ctx, &pb.EvaluateFunctionRequest{ResourceList: []byte(bad), Image: "gcr.io/kpt-fn/set-annotations:v0.1.4"})
	if err == nil || !strings.Contains(err.Error(), "input annotation list cannot be empty") {
		t.Fatalf("err = %v", err)
	}
}
