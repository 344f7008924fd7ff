package health

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
)

var edge = Variant{Name: "app-edge1", Namespace: "fleet", Labels: map[string]string{"region": "eu"}, Repo: "edge1", Package: "app"}

var v2 = Revision{Name: "edge1.app.v2", Repo: "edge1", Package: "app", Revision: 2, Ref: Ref("app", 2),
	UpstreamRepo: "blueprints", UpstreamPackage: "app", UpstreamRef: "app/v2", UpstreamCommit: "c0ffee"}

// The two shapes the rule documents: Flux's Kustomization reports
// "<ref>@sha1:<commit>" of the source it applied, Config Sync's RootSync
// the revision it synced.
func TestConditionsOverRealShapes(t *testing.T) {
	flux := &pv.HealthCheck{APIVersion: "kustomize.toolkit.fluxcd.io/v1", Kind: "Kustomization", NameExpr: `downstream.repo + "-" + downstream.package`,
		Condition: `object.status.lastAppliedRevision.startsWith(revision.ref + "@") && object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")`}
	rootSync := &pv.HealthCheck{APIVersion: "configsync.gke.io/v1beta1", Kind: "RootSync", NameExpr: `variant.labels["region"] + "-sync"`,
		Condition: `has(object.status.sync) && object.status.sync.revision == revision.ref && !has(object.status.sync.errorSummary)`}
	for _, tc := range []struct {
		name   string
		check  *pv.HealthCheck
		object map[string]any
		want   bool
		named  string
	}{
		{"flux at v2", flux, obj(`{"status":{"lastAppliedRevision":"app/v2@sha1:abc","conditions":[{"type":"Ready","status":"True"}]}}`), true, "edge1-app"},
		{"flux at v1", flux, obj(`{"status":{"lastAppliedRevision":"app/v1@sha1:abc","conditions":[{"type":"Ready","status":"True"}]}}`), false, "edge1-app"},
		{"flux at v2, not Ready", flux, obj(`{"status":{"lastAppliedRevision":"app/v2@sha1:abc","conditions":[{"type":"Ready","status":"False"}]}}`), false, "edge1-app"},
		{"flux at v20 is not v2", flux, obj(`{"status":{"lastAppliedRevision":"app/v20@sha1:abc","conditions":[{"type":"Ready","status":"True"}]}}`), false, "edge1-app"},
		{"rootsync synced", rootSync, obj(`{"status":{"sync":{"revision":"app/v2"}}}`), true, "eu-sync"},
		{"rootsync with errors", rootSync, obj(`{"status":{"sync":{"revision":"app/v2","errorSummary":{"totalCount":1}}}}`), false, "eu-sync"},
		{"rootsync not started", rootSync, obj(`{"status":{}}`), false, "eu-sync"},
	} {
		if p := Validate("spec.health", tc.check); len(p) != 0 {
			t.Fatalf("%s: %v", tc.name, p)
		}
		name, err := Name(context.Background(), tc.check, edge)
		if err != nil || name != tc.named {
			t.Errorf("%s: name %q, %v; want %q", tc.name, name, err, tc.named)
		}
		got, err := Healthy(context.Background(), tc.check, edge, tc.object, v2)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// issue 57 #1: three states, Flux's way: the failed expression first (a
// failure wins), then the condition; without one, never Failed.
func TestThreeStates(t *testing.T) {
	c := &pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'",
		Condition: `has(object.status.applied) && object.status.applied == revision.ref`,
		Failed:    `has(object.status.failed) && object.status.failed == revision.ref`}
	for _, tc := range []struct {
		name   string
		object string
		want   State
	}{
		{"applied", `{"status":{"applied":"app/v2"}}`, Current},
		{"not yet", `{"status":{"applied":"app/v1"}}`, InProgress},
		{"failed", `{"status":{"applied":"app/v1","failed":"app/v2"}}`, Failed},
		{"failed and applied: the failure wins", `{"status":{"applied":"app/v2","failed":"app/v2"}}`, Failed},
		{"an older revision failed", `{"status":{"applied":"app/v2","failed":"app/v1"}}`, Current},
	} {
		got, err := Evaluate(context.Background(), c, edge, obj(tc.object), v2)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	noFailed := *c
	noFailed.Failed = ""
	if got, err := Evaluate(context.Background(), &noFailed, edge, obj(`{"status":{"failed":"app/v2"}}`), v2); err != nil || got != InProgress {
		t.Errorf("without failed: %v, %v; want InProgress", got, err)
	}
	bad := *c
	bad.Failed = "object.status.failed"
	if _, err := Evaluate(context.Background(), &bad, edge, obj(`{"status":{"failed":"app/v2"}}`), v2); err == nil ||
		err.Error() != `failed "object.status.failed" gave app/v2, not a bool` {
		t.Errorf("a failed expression that is not a bool: %v", err)
	}
	if p := Validate("spec.rollout.health", &bad); len(p) != 0 {
		t.Errorf("a dyn expression is checked when evaluated: %v", p)
	}
	bad.Failed = "'yes'"
	if p := Validate("spec.rollout.health", &bad); len(p) != 1 || p[0].Field != "spec.rollout.health.failed" ||
		p[0].Message != "`spec.rollout.health.failed` must evaluate to a bool, found string" {
		t.Errorf("Validate: %v", p)
	}
}

func TestValidateNamesEachField(t *testing.T) {
	for _, tc := range []struct {
		check pv.HealthCheck
		field string
		want  string
	}{
		{pv.HealthCheck{Kind: "RootSync", NameExpr: "'x'", Condition: "true"}, "spec.health.apiVersion", "`spec.health.apiVersion` must be set"},
		{pv.HealthCheck{APIVersion: "v1", Kind: "rootSync", NameExpr: "'x'", Condition: "true"}, "spec.health.kind", "`spec.health.kind` must be a kind (it starts with a capital letter), found \"rootSync\""},
		{pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "", Condition: "true"}, "spec.health.nameExpr", "`spec.health.nameExpr` must be set"},
		{pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "1", Condition: "true"}, "spec.health.nameExpr", "`spec.health.nameExpr` must evaluate to a string, found int"},
		{pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "object.metadata.name", Condition: "true"}, "spec.health.nameExpr", "`spec.health.nameExpr` does not compile: 1:1: undeclared reference to 'object'"},
		{pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'", Condition: "'yes'"}, "spec.health.condition", "`spec.health.condition` must evaluate to a bool, found string"},
		{pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'", Condition: strings.Repeat("true && ", 600) + "true"}, "spec.health.condition", "`spec.health.condition` is 4804 bytes; an expression is at most 4096"},
		{pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'", Condition: strings.Repeat("(", 40) + "true" + strings.Repeat(")", 40)}, "spec.health.condition", "`spec.health.condition` does not compile:"},
	} {
		p := Validate("spec.health", &tc.check)
		if len(p) != 1 || p[0].Field != tc.field || !strings.HasPrefix(p[0].Message, tc.want) {
			t.Errorf("%+v: %v; want %s: %s", tc.check, p, tc.field, tc.want)
		}
	}
}

func TestNameMustBeAName(t *testing.T) {
	for expr, want := range map[string]string{
		`"a/b"`:                     `nameExpr "\"a/b\"" gave a/b, not an object name`,
		`""`:                        `nameExpr "\"\"" gave , not an object name`,
		`variant.labels["missing"]`: `nameExpr "variant.labels[\"missing\"]": no such key: missing`,
	} {
		_, err := Name(context.Background(), &pv.HealthCheck{NameExpr: expr}, edge)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", expr, err, want)
		}
	}
}

// An object is data whoever may write it controls: a condition over a big
// list stops at the cost limit, it does not run on.
func TestConditionCostIsBounded(t *testing.T) {
	items := make([]any, 3000)
	for i := range items {
		items[i] = int64(i)
	}
	c := &pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'", Condition: `object.items.all(x, object.items.exists(y, y == x + 1) || x == 2999)`}
	_, err := Healthy(context.Background(), c, edge, map[string]any{"items": items}, v2)
	if err == nil || !strings.Contains(err.Error(), "operation cancelled: actual cost limit exceeded") {
		t.Fatalf("err = %v, want the cost limit", err)
	}
}

func obj(s string) map[string]any {
	var m map[string]any
	if err := jsonUnmarshal(s, &m); err != nil {
		panic(err)
	}
	return m
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// hostileMatches is a condition of 40 matches over the object's status.p.
func hostileMatches(pattern string) *pv.HealthCheck {
	parts := make([]string, 40)
	for i := range parts {
		parts[i] = "object.status.p.matches('" + pattern + "')"
	}
	return &pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'", Condition: strings.Join(parts, " || ")}
}

// hostileStatus is an object with a 20 KB status field no pattern matches.
var hostileStatus = map[string]any{"status": map[string]any{"p": strings.Repeat("ab", 10_000)}}

// Issue 55 #6: 40 matches of `[ab]{0,1000}` over a 20 KB status field ran
// 81-121 s under a 10 s timeout with CEL's own `matches` (a call cannot be
// interrupted). With celbound's: the literal is refused at validation
// (2,002 instructions), and a smaller one stops at the cost limit, each
// match charged its work.
func TestConditionMatchesBounded(t *testing.T) {
	if p := Validate("spec.health", hostileMatches("[ab]{0,1000}c")); len(p) != 1 || p[0].Field != "spec.health.condition" ||
		!strings.Contains(p[0].Message, `regular expression "[ab]{0,1000}c" compiles to 2003 instructions, more than 1000`) {
		t.Fatalf("problems = %+v", p)
	}
	c := hostileMatches("[ab]{0,200}c")
	if p := Validate("spec.health", c); len(p) != 0 {
		t.Fatal(p)
	}
	_, err := Healthy(context.Background(), c, edge, hostileStatus, v2)
	if err == nil || !strings.Contains(err.Error(), "operation cancelled: actual cost limit exceeded") {
		t.Fatalf("err = %v, want the cost limit", err)
	}
	// A pattern read from the object is bounded when it runs.
	c = &pv.HealthCheck{APIVersion: "v1", Kind: "K", NameExpr: "'x'", Condition: "object.status.p.matches(object.status.q)"}
	_, err = Healthy(context.Background(), c, edge, map[string]any{"status": map[string]any{"p": "ab", "q": "[ab]{0,1000}"}}, v2)
	if err == nil || !strings.Contains(err.Error(), "compiles to 2002 instructions, more than 1000") {
		t.Fatalf("err = %v, want the program bound", err)
	}
}

// BenchmarkHostileHealthCondition is the worst the bounds allow of
// TestConditionMatchesBounded's attack (docs/security.md, round five).
func BenchmarkHostileHealthCondition(b *testing.B) {
	c := hostileMatches("[ab]{0,200}c")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Healthy(context.Background(), c, edge, hostileStatus, v2); err == nil {
			b.Fatal("evaluated")
		}
	}
}

// The compiled programs are kept in the one CEL program cache, bounded in
// bytes: 3,000 distinct conditions (a fleet's worth and more) leave it
// within its budget, the most recent still served from it.
func TestProgramCacheIsBounded(t *testing.T) {
	last := ""
	for i := 0; i < 3000; i++ {
		last = fmt.Sprintf("object.status.generation == %d", i)
		if _, err := compile(conditionKind, last); err != nil {
			t.Fatal(err)
		}
	}
	if used, n := programs.Size(); used > programCacheBytes || n == 0 || n >= 3000 {
		t.Fatalf("the cache holds %d programs in %d bytes (budget %d)", n, used, programCacheBytes)
	}
	if _, ok := programs.Get(fmt.Sprintf("%d:%s", conditionKind, last)); !ok {
		t.Fatal("the most recent program is not kept")
	}
}

// A RootSync's sync errors reach the operator in Config Sync's own words
// (status.sync.errors[].errorMessage), beside the count and the commit,
// bounded as every cluster's words are.
func TestRootSyncErrorsInConfigSyncsWords(t *testing.T) {
	long := strings.Repeat("x", 2*MaxReported)
	for _, tt := range []struct{ name, status, want string }{
		{"the summary", `{"sync":{"commit":"abc123","errorSummary":{"totalCount":1},"errors":[{"code":"2009","errorMessage":"KNV2009: failed to apply Deployment.apps, upf/upf: admission webhook denied the request"}]}}`,
			"1 sync error(s) at abc123: KNV2009: failed to apply Deployment.apps, upf/upf: admission webhook denied the request"},
		{"the Syncing condition", `{"conditions":[{"type":"Syncing","status":"False","reason":"Sync","message":"Sync Completed"}],"sync":{"commit":"abc123","errorSummary":{"totalCount":2},"errors":[{"errorMessage":"KNV1021: No CustomResourceDefinition is defined"},{"errorMessage":"other"}]}}`,
			"Sync: Sync Completed: KNV1021: No CustomResourceDefinition is defined"},
		{"no errors", `{"sync":{"commit":"abc123"}}`, ""},
	} {
		got, err := Reported(context.Background(), &pv.HealthCheck{}, Variant{}, obj(`{"status":`+tt.status+`}`), Revision{})
		if err != nil || got != tt.want {
			t.Errorf("%s: %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
	got, _ := Reported(context.Background(), &pv.HealthCheck{}, Variant{}, obj(`{"status":{"sync":{"commit":"c","errorSummary":{"totalCount":1},"errors":[{"errorMessage":"`+long+`"}]}}}`), Revision{})
	if len(got) > MaxReported || !strings.HasSuffix(got, "…") {
		t.Errorf("a long error message: %d bytes, %q…", len(got), got[:40])
	}
}
