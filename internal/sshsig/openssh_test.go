package sshsig

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha512"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// signWithAlgorithm is Sign with the signature algorithm chosen (ssh-rsa:
// SHA-1, which `ssh-keygen -Y sign` never makes and OpenSSH refuses).
func signWithAlgorithm(t *testing.T, message []byte, key ssh.AlgorithmSigner, algorithm, namespace string) []byte {
	t.Helper()
	h := sha512.Sum512(message)
	var magic [6]byte
	copy(magic[:], sshsigMagic)
	signed := ssh.Marshal(sshsigSigned{Magic: magic, Namespace: namespace, HashAlg: "sha512", Hash: h[:]})
	sig, err := key.SignWithAlgorithm(rand.Reader, signed, algorithm)
	if err != nil {
		t.Fatal(err)
	}
	return armor(ssh.Marshal(sshsigBlob{Magic: magic, Version: 1, PublicKey: key.PublicKey().Marshal(), Namespace: namespace, HashAlg: "sha512", Signature: ssh.Marshal(sig)}))
}

// needSSHKeygen is ssh-keygen's path: a test that needs it skips where it
// is not installed, and fails in CI (.ci/run installs it), where a skip
// would hide a difference from OpenSSH.
func needSSHKeygen(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ssh-keygen")
	if err != nil && os.Getenv("PVKIT_CI_START") != "" {
		t.Fatal("ssh-keygen is not installed in CI: the comparison with OpenSSH cannot run")
	}
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	return p
}

// sshKeygenVerify runs `ssh-keygen -Y verify` on a message, a signature
// and an allowed_signers file, and returns what it said.
func sshKeygenVerify(t *testing.T, keygen string, msg, sig, allowed []byte, identity, namespace string) ([]byte, error) {
	t.Helper()
	d := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(d, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cmd := exec.Command(keygen, "-Y", "verify", "-f", write("allowed", allowed), "-I", identity, "-n", namespace, "-s", write("sig", sig))
	cmd.Stdin = strings.NewReader(string(msg))
	return cmd.CombinedOutput()
}

// Issue 55 #7: internal/sshsig checks as `ssh-keygen -Y verify` checks,
// run both ways over the same files: it accepted ssh-rsa (SHA-1)
// signatures and ignored valid-before, valid-after, cert-authority and
// negated principals, which OpenSSH refuses. Each case says what both
// must answer, so a case where both are wrong fails too.
func TestVerifiesAsOpenSSHDoes(t *testing.T) {
	keygen := needSSHKeygen(t)
	_, edRaw, _ := ed25519.GenerateKey(rand.Reader)
	ed, _ := ssh.NewSignerFromKey(edRaw)
	rsaRaw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsaSigner, _ := ssh.NewSignerFromKey(rsaRaw)
	rs := rsaSigner.(ssh.AlgorithmSigner)
	const ns = "pvkit-test"
	msg := []byte("the statement\n")
	edSig, err := Sign(msg, ed, ns)
	if err != nil {
		t.Fatal(err)
	}
	edKey := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ed.PublicKey())))
	rsaKey := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(rs.PublicKey())))
	past, future := time.Now().UTC().AddDate(-1, 0, 0).Format("20060102")+"Z", time.Now().UTC().AddDate(1, 0, 0).Format("20060102")+"Z"
	for _, c := range []struct {
		name, allowed, identity string
		sig                     []byte
		ok                      bool
		why                     string // pvkit's refusal, in part
	}{
		{"a plain key", "alice@example.com " + edKey, "alice@example.com", edSig, true, ""},
		{"rsa-sha2-512", "alice@example.com " + rsaKey, "alice@example.com", signWithAlgorithm(t, msg, rs, ssh.KeyAlgoRSASHA512, ns), true, ""},
		{"rsa-sha2-256", "alice@example.com " + rsaKey, "alice@example.com", signWithAlgorithm(t, msg, rs, ssh.KeyAlgoRSASHA256, ns), true, ""},
		{"ssh-rsa is SHA-1", "alice@example.com " + rsaKey, "alice@example.com", signWithAlgorithm(t, msg, rs, ssh.KeyAlgoRSA, ns), false, "the signature's RSA algorithm is ssh-rsa"},
		{"expired", "alice@example.com valid-before=\"" + past + "\" " + edKey, "alice@example.com", edSig, false, "the key expired at"},
		{"not yet valid", "alice@example.com valid-after=\"" + future + "\" " + edKey, "alice@example.com", edSig, false, "the key is not valid before"},
		{"within its validity", "alice@example.com valid-after=\"" + past + "\",valid-before=\"" + future + "\" " + edKey, "alice@example.com", edSig, true, ""},
		{"a certificate authority is no signer", "alice@example.com cert-authority " + edKey, "alice@example.com", edSig, false, "names the key as a certificate authority"},
		{"a negated principal", "*,!mallory@example.com " + edKey, "mallory@example.com", edSig, false, "is not an allowed signer"},
		{"a negated principal, another identity", "*,!mallory@example.com " + edKey, "alice@example.com", edSig, true, ""},
		{"a pattern over a slash", "* " + edKey, "team/alice", edSig, true, ""},
		{"a pattern with a class is no class", "[a]lice@example.com " + edKey, "alice@example.com", edSig, false, "is not an allowed signer"},
		{"another namespace", "alice@example.com namespaces=\"git\" " + edKey, "alice@example.com", edSig, false, `the key may sign "git", not "pvkit-test"`},
		{"a namespace pattern", "alice@example.com namespaces=\"git,pvkit-*\" " + edKey, "alice@example.com", edSig, true, ""},
		{"a later line allows it", "alice@example.com namespaces=\"git\" " + edKey + "\nalice@example.com " + edKey, "alice@example.com", edSig, true, ""},
		{"an unknown option", "alice@example.com no-touch-required " + edKey, "alice@example.com", edSig, false, `unknown option "no-touch-required"`},
		{"an option twice", "alice@example.com namespaces=\"a\",namespaces=\"b\" " + edKey, "alice@example.com", edSig, false, "is given twice"},
		{"valid-before before valid-after", "alice@example.com valid-after=\"" + future + "\",valid-before=\"" + past + "\" " + edKey, "alice@example.com", edSig, false, "valid-before is not after valid-after"},
		{"a time that does not parse", "alice@example.com valid-before=\"tomorrow\" " + edKey, "alice@example.com", edSig, false, `option valid-before="tomorrow"`},
		{"another principal", "bob@example.com " + edKey, "alice@example.com", edSig, false, "is not an allowed signer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(msg, c.sig, []byte(c.allowed+"\n"), c.identity, ns)
			if got := err == nil; got != c.ok || (!c.ok && !strings.Contains(err.Error(), c.why)) {
				t.Errorf("pvkit: %v; want ok=%v (%s)", err, c.ok, c.why)
			}
			out, err := sshKeygenVerify(t, keygen, msg, c.sig, []byte(c.allowed+"\n"), c.identity, ns)
			if got := err == nil; got != c.ok {
				t.Errorf("OpenSSH: %v; want ok=%v\n%s", err, c.ok, out)
			}
		})
	}
}

