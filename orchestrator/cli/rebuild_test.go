package cli

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/provenance"
	"github.com/pvkit/pvkit/pkg/variant"
)

// forge changes a package as edit says and writes its record again for
// the result, as whoever can push to the repository can (unsigned): the
// content then checks against its record, and only a rebuild tells.
func forge(t *testing.T, files map[string]string, edit func(map[string]string)) map[string]string {
	t.Helper()
	return forgeSpec(t, files, edit, func(*pv.PackageVariantSpec) {})
}

// forgeSpec is forge with the record's spec edited too.
func forgeSpec(t *testing.T, files map[string]string, edit func(map[string]string), editSpec func(*pv.PackageVariantSpec)) map[string]string {
	t.Helper()
	rec, err := provenance.Read(files)
	if err != nil {
		t.Fatal(err)
	}
	ext := rec.Statement.Predicate.BuildDefinition.ExternalParameters
	files = maps.Clone(files)
	edit(files)
	spec := *ext.Parameters.DeepCopy()
	editSpec(&spec)
	v := &pv.PackageVariant{Metadata: meta.ObjectMeta{Name: ext.Variant.Name, Namespace: ext.Variant.Namespace, UID: ext.Variant.UID}, Spec: spec}
	out, err := provenance.Stamp(files, provenance.Inputs{Variant: v, Generation: ext.Variant.Generation, Builder: "pvctl",
		Version: rec.Statement.Predicate.RunDetails.Builder.Version["pvkit"], Revision: ext.Revision}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pushPackage commits a package's files to a repository's branch as a
// person with git access would.
func (w *ws) pushPackage(repo, pkg string, files map[string]string) {
	w.t.Helper()
	w.commitToBranch(repo, "a package pushed with its record", func(dir string) {
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(dir, pkg, name), []byte(text), 0o644); err != nil {
				w.t.Fatal(err)
			}
		}
	})
}

func replaced(t *testing.T, text, old, new string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("no %q in:\n%s", old, text)
	}
	return strings.Replace(text, old, new, 1)
}

