package render

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/pkg/krm"
)

// Issue 46 #2: kpt's conditional steps, in the shape of kpt's
// fn-render/condition e2e cases: a step whose `when` is false over the
// resources it would run on is skipped, recorded as skipped with its
// condition; a true one runs; each says it honoured a field Porch v1.5.3
// refuses. A skipped mutator leaves the resources as they were.
func TestRenderWhen(t *testing.T) {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  replicas: 2\n"
	for _, tt := range []struct {
		name, when string
		ran        bool
	}{
		{"condition met", "resources.exists(r, r.kind == 'ConfigMap' && r.metadata.name == 'tier-config')", true},
		{"condition not met", "resources.exists(r, r.kind == 'ConfigMap' && r.metadata.name == 'unmatched')", false},
		{"a count", "resources.filter(r, r.kind == 'Deployment').size() > 0", true},
		{"namespace always present", "resources.all(r, r.metadata.namespace == '')", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"Kptfile":     kptfile("app", fmt.Sprintf("pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n    configMap:\n      tier: prod\n    when: %q\n", tt.when)),
				"deploy.yaml": deploy,
				"cm.yaml":     fmt.Sprintf(cm, "tier-config"),
			}
			for i := 0; i < 2; i++ { // twice: the same answer
				out, st, err := Render(context.Background(), files, Options{Runtime: goRuntime{"gcr.io/kpt-fn/set-labels:v0.1": setLabel}})
				if err != nil {
					t.Fatal(err)
				}
				if len(st.Runs) != 1 || st.Runs[0].When != tt.when || st.Runs[0].Skipped == tt.ran || st.Runs[0].Image != "gcr.io/kpt-fn/set-labels:v0.1" {
					t.Fatalf("runs = %+v", st.Runs)
				}
				msgs := fmt.Sprint(st.Runs[0].Results)
				want := "`pipeline.mutators[0].when` is true: the step ran (honoured as kpt's main branch does; kpt v1.0.0-beta.56 and Porch v1.5.3 refuse the field)"
				if !tt.ran {
					want = "skipped: `pipeline.mutators[0].when` is false (honoured as kpt's main branch does; kpt v1.0.0-beta.56 and Porch v1.5.3 refuse the field)"
				}
				if !strings.Contains(msgs, want) {
					t.Fatalf("results %s\nwant %s", msgs, want)
				}
				if labelled := strings.Contains(out["deploy.yaml"], "tier: prod"); labelled != tt.ran {
					t.Fatalf("ran %v, deploy.yaml:\n%s", tt.ran, out["deploy.yaml"])
				}
				if !tt.ran && !cmp.Equal(out, files) {
					t.Fatalf("a skipped step changed the package:\n%s", cmp.Diff(files, out))
				}
				files = out
			}
		})
	}
}

