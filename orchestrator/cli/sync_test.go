package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pvkit/pvkit/internal/fntest"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
)

// bundle is a package whose objects --sync applies: a nested variant, a
// ConfigMap, and what ConfigSync would not apply here (local config, an
// object of another namespace, a Repository).
func bundle(withVariant bool) map[string]string {
	files := map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bundle\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"objects.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: synced-settings
data:
  color: blue
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-only
  annotations:
    config.kubernetes.io/local-config: "true"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: elsewhere
  namespace: other
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: us-east1-endpoints
data:
  db: from-the-package
---
apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: packaged-repo
spec:
  deployment: true
`,
	}
	if withVariant {
		files["variant.yaml"] = "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: from-sync\nspec:\n" +
			"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: core-euwest1, package: from-sync}\n" +
			"  injectors:\n  - kind: ConfigMap\n    name: eu-west1-endpoints\n"
	}
	return files
}

// Issue 21 #2: pvctl run --sync REPO applies the published packages of
// REPO to the embedded cluster as ConfigSync would; the variants they nest
// are reconciled in the same run, the files win over a package, what
// ConfigSync would not apply is not, and what a package no longer holds is
// removed with --prune only.
func TestSync(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, pkg, bundle(true))
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", pkg)
	_, out, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, out, "created PackageVariant from-sync", "created draft core-euwest1.from-sync.packagevariant-1",
		"synced ConfigMap synced-settings from apps/bundle@v1",
		"from-sync             True   NoErrors")
	contains(t, errs,
		"warning: --sync: ConfigMap us-east1-endpoints of apps/bundle@v1 is not applied: the files give an object of that name",
		`warning: --sync: apps/bundle@v1: ConfigMap elsewhere is in namespace "other", not the run's "default": not applied`)
	// Issue 29 #3b: a Repository a package holds is applied and served, as
	// Porch serves the Repository ConfigSync applies.
	contains(t, out, "synced Repository packaged-repo from apps/bundle@v1", "created repository packaged-repo (synced from apps/bundle@v1)")
	if _, err := os.Stat(filepath.Join(w.repos, "packaged-repo.git")); err != nil {
		t.Fatalf("the synced repository's git directory: %v", err)
	}
	if strings.Contains(out, "local-only") {
		t.Fatalf("local config was synced:\n%s", out)
	}
	// The files' endpoints won: the draft injected theirs.
	contains(t, w.files("edge-useast1.app.packagevariant-1")["endpoints.yaml"], "db.us-east1.internal:5432")
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps"), "No changes: every downstream package is up to date.")

	// The package's next revision no longer holds the variant: removed with
	// --prune only, as every removal.
	v2 := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, v2, bundle(false))
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", v2)
	out = w.mustCmd(ExitChanges, "run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, out, "Not removed (1): run again with --prune to remove them:\n  PackageVariant from-sync\n")
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps", "--prune")
	contains(t, out, "deleted PackageVariant from-sync", "deleted core-euwest1.from-sync.packagevariant-1")
	// Without --sync, what was synced stays as it is.
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in), "No changes: every downstream package is up to date.")
}