// Issue 60 #1's acceptance (rule provenance-rebuild): every revision pvctl
// wrote rebuilds from its record to the same package; each way of making
// a package its inputs do not give fails naming what differs, even where
// the record was written again to match the content: one byte pushed with
// git, an injected object changed, a record that names another upstream
// commit, a function's version changed.
func TestVerifyRebuild(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	out := w.mustCmd(ExitOK, "verify", "--rebuild")
	contains(t, out,
		"ok   core-euwest1.app.packagevariant-1: 6 files as recorded by variant default/app-staging (generation 1) from upstream app/v1 at ",
		"; unsigned; rebuilt from upstream app/v1 at ", ", variant default/app-staging: the same\n",
		"ok   edge-useast1.app.packagevariant-1: ", "variant default/app-edge-useast1-app: the same\n",
		"3 checked, 0 failed, 2 without a record, 3 rebuilt, 0 cannot be rebuilt")
	for _, name := range []string{"core-euwest1.app.packagevariant-1", "edge-useast1.app.packagevariant-1", "edge-uswest1.app.packagevariant-1"} {
		w.mustCmd(ExitOK, "approve", name)
	}
	w.run(ExitOK)
	w.mustCmd(ExitOK, "verify", "--rebuild", "core-euwest1.app.main", "edge-useast1.app.main")
	w.publishFiles(func(f map[string]string) {
		f["deployment.yaml"] = replaced(t, f["deployment.yaml"], "nginx:1.27", "nginx:1.28")
	})
	v2 := w.gitRef("blueprints", "app/v2")

	failing := func(name, why string, wants ...string) {
		t.Helper()
		code, out, _ := w.cmd("verify", "--rebuild", name)
		if code != ExitNotReady {
			t.Fatalf("%s: exit %d, want %d\n%s", why, code, ExitNotReady, out)
		}
		contains(t, out, append([]string{"FAIL " + name + ": "}, wants...)...)
	}
	t.Run("one byte pushed with git", func(t *testing.T) {
		w.pushToBranch("core-euwest1", "app/deployment.yaml", "replicas: 1", "replicas: 2")
		failing("core-euwest1.app.main", "a byte changed",
			"the package differs from its provenance statement (pvkit-provenance.yaml): deployment.yaml (modified); rebuilt from upstream app/v1 at ",
			"not what its inputs give\n       deployment.yaml: Deployment/web spec.replicas: published 2, rebuilt 1\n")
	})
	main := w.files("edge-useast1.app.main")
	t.Run("an injected object changed", func(t *testing.T) {
		// The record pvkit wrote names the digest of what was read: an
		// object changed in the package is named, as the object it was.
		// (A record written again to match it is what a signature
		// protects: docs/behavior.md, rule provenance-rebuild.)
		w.pushToBranch("edge-useast1", "app/endpoints.yaml", "db.us-east1.internal", "db.attacker.example")
		failing("edge-useast1.app.main", "an injected object changed",
			"endpoints.yaml (modified); rebuilt from upstream app/v1 at ", "not what its inputs give\n",
			"       injected ConfigMap default/us-east1-endpoints: the package holds data with digest ")
	})
	t.Run("another upstream commit", func(t *testing.T) {
		v1 := w.gitRef("blueprints", "app/v1")
		w.pushPackage("edge-useast1", "app", forge(t, main, func(f map[string]string) {
			f["Kptfile"] = replaced(t, f["Kptfile"], v1, v2)
		}))
		w.mustCmd(ExitOK, "verify", "edge-useast1.app.main")
		failing("edge-useast1.app.main", "another upstream commit", "; rebuilt from upstream app/v1 at "+v2[:12],
			"deployment.yaml: Deployment/web spec.template.spec.containers[name=web].image: published nginx:1.27, rebuilt nginx:1.28\n")
	})
	t.Run("nothing to rebuild from", func(t *testing.T) {
		v1 := w.gitRef("blueprints", "app/v1")
		for _, c := range []struct{ old, new, want string }{
			{v1, strings.Repeat("0", 40), "; cannot be rebuilt: the upstream at its recorded commit: repository blueprints: commit 0000000000000000000000000000000000000000 in "},
			{"ref: app/v1", "ref: app/v9", "; cannot be rebuilt: the upstream app/v9 of repository blueprints is not served (pvctl get --repo blueprints lists what is)"},
		} {
			w.pushPackage("edge-useast1", "app", forge(t, main, func(f map[string]string) {
				f["Kptfile"] = strings.ReplaceAll(replaced(t, f["Kptfile"], c.old, c.new), c.old, c.new)
			}))
			failing("edge-useast1.app.main", "nothing to rebuild from", c.want)
		}
	})
	// A record that names a function neither the revision's Kptfiles nor
	// the variant's spec name: the rebuild does not run it, whatever the
	// record (even one signed again) says.
	t.Run("a function the record chose", func(t *testing.T) {
		w.pushPackage("edge-useast1", "app", forgeSpec(t, main, func(map[string]string) {}, func(s *pv.PackageVariantSpec) {
			s.Pipeline.Mutators = append(s.Pipeline.Mutators, pv.Function{Image: "gcr.io/kpt-fn/starlark:v0.4.3", Name: "chosen"})
		}))
		failing("edge-useast1.app.main", "a function the record chose",
			"; cannot be rebuilt: the rebuild would run gcr.io/kpt-fn/starlark:v0.4.3, which the revision's own Kptfiles do not name (the record chose it): not run")
	})
	t.Run("a function's version changed", func(t *testing.T) {
		w.pushPackage("edge-useast1", "app", forge(t, main, func(f map[string]string) {
			f["Kptfile"] = replaced(t, f["Kptfile"], "set-namespace:v0.4.1", "set-namespace:v0.4.2")
		}))
		w.mustCmd(ExitOK, "verify", "edge-useast1.app.main")
		failing("edge-useast1.app.main", "a function's version", "Kptfile: Kptfile/app pipeline.mutators[0].image: published gcr.io/kpt-fn/set-namespace:v0.4.2, rebuilt gcr.io/kpt-fn/set-namespace:v0.4.1\n")
	})
}

