package provenance

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pvkit/pvkit/internal/sshsig"
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"golang.org/x/crypto/ssh"
)

const kptfileText = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
upstreamLock:
  type: git
  git:
    repo: https://git.example/blueprints
    directory: app
    ref: app/v3
    commit: 0123456789abcdef0123456789abcdef01234567
pipeline:
  mutators:
  - image: ghcr.io/kptdev/krm-functions-catalog/set-namespace:v0.4.1
    configMap:
      namespace: prod
  - name: labels
    image: ghcr.io/kptdev/krm-functions-catalog/set-labels@sha256:aaaa
    configPath: labels.yaml
`

func pkg() map[string]string {
	return map[string]string{
		"Kptfile":       kptfileText,
		"labels.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: labels\ndata:\n  team: a\n",
		"deploy.yaml":   "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app # the app\nspec:\n  replicas: 3\n",
		"settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n    kpt.dev/config-injection: required\n    kpt.dev/injected-resource: prod-settings\ndata:\n  size: large\n",
		"README.md":     "# app\n",
	}
}

func inputs() Inputs {
	v := &pv.PackageVariant{Metadata: meta.ObjectMeta{Namespace: "team-a", Name: "app-prod", UID: "uid-1"},
		Spec: pv.PackageVariantSpec{Upstream: &pv.Upstream{Repo: "blueprints", Package: "app", Revision: 3},
			Downstream: &pv.Downstream{Repo: "deployments", Package: "app-prod"}}}
	return Inputs{Variant: v, Generation: 7, Builder: "pvctl", Version: "v0.1.0-test"}
}

func TestStampRecordsWhereThePackageCameFrom(t *testing.T) {
	files, err := Stamp(pkg(), inputs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pkg()[FileName]; ok || files[FileName] == "" {
		t.Fatal("Stamp wrote no record")
	}
	res, err := Check(files, nil)
	if err != nil {
		t.Fatalf("Check of a stamped package: %v", err)
	}
	st := res.Record.Statement
	var names []string
	for _, s := range st.Subject {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "Kptfile,README.md,deploy.yaml,labels.yaml,settings.yaml" {
		t.Errorf("subject = %s", got)
	}
	bd := st.Predicate.BuildDefinition
	if v := bd.ExternalParameters.Variant; v != (VariantRef{Namespace: "team-a", Name: "app-prod", UID: "uid-1", Generation: 7}) {
		t.Errorf("variant = %+v", v)
	}
	// What a rebuild needs (issue 60 #1): the variant's spec as the chain
	// read it.
	if p := bd.ExternalParameters.Parameters; p == nil || !reflect.DeepEqual(*p, inputs().Variant.Spec) {
		t.Errorf("parameters = %+v, want the variant's spec", p)
	}
	if u := bd.ExternalParameters.Upstream; u["revision"] != "3" || u["repo"] != "blueprints" {
		t.Errorf("upstream = %v", u)
	}
	if len(bd.ResolvedDependencies) != 2 {
		t.Fatalf("dependencies = %+v", bd.ResolvedDependencies)
	}
	up, inj := bd.ResolvedDependencies[0], bd.ResolvedDependencies[1]
	if up.Digest["gitCommit"] != "0123456789abcdef0123456789abcdef01234567" || up.URI != "https://git.example/blueprints" || up.Annotations["ref"] != "app/v3" {
		t.Errorf("upstream dependency = %+v", up)
	}
	if inj.Name != "injected v1 ConfigMap team-a/prod-settings" || inj.Annotations["point"] != "settings" || len(inj.Digest[DigestAlgorithm]) != 64 {
		t.Errorf("injected = %+v", inj)
	}
	fns := bd.InternalParameters.Functions
	var fnames []string
	for _, f := range fns {
		fnames = append(fnames, f.Stage+"/"+f.Name)
	}
	if got := strings.Join(fnames, ","); got != "pvkit/package-context,pvkit/pipeline-prepend,pvkit/config-inject,mutators/mutators[0],mutators/labels" {
		t.Errorf("functions = %s", got)
	}
	if fns[0].Builtin != "pvkit v0.1.0-test" || fns[4].Image != "ghcr.io/kptdev/krm-functions-catalog/set-labels@sha256:aaaa" || fns[4].ConfigDigest[DigestAlgorithm] == "" || fns[3].ConfigDigest[DigestAlgorithm] == "" {
		t.Errorf("functions = %+v", fns)
	}
	if b := st.Predicate.RunDetails.Builder; b.ID != "https://pvkit.dev/pvctl" || b.Version["pvkit"] != "v0.1.0-test" {
		t.Errorf("builder = %+v", b)
	}
	again, _ := Stamp(files, inputs(), nil)
	if again[FileName] != files[FileName] {
		t.Errorf("stamping again changed the record (not deterministic, or the record is in its own subject):\n%s\n%s", files[FileName], again[FileName])
	}
}

func TestCheckNamesWhatChanged(t *testing.T) {
	stamped, err := Stamp(pkg(), inputs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(map[string]string)) map[string]string {
		out := map[string]string{}
		for k, v := range stamped {
			out[k] = v
		}
		f(out)
		return out
	}
	if _, err := Check(edit(func(m map[string]string) {
		m["deploy.yaml"] = strings.Replace(m["deploy.yaml"], "# the app", "# renamed comment", 1)
	}), nil); err != nil {
		t.Errorf("a comment is no change by meaning: %v", err)
	}
	for name, tc := range map[string]struct {
		f    func(map[string]string)
		want string
	}{
		"one byte": {func(m map[string]string) {
			m["deploy.yaml"] = strings.Replace(m["deploy.yaml"], "replicas: 3", "replicas: 4", 1)
		}, "deploy.yaml (modified)"},
		"added":   {func(m map[string]string) { m["extra.yaml"] = "a: 1\n" }, "extra.yaml (added)"},
		"removed": {func(m map[string]string) { delete(m, "README.md") }, "README.md (removed)"},
	} {
		_, err := Check(edit(tc.f), nil)
		var ce *ContentError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), FileName) {
			t.Errorf("%s: %v, want a ContentError naming %s", name, err, tc.want)
		}
	}
}

func TestSignedStatements(t *testing.T) {
	key, other := newKey(t), newKey(t)
	sign := func(b []byte) ([]byte, error) { return sshsig.Sign(b, key, SignatureNamespace) }
	allowed := []byte("pvkit@example " + string(ssh.MarshalAuthorizedKey(key.PublicKey())))
	verify := func(stmt, sig []byte) (string, error) {
		return sshsig.Verify(stmt, sig, allowed, "", SignatureNamespace)
	}
	files, err := Stamp(pkg(), inputs(), sign)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Check(files, verify)
	if err != nil || res.Signer != sshsig.Fingerprint(key.PublicKey()) {
		t.Fatalf("Check = %+v, %v", res, err)
	}
	// A function of the pipeline that rewrites every object (kyaml's
	// format, a namespace added) leaves the statement's bytes alone.
	items, err := krm.FilesToItems(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if err := it.SetNamespace("prod"); err != nil {
			t.Fatal(err)
		}
	}
	rendered, err := krm.ItemsToFiles(items, files)
	if err != nil {
		t.Fatal(err)
	}
	if rendered[FileName] == files[FileName] {
		t.Fatal("the test's render changed nothing")
	}
	if _, err := Check(withRecordOf(rendered, files), verify); err != nil {
		t.Errorf("a rendered record: %v", err)
	}
	byOther, _ := Stamp(pkg(), inputs(), func(b []byte) ([]byte, error) { return sshsig.Sign(b, other, SignatureNamespace) })
	if _, err := Check(byOther, verify); err == nil || !strings.Contains(err.Error(), "is not an allowed signer") || !strings.Contains(err.Error(), "field data.signature") {
		t.Errorf("another key: %v", err)
	}
	unsigned, _ := Stamp(pkg(), inputs(), nil)
	if _, err := Check(unsigned, verify); err == nil || !strings.Contains(err.Error(), "is not signed") {
		t.Errorf("unsigned: %v", err)
	}
	// The statement rewritten to match an edit: the signature no longer fits.
	forged := map[string]string{}
	for k, v := range files {
		forged[k] = v
	}
	forged["deploy.yaml"] = strings.Replace(forged["deploy.yaml"], "replicas: 3", "replicas: 4", 1)
	restamped, _ := Stamp(forged, inputs(), nil)
	sig, _ := Read(files)
	forged[FileName] = record(mustRead(t, restamped).Raw, sig.Signature)
	if _, err := Check(forged, verify); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a forged statement: %v", err)
	}
	if _, err := Stamp(pkg(), inputs(), func([]byte) ([]byte, error) { return nil, errors.New("no agent") }); err == nil || !strings.Contains(err.Error(), "signing the provenance statement: no agent") {
		t.Errorf("a signer that fails: %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	good, _ := Stamp(pkg(), inputs(), nil)
	for name, tc := range map[string]struct{ record, want string }{
		"not yaml":        {"a: [", FileName + ": "},
		"another kind":    {"apiVersion: v1\nkind: Secret\nmetadata:\n  name: pvkit-provenance\n", `not the ConfigMap pvkit-provenance (found v1 Secret "pvkit-provenance")`},
		"no statement":    {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\ndata: {}\n", "field data.statement is missing or empty"},
		"not json":        {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\ndata:\n  statement: nope\n", "field data.statement: invalid character"},
		"unknown field":   {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\ndata:\n  statement: '{\"_type\":\"x\",\"extra\":1}'\n", `unknown field "extra"`},
		"other statement": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\ndata:\n  statement: '{\"_type\":\"https://in-toto.io/Statement/v0.1\"}'\n", "not pvkit's statement"},
		"aliases":         {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\n" + laughs() + "data:\n  statement: x\n", FileName + ": its YAML aliases expand"},
		"too big":         {strings.Repeat("#", maxStatement+1), "more than a record may have"},
	} {
		files := map[string]string{}
		for k, v := range good {
			files[k] = v
		}
		files[FileName] = tc.record
		if _, err := Check(files, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if _, err := Check(pkg(), nil); !errors.Is(err, ErrNoRecord) {
		t.Errorf("no record: %v", err)
	}
	if _, err := Build(pkg(), Inputs{}); err == nil || !strings.Contains(err.Error(), "no variant") {
		t.Errorf("no variant: %v", err)
	}
}

func newKey(t *testing.T) ssh.Signer {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	s, err := ssh.NewSignerFromKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustRead(t *testing.T, files map[string]string) *Record {
	r, err := Read(files)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withRecordOf is files with the record of rendered and everything else
// of files unchanged except the namespace the render added (which changes
// the objects' meaning): the record's render alone is under test.
func withRecordOf(rendered, files map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		out[k] = v
	}
	out[FileName] = rendered[FileName]
	return out
}

// laughs is a billion laughs: nine levels of ten aliases each.
func laughs() string {
	var b strings.Builder
	b.WriteString("l0: &l0 \"" + strings.Repeat("ha", 50) + "\"\n")
	for i := 1; i < 10; i++ {
		b.WriteString(fmt.Sprintf("l%d: &l%d [", i, i))
		for j := 0; j < 10; j++ {
			b.WriteString(fmt.Sprintf("*l%d,", i-1))
		}
		b.WriteString("x]\n")
	}
	return b.String()
}

// Issue 55 #2, #3: a record names the revision it was written for, marks
// the files pvkit did not build, and tells a person's files: those it
// marks and those changed or added since; removed files are none of them.
func TestRecordNamesItsRevisionAndAPersonsFiles(t *testing.T) {
	in := inputs()
	in.Revision = &RevisionRef{Name: "deployments.app-prod.packagevariant-2", Repository: "deployments", Package: "app-prod", Workspace: "packagevariant-2"}
	in.Origins = Origins{"README.md": {Words: OriginEdited}, "gone.yaml": {Words: OriginEdited}}
	files, err := Stamp(pkg(), in, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Read(files)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.For("deployments.app-prod.packagevariant-2") || rec.For("deployments.app-prod.packagevariant-1") {
		t.Fatalf("the record names %+v", rec.Statement.Predicate.BuildDefinition.ExternalParameters.Revision)
	}
	if got := rec.Marked(); len(got) != 1 || got["README.md"] != OriginEdited {
		t.Fatalf("marked: %v (a path not in the package is left out)", got)
	}
	if !strings.Contains(string(rec.Raw), `"pvkit.dev/origin": "edited by a person"`) {
		t.Fatalf("the statement does not say it:\n%s", rec.Raw)
	}
	files["deploy.yaml"] = strings.Replace(files["deploy.yaml"], "replicas: 3", "replicas: 5", 1)
	files["extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n"
	delete(files, "labels.yaml")
	got, known := PersonsFiles(files)
	want := map[string]string{"README.md": OriginEdited, "deploy.yaml": OriginEdited, "extra.yaml": OriginEdited}
	if !known || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("PersonsFiles = %v, %v; want %v", got, known, want)
	}
	delete(files, FileName)
	if got, known := PersonsFiles(files); known || got != nil {
		t.Fatalf("without a record: %v, %v", got, known)
	}
	// A record of before this change names no revision: For is false.
	old, err := Stamp(pkg(), inputs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := Read(old); err != nil || rec.For("deployments.app-prod.packagevariant-2") {
		t.Fatalf("a record naming no revision: %v", err)
	}
}

// FuzzRecord: any record file is read without a panic (a record is a file
// of the package, anyone who may edit the package writes it); one that
// reads answers every question asked of it, and a record Stamp wrote
// reads back as written.
func FuzzRecord(f *testing.F) {
	in := inputs()
	in.Revision = &RevisionRef{Name: "d.app.v1", Repository: "d", Package: "app"}
	in.Origins = Origins{"README.md": {Words: OriginEdited}}
	stamped, err := Stamp(pkg(), in, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(stamped[FileName])
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pvkit-provenance\ndata:\n  statement: '{}'\n")
	f.Add("a: &a [*a, *a]\n")
	f.Fuzz(func(t *testing.T, text string) {
		files := pkg()
		files[FileName] = text
		rec, err := Read(files)
		if err != nil {
			if _, known := PersonsFiles(files); known {
				t.Fatalf("PersonsFiles read a record Read refuses: %v", err)
			}
			return
		}
		rec.Differences(files)
		rec.Marked()
		rec.For("d.app.v1")
		_ = rec.Describes(RevisionRef{Name: "d.app.v1", Repository: "d", Package: "app"}, false)
		if _, known := PersonsFiles(files); !known {
			t.Fatal("PersonsFiles refused a record Read takes")
		}
		if text == stamped[FileName] && (!rec.For("d.app.v1") || rec.Marked()["README.md"] != OriginEdited) {
			t.Fatal("a stamped record does not read back")
		}
	})
}

// Issue 60 #1: a record written before pvkit recorded a rebuild's inputs
// (no parameters) still reads and checks; it says it has none.
func TestRecordWithoutParametersStillChecks(t *testing.T) {
	st, err := Build(pkg(), inputs())
	if err != nil {
		t.Fatal(err)
	}
	st.Predicate.BuildDefinition.ExternalParameters.Parameters = nil
	stmt, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stmt), `"parameters"`) {
		t.Fatalf("a statement without parameters names them: %s", stmt)
	}
	files := pkg()
	files[FileName] = record(stmt, nil)
	res, err := Check(files, nil)
	if err != nil {
		t.Fatalf("Check of a record without parameters: %v", err)
	}
	if p := res.Record.Statement.Predicate.BuildDefinition.ExternalParameters.Parameters; p != nil {
		t.Fatalf("parameters read from a record without them: %+v", p)
	}
}
