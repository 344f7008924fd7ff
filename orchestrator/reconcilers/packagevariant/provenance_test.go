package packagevariant

import (
	"maps"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/provenance"
)

// Rule provenance-record: a fresh draft carries the variant's record; when
// Porch's render changes the package, the record is written once more for
// what the render left, and it holds; the next reconcile writes nothing.
func TestProvenanceFollowsPorchsRender(t *testing.T) {
	e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
	up := blueprint(t)
	up[provenance.FileName] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\ndata:\n  statement: '{}'\n" // the upstream's own, replaced
	e.store.Publish(ns, "blueprints", "app", up)
	renders := 0
	e.store.SetRenderer(func(files map[string]string) (map[string]string, store.RenderStatus) {
		renders++
		out := maps.Clone(files)
		out["rendered.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: made-by-the-pipeline\ndata:\n  a: b\n"
		return out, store.RenderStatus{}
	})
	e.variant(appVariant)
	e.mustReconcile("app-prod")
	drafts := e.downstream("app-prod")
	if len(drafts) != 1 {
		t.Fatalf("drafts = %v", drafts)
	}
	files := e.files(drafts[0])
	res, err := provenance.Check(files, nil)
	if err != nil {
		t.Fatalf("the draft's record: %v\n%s", err, files[provenance.FileName])
	}
	var names []string
	for _, s := range res.Record.Statement.Subject {
		names = append(names, s.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "rendered.yaml") {
		t.Errorf("the record does not name the render's file: %v", names)
	}
	if v := res.Record.Statement.Predicate.BuildDefinition.ExternalParameters.Variant; v.Name != "app-prod" || v.UID == "" {
		t.Errorf("the record's variant = %+v", v)
	}
	writes := e.store.Calls()["updateResources"]
	for i := 0; i < 3; i++ {
		e.mustReconcile("app-prod")
	}
	if w := e.store.Calls()["updateResources"]; w != writes {
		t.Errorf("%d more writes after the record held", w-writes)
	}
}