// Issue 60's acceptance: an in-place upgrade that kept a person's edit
// rebuilds, the edit named as the record's (not an unexplained
// difference); the rest of the package is what the new upstream gives.
// The record names the edit (#2): the revision it was found in, its
// digest there, and who approved that revision.
func TestRebuildNamesAPersonsRecordedEdit(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	dir := filepath.Join(t.TempDir(), "draft")
	w.mustCmd(ExitOK, "pull", "core-euwest1.app.packagevariant-1", dir)
	b := readFile(t, filepath.Join(dir, "deployment.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(replaced(t, b, "replicas: 1", "replicas: 5")), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", "core-euwest1.app.packagevariant-1", dir)
	t.Setenv("GIT_COMMITTER_NAME", "Jane Doe") // who approves: git's identity (issue 60 #2)
	t.Setenv("GIT_COMMITTER_EMAIL", "jane@example.com")
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	edited := w.files("core-euwest1.app.packagevariant-1")["deployment.yaml"]
	w.run(ExitOK)
	w.publishFiles(func(f map[string]string) {
		f["deployment.yaml"] = replaced(t, f["deployment.yaml"], "nginx:1.27", "nginx:1.28")
	})
	contains(t, w.run(ExitOK), "created draft core-euwest1.app.packagevariant-2 (upgrade of core-euwest1.app.packagevariant-1 to blueprints.app.v2)")
	got := w.files("core-euwest1.app.packagevariant-2")
	contains(t, got["deployment.yaml"], "replicas: 5", "nginx:1.28")
	// The record names the edit: where it was found, its digest there (the
	// person's file, before the upgrade merged the new image into it), who
	// approved it.
	rec, err := provenance.Read(got)
	if err != nil {
		t.Fatal(err)
	}
	wantDigest := strings.TrimPrefix(variant.Fingerprint(map[string]string{"deployment.yaml": edited}), "sha256:")
	if o := rec.MarkedOrigins()["deployment.yaml"]; o != (provenance.Origin{Words: provenance.OriginEdited, In: "core-euwest1.app.packagevariant-1", Digest: wantDigest, ApprovedBy: "Jane Doe <jane@example.com>"}) {
		t.Fatalf("the record's word for the person's edit: %+v (digest want %s)", o, wantDigest)
	}
	const word = "deployment.yaml (edited by a person in core-euwest1.app.packagevariant-1, approved by Jane Doe <jane@example.com>)"

	out := w.mustCmd(ExitOK, "verify", "--rebuild", "core-euwest1.app.packagevariant-2")
	contains(t, out, "ok   core-euwest1.app.packagevariant-2: ", "; not built by pvkit: "+word,
		"; rebuilt from upstream app/v2 at ", ": the same, except the record's own word for "+word+"\n")
	// The edit is the record's word only for its file: a change elsewhere
	// still fails.
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-2")
	w.run(ExitOK)
	w.pushToBranch("core-euwest1", "app/endpoints.yaml", "db.eu-west1.internal", "db.elsewhere.internal")
	code, out, _ := w.cmd("verify", "--rebuild", "core-euwest1.app.main")
	if code != ExitNotReady {
		t.Fatalf("a change beside the person's edit: exit %d\n%s", code, out)
	}
	contains(t, out, "except the record's own word for "+word, "injected ConfigMap default/eu-west1-endpoints: the package holds data with digest ")
}

// Issue 60's acceptance: a record from before records carried a rebuild's
// inputs still verifies, and says it cannot be rebuilt: counted when every
// revision is checked, a failure when the revision is named.
func TestRebuildOfARecordFromBefore(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.run(ExitOK)
	files := w.files("core-euwest1.app.main")
	files[provenance.FileName] = withoutParameters(t, files[provenance.FileName])
	w.pushPackage("core-euwest1", "app", files)

	out := w.mustCmd(ExitOK, "verify", "core-euwest1.app.main")
	contains(t, out, "ok   core-euwest1.app.main: 6 files as recorded by variant default/app-staging")
	out = w.mustCmd(ExitOK, "verify", "--rebuild")
	contains(t, out, "ok   core-euwest1.app.main: 6 files as recorded by variant default/app-staging (generation 1) from upstream app/v1 at ",
		"; unsigned; cannot be rebuilt: the record was written before pvkit recorded what a rebuild needs (externalParameters.parameters): its content is checked, it cannot be rebuilt\n",
		", 3 rebuilt, 1 cannot be rebuilt")
	code, out, _ := w.cmd("verify", "--rebuild", "core-euwest1.app.main")
	if code != ExitNotReady {
		t.Fatalf("a named revision that cannot be rebuilt: exit %d\n%s", code, out)
	}
	contains(t, out, "FAIL core-euwest1.app.main: ", "; cannot be rebuilt: the record was written before pvkit recorded what a rebuild needs")
}

// withoutParameters is a record as pvkit wrote it before issue 60: its
// statement without externalParameters.parameters.
func withoutParameters(t *testing.T, record string) string {
	t.Helper()
	rec, err := provenance.Read(map[string]string{provenance.FileName: record})
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal(rec.Raw, &st); err != nil {
		t.Fatal(err)
	}
	ext := st["predicate"].(map[string]any)["buildDefinition"].(map[string]any)["externalParameters"].(map[string]any)
	if _, ok := ext["parameters"]; !ok {
		t.Fatalf("no parameters in the record:\n%s", record)
	}
	delete(ext, "parameters")
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const key = "  statement: |\n"
	head, _, ok := strings.Cut(record, key)
	if !ok {
		t.Fatalf("no statement in:\n%s", record)
	}
	out := head + key + "    " + strings.ReplaceAll(string(b), "\n", "\n    ") + "\n"
	if rec, err := provenance.Read(map[string]string{provenance.FileName: out}); err != nil || rec.Statement.Predicate.BuildDefinition.ExternalParameters.Parameters != nil {
		t.Fatalf("the record without parameters: %v\n%s", err, out)
	}
	return out
}

// make demo's finding: a draft upgraded in place recorded no upstream
// commit (its moved lock left the commit out), so its record could not be
// rebuilt. The lock now takes the new revision's commit, and every
// revision of the fleet rebuilds, the drafts upgraded in place among them.
func TestRebuildOfADraftUpgradedInPlace(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	w.mustCmd(ExitOK, "approve", "edge-useast1.app.packagevariant-1")
	w.publishFiles(func(f map[string]string) {
		f["deployment.yaml"] = replaced(t, f["deployment.yaml"], "nginx:1.27", "nginx:1.28")
	})
	w.run(ExitOK)
	contains(t, w.files("core-euwest1.app.packagevariant-1")["Kptfile"], "ref: app/v2\n    commit: "+w.gitRef("blueprints", "app/v2")+"\n")
	out := w.mustCmd(ExitOK, "verify", "--rebuild")
	contains(t, out, "ok   core-euwest1.app.packagevariant-1: 6 files as recorded by variant default/app-staging (generation 1) from upstream app/v2 at ",
		"5 checked, 0 failed, 3 without a record, 5 rebuilt, 0 cannot be rebuilt")
}

// The record names what was injected, not what the cluster held beside
// it: a Team injection point no injector selects, while the cluster has a
// Team, rebuilds with a stand-in Team, and the line says the package's
// word was taken for it.
func TestRebuildSaysWhatItTookFromThePackage(t *testing.T) {
	w := newWS(t)
	staging := readFile(t, filepath.Join(w.in, "app-staging.yaml"))
	w.write("app-staging.yaml", replaced(t, staging, "  - group: example.com\n    kind: Team\n    name: web-team\n", ""))
	w.run(ExitOK)
	contains(t, w.files("core-euwest1.app.packagevariant-1")["Kptfile"], "no resource matched any injection selector for this injection point")
	out := w.mustCmd(ExitOK, "verify", "--rebuild", "core-euwest1.app.packagevariant-1")
	contains(t, out, ": the same (the cluster's other Team objects as the package says it had them)\n")
}
