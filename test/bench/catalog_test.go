package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	"github.com/pvkit/pvkit/pkg/render"
)

// BenchmarkCatalogFunctions (issue 30): one draft's worth of pvkit's catalog
// functions, Nephio's pipeline (set-annotations v0.1.4, apply-replacements
// v0.1.1 with examples/app's replacements, set-labels v0.2) on examples/app's
// resources, in process (pvctl's default) against the same builds as
// sandboxed executables (mapped under other names so the runtime executes
// them).
func BenchmarkCatalogFunctions(b *testing.B) {
	exes, err := fnruntime.LoadExecutables(os.Getenv(fntest.CatalogEnv), "")
	if err != nil {
		b.Fatal(err)
	}
	var items strings.Builder
	files := fntest.ReadTree(b, filepath.Join(fntest.RepoRoot(), "examples", "app"))
	for name, text := range files {
		if name == "Kptfile" || !strings.HasSuffix(name, ".yaml") || name == "replacements.yaml" {
			continue
		}
		for _, doc := range strings.Split(text, "\n---\n") {
			items.WriteString("- " + strings.ReplaceAll(strings.TrimSpace(doc), "\n", "\n  ") + "\n")
		}
	}
	lists := map[string]string{
		"gcr.io/kpt-fn/set-annotations:v0.1.4": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items.String() +
			"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {nephio.org/cluster-name: edge}\n",
		"gcr.io/kpt-fn/apply-replacements:v0.1.1": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items.String() +
			"functionConfig:\n  " + strings.ReplaceAll(strings.TrimSpace(files["replacements.yaml"]), "\n", "\n  ") + "\n",
		"gcr.io/kpt-fn/set-labels:v0.2": "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + items.String() +
			"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: function-input}\n  data: {nephio.org/site: edge}\n",
	}
	dir := b.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	asExecutables := map[string]string{}
	for image := range lists {
		asExecutables[image] = copyExecutable(b, dir, exes[image])
	}
	want := map[string]string{"gcr.io/kpt-fn/set-annotations:v0.1.4": "nephio.org/cluster-name: edge",
		"gcr.io/kpt-fn/apply-replacements:v0.1.1": "instance: app", "gcr.io/kpt-fn/set-labels:v0.2": "nephio.org/site: edge"}
	for _, mode := range []struct {
		name string
		rt   *fnruntime.Runtime
	}{{"inprocess", &fnruntime.Runtime{InProcess: true}}, {"worker", &fnruntime.Runtime{}}, {"executables", &fnruntime.Runtime{Executables: asExecutables}}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for _, image := range []string{"gcr.io/kpt-fn/set-annotations:v0.1.4", "gcr.io/kpt-fn/apply-replacements:v0.1.1", "gcr.io/kpt-fn/set-labels:v0.2"} {
					run, err := mode.rt.Runner(context.Background(), render.Function{Image: image})
					if err != nil {
						b.Fatal(err)
					}
					var out bytes.Buffer
					if err := run(strings.NewReader(lists[image]), &out); err != nil || !strings.Contains(out.String(), want[image]) {
						b.Fatalf("%s: %v\n%s", image, err, out.String())
					}
				}
			}
		})
	}
}
