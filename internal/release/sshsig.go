package release

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"path"
	"strings"

	"golang.org/x/crypto/ssh"
)

// A release is signed as git signs commits and OpenSSH signs files:
// `ssh-keygen -Y sign -n pvkit-release` over checksums.txt (which names
// every other file with its sha256), the signature in checksums.txt.sig.
// Anyone verifies it offline with OpenSSH alone (`ssh-keygen -Y verify`)
// or with `pvctl verify-release`, which reads the same allowed_signers
// file; this is the verifying half of OpenSSH's PROTOCOL.sshsig, on
// golang.org/x/crypto/ssh's keys and signatures.

// SignatureNamespace is the namespace a release's signature is made in:
// a signature made for anything else (a git commit, a file) does not
// verify as a release's.
const SignatureNamespace = "pvkit-release"

const sshsigMagic = "SSHSIG"

type sshsigBlob struct {
	Magic     [6]byte
	Version   uint32
	PublicKey []byte
	Namespace string
	Reserved  string
	HashAlg   string
	Signature []byte
}

type sshsigSigned struct {
	Magic     [6]byte
	Namespace string
	Reserved  string
	HashAlg   string
	Hash      []byte
}

// VerifySSHSig checks an armored SSH signature of message made in
// namespace by a key allowedSigners lets identity use (OpenSSH's
// allowed_signers format: principals, options, key; identity "": any
// principal of the file), and returns the key's fingerprint.
func VerifySSHSig(message, armored, allowedSigners []byte, identity, namespace string) (string, error) {
	blob, err := dearmor(armored)
	if err != nil {
		return "", err
	}
	var sig sshsigBlob
	if err := ssh.Unmarshal(blob, &sig); err != nil {
		return "", fmt.Errorf("the signature does not parse: %w", err)
	}
	if string(sig.Magic[:]) != sshsigMagic || sig.Version != 1 {
		return "", fmt.Errorf("the signature is not an SSH signature of version 1")
	}
	if sig.Namespace != namespace {
		return "", fmt.Errorf("the signature was made for %q, not %q", sig.Namespace, namespace)
	}
	pub, err := ssh.ParsePublicKey(sig.PublicKey)
	if err != nil {
		return "", fmt.Errorf("the signature's key: %w", err)
	}
	if err := allowed(allowedSigners, pub, identity, namespace); err != nil {
		return "", err
	}
	var h hash.Hash
	switch sig.HashAlg {
	case "sha512":
		h = sha512.New()
	case "sha256":
		h = sha256.New()
	default:
		return "", fmt.Errorf("the signature's hash %q is neither sha256 nor sha512", sig.HashAlg)
	}
	h.Write(message)
	var magic [6]byte
	copy(magic[:], sshsigMagic)
	signed := ssh.Marshal(sshsigSigned{Magic: magic, Namespace: sig.Namespace, Reserved: sig.Reserved, HashAlg: sig.HashAlg, Hash: h.Sum(nil)})
	var s ssh.Signature
	if err := ssh.Unmarshal(sig.Signature, &s); err != nil {
		return "", fmt.Errorf("the signature's value does not parse: %w", err)
	}
	if err := pub.Verify(signed, &s); err != nil {
		return "", fmt.Errorf("the signature does not match the file (%s %s): %w", pub.Type(), ssh.FingerprintSHA256(pub), err)
	}
	return pub.Type() + " " + ssh.FingerprintSHA256(pub), nil
}

// dearmor is the blob of an armored SSH signature.
func dearmor(armored []byte) ([]byte, error) {
	const begin, end = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
	s := strings.TrimSpace(string(armored))
	if !strings.HasPrefix(s, begin) || !strings.HasSuffix(s, end) {
		return nil, fmt.Errorf("not an armored SSH signature (%s ... %s)", begin, end)
	}
	body := strings.Join(strings.Fields(s[len(begin):len(s)-len(end)]), "")
	b, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, fmt.Errorf("the signature's base64: %w", err)
	}
	return b, nil
}

// allowed checks that an allowed_signers line names identity (a pattern
// list, as OpenSSH matches them) with key pub, for namespace when the line
// restricts namespaces.
func allowed(allowedSigners []byte, pub ssh.PublicKey, identity, namespace string) error {
	for n, line := range strings.Split(string(allowedSigners), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		principals, rest, _ := strings.Cut(line, " ")
		key, _, options, _, err := ssh.ParseAuthorizedKey([]byte(strings.TrimSpace(rest)))
		if err != nil {
			return fmt.Errorf("allowed signers, line %d: %w", n+1, err)
		}
		if !bytes.Equal(key.Marshal(), pub.Marshal()) || (identity != "" && !matchPrincipal(principals, identity)) {
			continue
		}
		for _, o := range options {
			if k, v, _ := strings.Cut(o, "="); strings.EqualFold(k, "namespaces") && !matchPrincipal(strings.Trim(v, `"`), namespace) {
				return fmt.Errorf("allowed signers, line %d: the key may sign %s, not %q", n+1, v, namespace)
			}
		}
		return nil
	}
	return fmt.Errorf("the signature's key (%s %s) is not an allowed signer for %q", pub.Type(), ssh.FingerprintSHA256(pub), identity)
}

// matchPrincipal matches s against a comma-separated list of OpenSSH
// patterns (* and ?).
func matchPrincipal(patterns, s string) bool {
	for _, p := range strings.Split(patterns, ",") {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}