// --sync guards against what would remove by mistake: a repository name
// with a typo is refused before anything is written; a run that syncs
// another repository leaves the objects synced from the first as they are;
// a published package emptied of more than half of what was synced is
// held back even with --prune (the mass-deletion guard), and removed with
// --prune=all.
func TestSyncGuards(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, pkg, bundle(true))
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", pkg)

	before := w.snapshot()
	code, _, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "appz", "--prune")
	if code != ExitUsage {
		t.Fatalf("--sync appz: exit %d, want %d\n%s", code, ExitUsage, errs)
	}
	contains(t, errs, `--sync "appz": no repository of that name (the run's repositories: apps, blueprints, core-euwest1, edge-useast1`)
	if diff := cmp.Diff(before, w.snapshot()); diff != "" {
		t.Fatalf("a refused --sync wrote to the repositories:\n%s", diff)
	}

	w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps")
	// Another repository synced: what apps gave stays.
	other := filepath.Join(t.TempDir(), "other")
	fntest.WriteTree(t, other, map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: other\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other-settings\ndata:\n  size: small\n"})
	w.mustCmd(ExitOK, "publish", "--repo", "more", "--package", "other", other)
	out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "more", "--prune")
	contains(t, out, "synced ConfigMap other-settings from more/other@v1", "from-sync             True   NoErrors")
	if strings.Contains(out, "from-sync.packagevariant-1 (") || strings.Contains(out, "removed synced") || strings.Contains(out, "deleted PackageVariant") {
		t.Fatalf("syncing another repository removed what apps synced:\n%s", out)
	}

	// apps/bundle emptied: its variant and its ConfigMap (2 of 2) would go.
	emptied := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, emptied, map[string]string{"Kptfile": bundle(false)["Kptfile"]})
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", emptied)
	code, out, errs = w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps", "--prune")
	if code != ExitChanges {
		t.Fatalf("the guard: exit %d, want %d\n%s\n%s", code, ExitChanges, out, errs)
	}
	contains(t, errs, "warning: --sync: 3 of the 3 objects synced from apps are in no published package any longer (more than half): none was removed; check the repositories' published packages, or run with --prune=all")
	contains(t, out, "ConfigMap synced-settings (no synced package holds it; the mass-deletion guard holds it: --prune=all)",
		"PackageVariant from-sync (no synced package holds it; the mass-deletion guard holds it: --prune=all)")
	if strings.Contains(out, "deleted") || strings.Contains(out, "removed synced") {
		t.Fatalf("the guard let a removal through:\n%s", out)
	}
	out = w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps", "--prune=all")
	contains(t, out, "removed synced ConfigMap synced-settings", "deleted PackageVariant from-sync")
}

// A plan says what each change of a removal would do, once: a published
// downstream is proposed for deletion and then released by its variant
// (two updates, two different lines), and a sync is "would sync".
func TestPlanSaysWhatARemovalDoes(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, pkg, bundle(false))
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", pkg)
	contains(t, w.mustCmd(ExitChanges, "plan", "-f", w.in, "--sync", "apps"), "would sync ConfigMap synced-settings from apps/bundle@v1")
	w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in)
	const staging = "core-euwest1.app.packagevariant-1"
	w.mustCmd(ExitOK, "approve", staging)
	if err := os.Remove(filepath.Join(w.in, "app-staging.yaml")); err != nil {
		t.Fatal(err)
	}
	out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--prune")
	contains(t, out, "would delete PackageVariant app-staging\n",
		"would update "+staging+" (DeletionProposed)\n",
		"would release "+staging+" (DeletionProposed; no longer owned)\n")
	if n := strings.Count(out, staging); n != 2 {
		t.Fatalf("the plan names %s %d times, want 2:\n%s", staging, n, out)
	}
}

// stateFile is pvctl run's state file as it is on disk.
func (w *ws) stateFile() *state.State {
	w.t.Helper()
	st, err := state.Read(filepath.Join(w.repos, state.File))
	if err != nil {
		w.t.Fatal(err)
	}
	return st
}

