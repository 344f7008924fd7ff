package sshsig

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func TestSignVerifiesHereAndWithOpenSSH(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]any{"ed25519": edKey, "rsa": rsaKey} {
		t.Run(name, func(t *testing.T) {
			signer, err := ssh.NewSignerFromKey(raw)
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte("the statement\n")
			sig, err := Sign(msg, signer, "pvkit-test")
			if err != nil {
				t.Fatal(err)
			}
			allowed := []byte("ci@pvkit.dev " + string(ssh.MarshalAuthorizedKey(signer.PublicKey())))
			got, err := Verify(msg, sig, allowed, "ci@pvkit.dev", "pvkit-test")
			if err != nil || got != Fingerprint(signer.PublicKey()) {
				t.Fatalf("Verify = %q, %v; want %q", got, err, Fingerprint(signer.PublicKey()))
			}
			if _, err := Verify([]byte("the statement!\n"), sig, allowed, "", "pvkit-test"); err == nil || !strings.Contains(err.Error(), "does not match") {
				t.Errorf("a changed message: %v", err)
			}
			if _, err := Verify(msg, sig, allowed, "", "pvkit-release"); err == nil || !strings.Contains(err.Error(), `was made for "pvkit-test", not "pvkit-release"`) {
				t.Errorf("another namespace: %v", err)
			}
			openSSHVerifies(t, msg, sig, allowed)
		})
	}
}

// openSSHVerifies checks a signature with ssh-keygen -Y verify, where
// OpenSSH is installed (.ci/run installs it).
func openSSHVerifies(t *testing.T, msg, sig, allowed []byte) {
	if out, err := sshKeygenVerify(t, needSSHKeygen(t), msg, sig, allowed, "ci@pvkit.dev", "pvkit-test"); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v\n%s", err, out)
	}
}

func TestLoadKeyErrors(t *testing.T) {
	d := t.TempDir()
	if _, err := LoadKey(filepath.Join(d, "none")); err == nil || !strings.Contains(err.Error(), "reading the signing key") {
		t.Errorf("missing: %v", err)
	}
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(k, "", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d, "locked")
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(p); err == nil || !strings.Contains(err.Error(), "has a passphrase") || !strings.Contains(err.Error(), p) {
		t.Errorf("passphrase: %v", err)
	}
	if err := os.WriteFile(p, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(p); err == nil || !strings.Contains(err.Error(), "the signing key "+p) {
		t.Errorf("garbage: %v", err)
	}
	block, _ = ssh.MarshalPrivateKey(k, "")
	os.WriteFile(p, pem.EncodeToMemory(block), 0o600)
	if s, err := LoadKey(p); err != nil || s.PublicKey().Type() != ssh.KeyAlgoED25519 {
		t.Errorf("a good key: %v", err)
	}
	if err := CheckAllowedSigners([]byte("# nothing\n")); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Errorf("empty allowed signers: %v", err)
	}
	if err := CheckAllowedSigners([]byte("a@b ssh-ed25519 AAAA-not-base64\n")); err == nil || !strings.Contains(err.Error(), "allowed signers, line 1") {
		t.Errorf("bad allowed signers: %v", err)
	}
	if _, err := Sign(nil, nil, ""); err == nil || !strings.Contains(err.Error(), "needs a namespace") {
		t.Errorf("no namespace: %v", err)
	}
}
