package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newSSHKey makes an ed25519 key without a passphrase and an
// allowed_signers file naming it; it skips when OpenSSH is not installed
// (.ci/run installs it).
func newSSHKey(t *testing.T, principal string) (key, allowed string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := t.TempDir()
	key = filepath.Join(dir, "key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", principal, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowed = filepath.Join(dir, "allowed_signers")
	if err := os.WriteFile(allowed, []byte(principal+" "+string(pub)), 0o600); err != nil {
		t.Fatal(err)
	}
	return key, allowed
}

// Issue 45's acceptance (rule provenance-record): every draft pvctl run writes has
// a signed record; pvctl verify passes on each, with the allowed signers
// and with OpenSSH alone, and fails naming the file after a one-byte change
// pushed with git to a published package's branch; another key's allowed
// signers fail.
func TestProvenanceLocally(t *testing.T) {
	key, allowed := newSSHKey(t, "pvkit@example.com")
	_, otherAllowed := newSSHKey(t, "someone@example.com")
	w := newWS(t)
	w.mustCmd(ExitOK, "run", "-f", w.in, "--provenance-key", key)
	out := w.mustCmd(ExitOK, "verify", "--allowed-signers", allowed, "--identity", "pvkit@example.com")
	contains(t, out,
		"ok   core-euwest1.app.packagevariant-1: 6 files as recorded by variant default/app-staging (generation 1) from upstream app/v1 at ",
		"; signed by ssh-ed25519 SHA256:", "3 checked, 0 failed, 2 without a record")
	rec := w.files("core-euwest1.app.packagevariant-1")["pvkit-provenance.yaml"]
	contains(t, rec, "config.kubernetes.io/local-config: \"true\"", `"_type": "https://in-toto.io/Statement/v1"`,
		`"predicateType": "https://slsa.dev/provenance/v1"`, `"name": "injected v1 ConfigMap default/eu-west1-endpoints"`, `"id": "https://pvkit.dev/pvctl"`)
	openSSHVerifiesRecord(t, rec, allowed, "pvkit@example.com")

	code, out, _ := w.cmd("verify", "--allowed-signers", otherAllowed)
	if code != ExitNotReady || !strings.Contains(out, "FAIL core-euwest1.app.packagevariant-1: pvkit-provenance.yaml: field data.signature: the signature's key (ssh-ed25519 SHA256:") {
		t.Fatalf("another key's allowed signers: exit %d\n%s", code, out)
	}
	// A second run writes nothing: the records are deterministic.
	before := w.snapshot()
	w.mustCmd(ExitOK, "run", "-f", w.in, "--provenance-key", key)
	if d := diffSnapshots(before, w.snapshot()); d != "" {
		t.Fatalf("a second run wrote:\n%s", d)
	}

	w.mustCmd(ExitOK, "approve", "core-euwest1.app.packagevariant-1")
	w.mustCmd(ExitOK, "verify", "core-euwest1.app.main", "--allowed-signers", allowed)
	w.pushToBranch("core-euwest1", "app/deployment.yaml", "replicas: 1", "replicas: 2")
	code, out, _ = w.cmd("verify")
	if code != ExitNotReady || !strings.Contains(out, "FAIL core-euwest1.app.main: the package differs from its provenance statement (pvkit-provenance.yaml): deployment.yaml (modified)") ||
		!strings.Contains(out, "ok   core-euwest1.app.packagevariant-1") {
		t.Fatalf("after a one-byte change on the branch: exit %d\n%s", code, out)
	}
}

// openSSHVerifiesRecord checks a record's signature with ssh-keygen -Y
// verify, the statement and signature cut out of the file as a person
// would.
func openSSHVerifiesRecord(t *testing.T, record, allowed, principal string) {
	t.Helper()
	block := func(key string) string {
		_, after, ok := strings.Cut(record, "  "+key+": |\n")
		if !ok {
			t.Fatalf("no %s in the record:\n%s", key, record)
		}
		var lines []string
		for _, l := range strings.Split(after, "\n") {
			if !strings.HasPrefix(l, "    ") {
				break
			}
			lines = append(lines, strings.TrimPrefix(l, "    "))
		}
		return strings.Join(lines, "\n") + "\n"
	}
	dir := t.TempDir()
	sig := filepath.Join(dir, "sig")
	if err := os.WriteFile(sig, []byte(block("signature")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", principal, "-n", "pvkit-provenance", "-s", sig)
	cmd.Stdin = strings.NewReader(block("statement"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v: %s", err, out)
	}
}

// Rule require-provenance: a draft whose content a person changed after
// pvkit wrote it is not approved by policy while its variant requires
// provenance, and the wait names the file; put back, it is approved.
func TestRequireProvenanceRefusesAnEditedDraft(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	const name = "core-euwest1.app.packagevariant-1"
	dir := filepath.Join(t.TempDir(), "app")
	w.mustCmd(ExitOK, "pull", name, dir)
	original := readFile(t, filepath.Join(dir, "deployment.yaml"))
	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(strings.Replace(original, "replicas: 1", "replicas: 3", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", name, dir)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "  name: app-staging\n",
		"  name: app-staging\n  annotations:\n    pvkit.dev/require-provenance: \"true\"\n", 1)+
		"  annotations:\n    approval.nephio.org/policy: always\n")
	w.cmd("run", "-f", w.in)
	st := w.mustCmd(ExitOK, "status", "packagevariant/app-staging")
	contains(t, st, "pvkit.dev/require-provenance: the package differs from its provenance statement (pvkit-provenance.yaml): deployment.yaml (modified); approve it by hand")
	if get := w.mustCmd(ExitOK, "get", "--repo", "core-euwest1"); strings.Contains(get, "Published") {
		t.Fatalf("the edited draft was published:\n%s", get)
	}

	if err := os.WriteFile(filepath.Join(dir, "deployment.yaml"), []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCmd(ExitOK, "push", name, dir)
	out := w.run(ExitOK)
	contains(t, out, "approved "+name)
}

// pvctl verify's errors: a typo in a revision's name, a named revision
// without a record, flags that do not go together, an allowed signers
// file missing or naming no key; nothing is written by any of them.
func TestVerifyErrors(t *testing.T) {
	w := newWS(t)
	w.run(ExitOK)
	before := w.snapshot()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("# no keys\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "core-euwest1.app.packagevarient-1"}, ExitNotReady, "package revision core-euwest1.app.packagevarient-1: not found (pvctl get lists them)"},
		{[]string{"verify", "blueprints.app.v1"}, ExitNotReady, "FAIL blueprints.app.v1: the package has no provenance record (pvkit-provenance.yaml)"},
		{[]string{"verify", "--identity", "a@b"}, ExitUsage, "--identity goes with --allowed-signers"},
		{[]string{"verify", "--allowed-signers", filepath.Join(dir, "nope")}, ExitUsage, "--allowed-signers: open "},
		{[]string{"verify", "--allowed-signers", empty}, ExitUsage, "allowed signers: no key"},
		{[]string{"run", "-f", w.in, "--provenance-key", filepath.Join(dir, "nokey")}, ExitUsage, "--provenance-key: reading the signing key"},
	} {
		code, out, errs := w.cmd(c.args[0], c.args[1:]...)
		if code != c.code || !strings.Contains(out+errs, c.want) {
			t.Errorf("pvctl %v: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, c.want, out, errs)
		}
	}
	if d := diffSnapshots(before, w.snapshot()); d != "" {
		t.Fatalf("an error wrote:\n%s", d)
	}
}

// Issue 62 #2: plan --diff of a signed fleet without the key does not show
// each signature removed: the new record's signature reads that the writer
// signs it again; with the key, no such note.
func TestPlanDiffOfASignedRecord(t *testing.T) {
	key, _ := newSSHKey(t, "pvkit@example.com")
	w := newWS(t)
	w.mustCmd(ExitOK, "run", "-f", w.in, "--provenance-key", key)
	w.write("app-staging.yaml", strings.Replace(readFile(t, filepath.Join(w.in, "app-staging.yaml")), "region: eu-west1", "region: eu-west1\n      tier: canary", 1))
	out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff")
	contains(t, out, "+  signature: "+unsignedNoteText, "-  signature: |")
	if out := w.mustCmd(ExitChanges, "plan", "-f", w.in, "--diff", "--provenance-key", key); strings.Contains(out, unsignedNoteText) {
		t.Fatalf("a plan with the key says it has none:\n%s", out)
	}
}

const unsignedNoteText = "(signed again when written with --provenance-key; this plan has no key)"