// `when` sees only what the step's selectors pick; a skipped validator
// does not run either.
func TestRenderWhenAfterSelectorsAndOnValidators(t *testing.T) {
	files := map[string]string{
		"Kptfile": kptfile("app", "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n    configMap:\n      tier: prod\n    selectors:\n    - kind: Service\n"+
			"    when: resources.exists(r, r.kind == 'ConfigMap')\n  validators:\n  - image: example.com/fail:v1\n    when: \"resources.size() > 5\"\n"),
		"cm.yaml": fmt.Sprintf(cm, "a"),
	}
	out, st, err := Render(context.Background(), files, Options{Runtime: goRuntime{
		"gcr.io/kpt-fn/set-labels:v0.1": setLabel,
		"example.com/fail:v1":           func(*krm.ResourceList) error { return fmt.Errorf("ran") },
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Runs) != 2 || !st.Runs[0].Skipped || !st.Runs[1].Skipped || out["cm.yaml"] != files["cm.yaml"] {
		t.Fatalf("runs %+v\n%q", st.Runs, out["cm.yaml"])
	}
}

// configRef: the config is the one resource of the package the reference
// names (kpt's book, "Using functions"), as the pipeline has left it; it
// stays in the package.
func TestRenderConfigRef(t *testing.T) {
	files := map[string]string{
		"Kptfile":     kptfile("mysql", "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n    configRef:\n      apiVersion: v1\n      kind: ConfigMap\n      name: labels\n"),
		"labels.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n  tier: mysql\n",
		"svc.yaml":    "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n",
	}
	out, st, err := Render(context.Background(), files, Options{Runtime: goRuntime{"gcr.io/kpt-fn/set-labels:v0.1": setLabel}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out["svc.yaml"], "tier: mysql") || !strings.Contains(out["labels.yaml"], "name: labels") {
		t.Fatalf("svc.yaml:\n%s\nlabels.yaml:\n%s", out["svc.yaml"], out["labels.yaml"])
	}
	if msgs := fmt.Sprint(st.Runs[0].Results); !strings.Contains(msgs, "`pipeline.mutators[0].configRef`: the config is v1/ConfigMap \"labels\" (honoured as kpt's main branch does") {
		t.Fatalf("results: %s", msgs)
	}
}

// What kpt's main branch refuses in `when` and `configRef`, pvkit refuses,
// naming the field; and a condition's bounds.
func TestRenderNewerFieldsRefused(t *testing.T) {
	two := fmt.Sprintf(cm, "labels") + "---\n" + strings.Replace(fmt.Sprintf(cm, "labels"), "name: labels", "name: labels\n  namespace: other", 1)
	for _, tt := range []struct{ name, step, want string }{
		{"not a boolean", "    when: \"resources.size()\"\n", "Kptfile: `pipeline.mutators[0].when` must be a boolean expression, not int"},
		{"does not compile", "    when: \"resources.exists(r, \"\n", "Kptfile: `pipeline.mutators[0].when` does not compile: ERROR: <input>:1:21: Syntax error"},
		{"too long", "    when: \"" + strings.Repeat("true && ", MaxWhenLength/8) + "true\"\n", fmt.Sprintf("Kptfile: `pipeline.mutators[0].when` is %d bytes; a condition is at most %d", MaxWhenLength+4, MaxWhenLength)},
		{"an evaluation too costly", "    when: \"lists.range(2000).all(a, lists.range(2000).all(b, a+b >= 0))\"\n",
			"package .: `pipeline.mutators[0].when` (gcr.io/kpt-fn/set-labels:v0.1): failed to evaluate: operation cancelled: actual cost limit exceeded"},
		// Issue 55 #6: celbound's bounds, every pvkit CEL expression's.
		{"nested too deep", "    when: \"[1].all(a, [1].all(b, [1].all(c, true)))\"\n",
			"Kptfile: `pipeline.mutators[0].when` does not compile: ERROR: <input>:1:30: comprehension exceeds nesting limit"},
		{"a regular expression too large", "    when: \"resources.exists(r, r.metadata.name.matches('[ab]{0,1000}c'))\"\n",
			"Kptfile: `pipeline.mutators[0].when` does not compile: ERROR: <input>:1:45: regular expression \"[ab]{0,1000}c\" compiles to "},
		{"a match too costly", "    when: \"resources.exists(r, has(r.data) && has(r.data.big) && r.data.big.matches('[ab]{0,300}c'))\"\n",
			"package .: `pipeline.mutators[0].when` (gcr.io/kpt-fn/set-labels:v0.1): failed to evaluate: operation cancelled: actual cost limit exceeded"},
		{"configRef and configMap", "    configMap:\n      a: b\n    configRef:\n      kind: ConfigMap\n      name: labels\n", "Kptfile: `pipeline.mutators[0]` must specify at most one of `configMap`, `configPath`, or `configRef`"},
		{"configRef without a kind", "    configRef:\n      name: labels\n", "Kptfile: `pipeline.mutators[0].configRef.kind`: configRef must specify `kind`"},
		{"configRef without a name", "    configRef:\n      kind: ConfigMap\n", "Kptfile: `pipeline.mutators[0].configRef.name`: configRef must specify `name`"},
		{"configRef to nothing", "    configRef:\n      kind: ConfigMap\n      name: nowhere\n", "package .: `pipeline.mutators[0].configRef` (gcr.io/kpt-fn/set-labels:v0.1): resource ConfigMap \"nowhere\" not found in package"},
		{"configRef to two", "    configRef:\n      kind: ConfigMap\n      name: labels\n", "package .: `pipeline.mutators[0].configRef` (gcr.io/kpt-fn/set-labels:v0.1): resource ConfigMap \"labels\" matched 2 resources, must match exactly one"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"Kptfile":     kptfile("p", "pipeline:\n  mutators:\n  - image: gcr.io/kpt-fn/set-labels:v0.1\n"+tt.step),
				"labels.yaml": two,
				"big.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  big: " + strings.Repeat("ab", 10000) + "\n",
			}
			out, st, err := Render(context.Background(), files, Options{Runtime: goRuntime{"gcr.io/kpt-fn/set-labels:v0.1": setLabel}})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
			if out != nil || st.ExitCode() != 1 {
				t.Fatalf("files %v, status %+v", out, st)
			}
		})
	}
}