// Issue 27 #2: nothing a synced package holds decides identity or
// ownership. A synced PackageVariant that carries another variant's UID (pvctl's
// UIDs are derived from kind, namespace and name, so public), owner
// references to a set, a status, a resource version and a generation gets
// what an API server would give it: a UID of its own, no status, no owner
// reference to anything not synced from the same package revision. It
// owns none of the other variant's drafts, approves none by its policy
// and, removed with --prune, deletes none.
func TestSyncedObjectsDecideNothing(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	victim := local.UID("PackageVariant", "default", "app-staging")
	set := local.UID("PackageVariantSet", "default", "app")
	evil := `apiVersion: config.porch.kpt.dev/v1alpha1
kind: PackageVariant
metadata:
  name: evil
  uid: ` + string(victim) + `
  resourceVersion: "999"
  generation: 7
  creationTimestamp: "2020-01-01T00:00:00Z"
  ownerReferences:
  - apiVersion: config.porch.kpt.dev/v1alpha2
    kind: PackageVariantSet
    name: app
    uid: ` + string(set) + `
    controller: true
  - apiVersion: v1
    kind: ConfigMap
    name: evil-owner
    uid: 00000000-0000-0000-0000-000000000001
spec:
  annotations:
    approval.nephio.org/policy: always
  upstream: {repo: blueprints, package: app}
  downstream: {repo: core-euwest1, package: app}
status:
  downstreamTargets:
  - name: core-euwest1.app.packagevariant-1
  conditions:
  - {type: Ready, status: "True", reason: NoErrors, message: forged, lastTransitionTime: "2020-01-01T00:00:00Z"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: evil-owner
data: {a: b}
`
	pkg := filepath.Join(t.TempDir(), "evil")
	fntest.WriteTree(t, pkg, map[string]string{
		"Kptfile":   "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: evil\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"evil.yaml": evil,
	})
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "evil", pkg)
	_, out, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, errs, "warning: --sync: apps/evil@v1: PackageVariant evil: owner reference to PackageVariantSet app dropped: only an object synced from the same package revision may own a synced object")

	st := w.stateFile()
	var got *pvapi.PackageVariant
	for i := range st.Variants {
		if st.Variants[i].Name == "evil" {
			got = &st.Variants[i]
		}
	}
	if got == nil {
		t.Fatalf("the synced variant is not in the state:\n%s\n%s", out, errs)
	}
	if got.UID == victim {
		t.Fatalf("the synced variant kept the UID its package gave it (app-staging's)")
	}
	if len(got.OwnerReferences) != 1 || got.OwnerReferences[0].Name != "evil-owner" || got.OwnerReferences[0].UID == "00000000-0000-0000-0000-000000000001" {
		t.Fatalf("owner references: %+v, want only evil-owner's, with its UID in the cluster", got.OwnerReferences)
	}
	for _, c := range got.Status.Conditions {
		if c.Message == "forged" {
			t.Fatalf("the package's status was applied: %+v", got.Status)
		}
	}
	// app-staging's draft is app-staging's alone: not approved by the
	// synced variant's policy, not deleted when it goes.
	revs := strings.Join(w.revisions(), "\n")
	contains(t, revs, "core-euwest1.app.packagevariant-1")
	if strings.Contains(revs, "core-euwest1.app.v1") {
		t.Fatalf("the synced variant's policy approved app-staging's draft:\n%s", revs)
	}
	fntest.WriteTree(t, pkg, map[string]string{"evil.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: evil-owner\ndata: {a: c}\n"})
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "evil", pkg)
	w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps", "--prune")
	contains(t, strings.Join(w.revisions(), "\n"), "core-euwest1.app.packagevariant-1")
}

// Issue 27 #5: a synced variant that clones a package of its own lineage
// (the package it was synced from, or one that package was cloned from)
// is refused: each sync would clone it again, and a pipeline that renames
// the nested variant per package doubled the fleet every pass (one run
// published 2,046 packages in 141 s, and wrote no state).
func TestSyncRefusesLineageCycles(t *testing.T) {
	w := newWS(t)
	seed := filepath.Join(t.TempDir(), "seed")
	fntest.WriteTree(t, seed, map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: seed\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"nested.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: again\nspec:\n" +
			"  annotations:\n    approval.nephio.org/policy: always\n" +
			"  upstream: {repo: blueprints, package: seed}\n  downstream: {repo: apps, package: seed-again}\n",
	})
	w.mustCmd(ExitOK, "publish", "--repo", "blueprints", "--package", "seed", seed)
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "keep", filepath.Join(fntest.RepoRoot(), "examples", "app"))
	w.write("seed.yaml", "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: top\nspec:\n"+
		"  annotations:\n    approval.nephio.org/policy: always\n"+
		"  upstream: {repo: blueprints, package: seed}\n  downstream: {repo: apps, package: top}\n")
	_, out, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, errs, "warning: --sync: apps/top@v1: PackageVariant again is not applied: its upstream blueprints/seed is the package it was synced from or one that package was cloned from, so every sync would clone it again, without end")
	if strings.Contains(out, "seed-again") {
		t.Fatalf("the nested variant cloned its own lineage:\n%s", out)
	}
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps"), "No changes: every downstream package is up to date.")
}

