package packagevariant

import (
	"context"
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
)

// With the memo warm, a change of any input still reaches the draft.
func TestMemoSeesEveryInput(t *testing.T) {
	cm := endpoints("us-east1-endpoints", "db-1:5432")
	e := newEnv(t, cm, team("web", "alice"))
	e.store.Publish(ns, "blueprints", "app", blueprint(t))
	e.variant(appVariant)
	warm := func() {
		for i := 0; i < 3; i++ {
			e.mustReconcile("app-prod")
		}
		if _, ok := e.r.mem.Memo(e.get("app-prod").UID); !ok {
			t.Fatal("the memo is not warm")
		}
		calls := e.store.Calls()
		e.mustReconcile("app-prod")
		if after := e.store.Calls(); after["getResources"] != calls["getResources"] {
			t.Fatal("a warm steady reconcile read the package")
		}
	}
	draft := func() map[string]string { return e.files(e.downstream("app-prod")[0]) }

	warm()
	e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.PackageContext.Data["tier"] = "gold" })
	e.mustReconcile("app-prod")
	contains(t, draft(), "package-context.yaml", "tier: gold")

	warm()
	files := draft()
	files["package-context.yaml"] = strings.Replace(files["package-context.yaml"], "env: prod", "env: changed-by-hand", 1)
	e.store.SetFiles(ns, e.downstream("app-prod")[0].Name, files)
	e.mustReconcile("app-prod")
	contains(t, draft(), "package-context.yaml", "env: prod")

	warm()
	cm.Data["db"] = "db-2:5432"
	if err := e.client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("app-prod")
	contains(t, draft(), "endpoints.yaml", "db: db-2:5432")
}