// FuzzAllowedSigners: any allowed_signers file is parsed without a panic,
// and one CheckAllowedSigners takes is one Verify reads alike (a
// signature then checked against it refused or accepted, never a panic);
// patterns match themselves.
func FuzzAllowedSigners(f *testing.F) {
	_, edRaw, _ := ed25519.GenerateKey(rand.Reader)
	ed, _ := ssh.NewSignerFromKey(edRaw)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(ed.PublicKey())))
	sig, err := Sign([]byte("m"), ed, "n")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"a@b " + key,
		"*,!m@b namespaces=\"n,x\",valid-after=\"20200101Z\",valid-before=\"20990101120000UTC\" " + key,
		"\"a b\" cert-authority " + key,
		"# comment\n\na@b " + key + " comment",
		"a@b valid-before=\"2020\" " + key,
		"a@b namespaces=\"\" " + key,
	} {
		f.Add(s, "a@b")
	}
	f.Fuzz(func(t *testing.T, file, identity string) {
		lines, perr := parseAllowedSigners([]byte(file))
		cerr := CheckAllowedSigners([]byte(file))
		if cerr == nil && perr != nil {
			t.Fatalf("CheckAllowedSigners took a file parseAllowedSigners refuses: %v", perr)
		}
		_, verr := VerifyAt([]byte("m"), sig, []byte(file), identity, "n", time.Unix(1_800_000_000, 0))
		if perr != nil && verr == nil {
			t.Fatalf("Verify accepted a file that does not parse: %v", perr)
		}
		for _, l := range lines {
			for _, p := range strings.Split(l.principals, ",") {
				if !strings.ContainsAny(p, "*?!") && !matchPattern(p, p) {
					t.Fatalf("%q does not match itself", p)
				}
			}
		}
	})
}
