package tasks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// everyField is a Kptfile carrying every field of kpt's current Kptfile
// and Function types (kptdev/kpt api/kptfile/v1, with the conditional
// steps of kpt#4388 and configRef of kpt's book), written in its shape.
const everyField = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
  annotations:
    config.kubernetes.io/local-config: "true"
upstream:
  type: git
  git:
    repo: https://git.example.com/catalog.git
    directory: /app
    ref: app/v1
  updateStrategy: resource-merge
upstreamLock:
  type: git
  git:
    repo: https://git.example.com/catalog.git
    directory: /app
    ref: app/v1
    commit: 0123456789abcdef0123456789abcdef01234567
info:
  site: https://example.com/app
  emails:
  - team@example.com
  license: Apache-2.0
  licenseFile: LICENSE
  description: every field
  keywords:
  - web
  man: docs/app.md
  readinessGates:
  - conditionType: example.com/ready
pipeline:
  mutators:
  - image: gcr.io/kpt-fn/set-labels:v0.2.0
    name: labels
    tag: ~0.2
    configMap:
      tier: web
    selectors:
    - apiVersion: apps/v1
      kind: Deployment
      name: web
      namespace: app
      labels:
        app: web
      annotations:
        team: a
    exclude:
    - kind: ConfigMap
    when: resources.exists(r, r.kind == 'Deployment')
  - exec: ./fn
    name: by-ref
    configRef:
      apiVersion: v1
      kind: ConfigMap
      name: fn-config
      namespace: app
  validators:
  - image: gcr.io/kpt-fn/kubeval:v0.3
    name: schema
    configPath: kubeval.yaml
inventory:
  namespace: app
  name: inventory
  inventoryID: 0123
  labels:
    owner: team
  annotations:
    note: kept
status:
  conditions:
  - type: example.com/ready
    status: "True"
    reason: Done
    message: ready
`

// Issue 46 #2: clone, pipeline-prepend and upgrade keep every field kpt's
// current types carry (a Kptfile Porch v1.5.3's types cannot hold is
// edited as nodes); the clone and the upgrade rewrite upstream and
// upstreamLock only, and the prepend adds its own function in front.
func TestEveryKptfileFieldRoundTrips(t *testing.T) {
	want := kptfileMap(t, everyField)
	lock := &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v1"}
	cloned, err := Clone(map[string]string{"Kptfile": everyField}, lock, "app", false)
	if err != nil {
		t.Fatal(err)
	}
	check := func(step, kf string, prepended bool) {
		t.Helper()
		got := kptfileMap(t, kf)
		for _, k := range []string{"info", "inventory", "status", "apiVersion", "kind"} {
			if d := cmp.Diff(want[k], got[k]); d != "" {
				t.Errorf("%s: %s (-kpt's +after):\n%s", step, k, d)
			}
		}
		wp, gp := want["pipeline"].(map[string]any), got["pipeline"].(map[string]any)
		gm := gp["mutators"].([]any)
		if prepended {
			gm = gm[1:]
		}
		if d := cmp.Diff(wp["mutators"], gm); d != "" {
			t.Errorf("%s: pipeline.mutators (-kpt's +after):\n%s", step, d)
		}
		if d := cmp.Diff(wp["validators"], gp["validators"]); d != "" {
			t.Errorf("%s: pipeline.validators (-kpt's +after):\n%s", step, d)
		}
	}
	check("clone", cloned["Kptfile"], false)

	items, err := krm.FilesToItems(cloned)
	if err != nil {
		t.Fatal(err)
	}
	cfg := yaml.MustParse("apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: app-dev\nspec:\n  pipeline:\n    mutators:\n" +
		"    - image: gcr.io/kpt-fn/set-namespace:v0.4.1\n      name: ns\n      configMap:\n        namespace: dev\n")
	if _, problems := pipelineprepend.Run(items, cfg); len(problems) > 0 {
		t.Fatalf("pipeline-prepend: %v", problems)
	}
	prepended, err := krm.ItemsToFiles(items, cloned)
	if err != nil {
		t.Fatal(err)
	}
	check("pipeline-prepend", prepended["Kptfile"], true)

	v2 := map[string]string{"Kptfile": everyField, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn-config\n  namespace: app\n"}
	upgraded, err := Upgrade(map[string]string{"Kptfile": everyField}, v2, prepended, &store.Lock{Repository: "blueprints", Package: "app", Ref: "app/v2"})
	if err != nil {
		t.Fatal(err)
	}
	check("upgrade", upgraded["Kptfile"], true)
}

func kptfileMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := sigsyaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