// Issue 28 #1: the embedded cluster applies the CRDs' schemas as an API
// server would, and a synced object it refuses is refused alone, with a
// warning naming the field, as ConfigSync refuses it; the rest is applied.
func TestSyncedObjectRefusedBySchema(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "bad")
	fntest.WriteTree(t, pkg, map[string]string{
		"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bad\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"objects.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: bad-path\nspec:\n" +
			"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: core-euwest1, package: Not_A_Path}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\ndata: {a: b}\n",
	})
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bad", pkg)
	code, out, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	contains(t, errs, "warning: --sync: apps/bad@v1: objects.yaml: PackageVariant \"bad-path\": `spec.downstream.package` Invalid value: \"Not_A_Path\": spec.downstream.package in body should match")
	contains(t, out, "synced ConfigMap fine from apps/bad@v1")
	if strings.Contains(out, "bad-path") {
		t.Fatalf("the invalid variant was applied:\n%s", out)
	}
}

// Issue 29 #3: a kind that arrives by --sync is readable as the same kind
// in -f is (Nephio's cluster packages sync WorkloadClusters that nested
// variants inject); a kind that arrives neither way is refused with pvctl's
// own advice (its flags; pvctl reads with its user's rights, no RBAC).
func TestSyncedKindsAreReadable(t *testing.T) {
	w := newWS(t)
	variant := func(name, kind string) string {
		return "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: " + name + "\nspec:\n" +
			"  upstream: {repo: blueprints, package: app}\n  downstream: {repo: core-euwest1, package: " + name + "}\n" +
			"  injectors:\n  - group: infra.nephio.org\n    kind: " + kind + "\n    name: edge01\n  - kind: ConfigMap\n    name: eu-west1-endpoints\n"
	}
	w.publishSynced("cluster", map[string]string{
		"cluster.yaml": "apiVersion: infra.nephio.org/v1alpha1\nkind: WorkloadCluster\nmetadata:\n  name: edge01\nspec:\n  clusterName: edge01\n",
		"addons.yaml":  variant("addons", "WorkloadCluster") + "---\n" + variant("other", "Machine"),
	})
	_, out, _ := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, out, "synced WorkloadCluster edge01 from apps/cluster@v1", "addons                True   NoErrors",
		"other                 False  KindNotAllowed",
		"`spec.injectors[0]` names kind \"Machine\", a kind pvkit may not read (allowed: ConfigMap, Team.example.com, WorkloadCluster.infra.nephio.org); "+
			"pvctl run reads the kinds of the objects its files give (-f) or --sync applies; --readable-kinds names more")
	if strings.Contains(out, "RBAC") {
		t.Fatalf("pvctl's advice names RBAC:\n%s", out)
	}
}

// Issue 29 #3a: each synced object is checked as -f checks it; one that is
// ill-typed (Nephio's catalog nests a variant with `revision: main`) is
// refused alone, with the message -f gives, naming the repository, the
// package revision and the file, as a warning and a Warning Event; the
// rest of the package is applied.
func TestSyncedObjectRefusedAlone(t *testing.T) {
	w := newWS(t)
	w.publishSynced("cluster", map[string]string{
		"nested.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: PackageVariant\nmetadata:\n  name: nested\nspec:\n" +
			"  upstream: {repo: blueprints, package: app, revision: main}\n  downstream: {repo: core-euwest1, package: nested}\n",
		"fine.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\ndata: {a: b}\n",
	})
	code, out, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	refused := "apps/cluster@v1: nested.yaml: PackageVariant \"nested\": `spec.upstream.revision` must be an integer, found a string"
	contains(t, errs, "warning: --sync: "+refused)
	contains(t, out, "synced ConfigMap fine from apps/cluster@v1")
	if strings.Contains(errs, "unrecognized type") {
		t.Fatalf("a raw conversion error:\n%s", errs)
	}
	contains(t, w.mustCmd(ExitOK, "events", "-o", "wide"), "SyncRefused", refused)
}

