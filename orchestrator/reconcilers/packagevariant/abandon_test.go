package packagevariant

import (
	"strings"
	"testing"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/store"
)

// Rule undone-drafts: a variant moved to a second upstream has an upgrade
// draft; moved back to the upstream its published revision is at (a
// rollout's undo), the draft, holding only pvkit's write, is deleted with
// an Event, and nothing new is made or published (pvctl deletes only with --prune: there it is upgraded in place back, as before); a draft a person
// edited is kept (upgraded in place back, the edit with it).
func TestUndoneDraftIsAbandoned(t *testing.T) {
	for _, edited := range []bool{false, true} {
		e := newEnv(t, endpoints("us-east1-endpoints", "db"), team("web", "alice"))
		e.store.Publish(ns, "blueprints", "app", blueprint(t))
		e.variant(strings.Replace(appVariant, "upstream: {repo: blueprints, package: app}", "upstream: {repo: blueprints, package: app, revision: 1}", 1))
		e.mustReconcile("app-prod")
		if _, err := e.store.Approve(ns, e.downstream("app-prod")[0].Name); err != nil {
			t.Fatal(err)
		}
		next := blueprint(t)
		next["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
		e.store.Publish(ns, "blueprints", "app", next)
		e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Upstream.Revision = 2 })
		e.mustReconcile("app-prod")
		var draft store.Revision
		for _, r := range e.downstream("app-prod") {
			if r.Lifecycle == store.Draft {
				draft = r
			}
		}
		if draft.Name == "" {
			t.Fatalf("no upgrade draft: %s", e.lifecycles())
		}
		if edited {
			files := e.files(draft)
			files["persons.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: persons\n"
			e.store.SetFiles(ns, draft.Name, files)
		}
		e.events()
		e.edit("app-prod", func(v *pvapi.PackageVariant) { v.Spec.Upstream.Revision = 1 })
		e.mustReconcile("app-prod")
		e.mustReconcile("app-prod")
		got, evs := e.lifecycles(), strings.Join(e.events(), "\n")
		if !edited {
			if got != "deploy.app-prod.packagevariant-1 Published 1" || !strings.Contains(evs, "Normal DraftAbandoned deleted draft "+draft.Name+", made towards app app/v2, which the variant no longer asks for: deploy.app-prod.packagevariant-1 is at app/v1 already") {
				t.Fatalf("an undone draft of pvkit's alone: %s\n%s", got, evs)
			}
			continue
		}
		if !strings.Contains(got, draft.Name+" Draft") || strings.Contains(evs, "DraftAbandoned") || e.files(draft)["persons.yaml"] == "" {
			t.Fatalf("a draft a person edited is kept: %s\n%s", got, evs)
		}
	}
}