// Issue 29 #3b: Nephio's cluster packages create the new cluster's Porch
// Repository through ConfigSync, and sets that deploy addons select it. A
// Repository --sync applies is served in the same run, as Porch would
// serve it (labels a set selects, spec.deployment): the set's child and
// its draft are made in that run; the next run changes nothing (the state
// keeps the registration).
func TestSyncedRepositoryServedInTheSameRun(t *testing.T) {
	w := newWS(t)
	w.publishSynced("cluster", map[string]string{
		"repo.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: edge-new\n  labels:\n    addons: \"yes\"\n" +
			"spec:\n  type: git\n  deployment: true\n  git:\n    repo: https://example.com/edge-new.git\n",
	})
	w.write("addons.yaml", "apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata:\n  name: addons\nspec:\n"+
		"  upstream: {repo: blueprints, package: app}\n  targets:\n  - repositorySelector:\n      matchLabels: {addons: \"yes\"}\n"+
		"    template:\n      injectors:\n      - kind: ConfigMap\n        name: us-east1-endpoints\n")
	out := w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, out, "created repository edge-new (synced from apps/cluster@v1)", "created PackageVariant addons-edge-new-app",
		"created draft edge-new.app.packagevariant-1 (clone of blueprints.app.v1)", "addons-edge-new-app")
	// A deployment repository: the package context was generated.
	contains(t, w.files("edge-new.app.packagevariant-1")["package-context.yaml"], "package-path: app")
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in, "--sync", "apps"), "No changes: every downstream package is up to date.")
	contains(t, w.mustCmd(ExitOK, "run", "-o", "wide", "-f", w.in), "No changes: every downstream package is up to date.")
}

// publishSynced publishes a package of objects for --sync (repository
// apps), with a Kptfile of its own that is local config.
func (w *ws) publishSynced(name string, objects map[string]string) {
	w.t.Helper()
	files := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: " + name +
		"\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"}
	for k, v := range objects {
		files[k] = v
	}
	pkg := filepath.Join(w.t.TempDir(), name)
	fntest.WriteTree(w.t, pkg, files)
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", name, pkg)
}

// A package decides no storage: a synced Repository scoped to a directory
// (it would be served from another repository's git directory) is refused
// alone: not applied, and no repository is made for it.
func TestSyncedRepositoryWithADirectoryRefused(t *testing.T) {
	w := newWS(t)
	w.publishSynced("cluster", map[string]string{
		"repo.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: sneaky\nspec:\n  type: git\n" +
			"  git:\n    repo: https://example.com/blueprints.git\n    directory: /app\n",
	})
	_, out, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, errs, "Repository \"sneaky\": `spec.git.directory` \"/app\": a synced Repository is served from a git directory of its own")
	if strings.Contains(out, "synced Repository sneaky") {
		t.Fatalf("the refused Repository was applied:\n%s", out)
	}
	for _, r := range w.store().Repositories() {
		if r.Name == "sneaky" {
			t.Fatalf("the refused Repository is served: %+v", r)
		}
	}
}

// Issue 46 #5: a synced Repository that is not a deployment repository and
// whose bare repository is not there is not served empty: --sync refuses
// it, naming the path it looked for; nothing is created.
func TestSyncRefusesAnAbsentCatalog(t *testing.T) {
	w := newWS(t)
	pkg := filepath.Join(t.TempDir(), "bundle")
	fntest.WriteTree(t, pkg, map[string]string{
		"Kptfile":   "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: bundle\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n",
		"repo.yaml": "apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: team-catalog\nspec:\n  type: git\n  git:\n    repo: https://git.example.com/team-catalog.git\n",
	})
	w.mustCmd(ExitOK, "publish", "--repo", "apps", "--package", "bundle", pkg)
	_, _, errs := w.cmd("run", "-o", "wide", "-f", w.in, "--sync", "apps")
	contains(t, errs, `warning: --sync: apps/bundle@v1: Repository "team-catalog": its bare repository `+filepath.Join(w.repos, "team-catalog.git")+
		" is not there; pvctl serves a Repository that is not a deployment repository only from one that exists: clone it there (git clone --bare https://git.example.com/team-catalog.git "+
		filepath.Join(w.repos, "team-catalog.git")+") or publish a package into it (pvctl publish --repo team-catalog), or name another --repos; not applied")
	if _, err := os.Stat(filepath.Join(w.repos, "team-catalog.git")); !os.IsNotExist(err) {
		t.Fatalf("the refused repository was created: %v", err)
	}
}
