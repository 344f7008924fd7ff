// Package sshsig signs and verifies as OpenSSH does (PROTOCOL.sshsig,
// `ssh-keygen -Y sign|verify`), on golang.org/x/crypto/ssh's keys: the
// message's sha512 signed in a namespace, armored, and checked against an
// allowed_signers file. A release's checksums (internal/release) and a
// package's provenance statement (pkg/provenance) are signed this way, so
// that anyone checks either offline with OpenSSH alone, as git checks a
// signed commit; the controller, FROM scratch, signs without ssh-keygen.
package sshsig

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

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

// Verify checks an armored SSH signature of message made in
// namespace by a key allowedSigners lets identity use (OpenSSH's
// allowed_signers format: principals, options, key; identity "": any
// principal of the file), now, and returns the key's fingerprint. It
// refuses what `ssh-keygen -Y verify` refuses: an RSA
// signature made with SHA-1 (ssh-rsa), a key whose valid-after or
// valid-before excludes the time of the check, a principal a negated
// pattern excludes, a plain key a cert-authority line names; and what it
// cannot check as OpenSSH does, naming it: a certificate.
func Verify(message, armored, allowedSigners []byte, identity, namespace string) (string, error) {
	return VerifyAt(message, armored, allowedSigners, identity, namespace, time.Now())
}

// VerifyAt is Verify at a given time (ssh-keygen -Y verify -Overify-time).
func VerifyAt(message, armored, allowedSigners []byte, identity, namespace string, at time.Time) (string, error) {
	blob, err := dearmor(armored)
	if err != nil {
		return "", err
	}
	var sig sshsigBlob
	if err := ssh.Unmarshal(blob, &sig); err != nil {
		return "", fmt.Errorf("the signature does not parse: %w", err)
	}
	if string(sig.Magic[:]) != sshsigMagic || sig.Version > 1 {
		return "", fmt.Errorf("the signature is not an SSH signature of version 1")
	}
	if sig.Namespace != namespace {
		return "", fmt.Errorf("the signature was made for %q, not %q", sig.Namespace, namespace)
	}
	pub, err := ssh.ParsePublicKey(sig.PublicKey)
	if err != nil {
		return "", fmt.Errorf("the signature's key: %w", err)
	}
	if _, cert := pub.(*ssh.Certificate); cert {
		return "", fmt.Errorf("the signature's key is a certificate (%s): pvkit checks plain keys only (ssh-keygen -Y verify checks certificates)", pub.Type())
	}
	lines, err := parseAllowedSigners(allowedSigners)
	if err != nil {
		return "", err
	}
	if err := allowed(lines, pub, identity, namespace, at); err != nil {
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
	if pub.Type() == ssh.KeyAlgoRSA && s.Format != ssh.KeyAlgoRSASHA512 && s.Format != ssh.KeyAlgoRSASHA256 {
		return "", fmt.Errorf("the signature's RSA algorithm is %s: OpenSSH accepts rsa-sha2-512 and rsa-sha2-256 only (ssh-rsa is SHA-1)", s.Format)
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

// Sign signs message in namespace with key as `ssh-keygen -Y sign` does
// (sha512; an RSA key signs with rsa-sha2-512) and returns the armored
// signature, which `ssh-keygen -Y verify` and Verify accept.
func Sign(message []byte, key ssh.Signer, namespace string) ([]byte, error) {
	if namespace == "" {
		return nil, fmt.Errorf("signing needs a namespace")
	}
	h := sha512.Sum512(message)
	var magic [6]byte
	copy(magic[:], sshsigMagic)
	signed := ssh.Marshal(sshsigSigned{Magic: magic, Namespace: namespace, HashAlg: "sha512", Hash: h[:]})
	var sig *ssh.Signature
	var err error
	if as, ok := key.(ssh.AlgorithmSigner); ok && key.PublicKey().Type() == ssh.KeyAlgoRSA {
		sig, err = as.SignWithAlgorithm(rand.Reader, signed, ssh.KeyAlgoRSASHA512)
	} else {
		sig, err = key.Sign(rand.Reader, signed)
	}
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	blob := ssh.Marshal(sshsigBlob{Magic: magic, Version: 1, PublicKey: key.PublicKey().Marshal(), Namespace: namespace, HashAlg: "sha512", Signature: ssh.Marshal(sig)})
	return armor(blob), nil
}

// armor wraps a signature blob as OpenSSH writes it: base64 in lines of 70.
func armor(blob []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString(blob)
	var out strings.Builder
	out.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(b64) > 70 {
		out.WriteString(b64[:70] + "\n")
		b64 = b64[70:]
	}
	out.WriteString(b64 + "\n-----END SSH SIGNATURE-----\n")
	return []byte(out.String())
}

// LoadKey reads an OpenSSH private key without a passphrase (what
// `ssh-keygen -N ”` writes; a key with one is refused, naming the file: a
// controller has nobody to type it).
func LoadKey(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	k, err := ssh.ParsePrivateKey(b)
	var missing *ssh.PassphraseMissingError
	if errors.As(err, &missing) {
		return nil, fmt.Errorf("the signing key %s has a passphrase: give a key without one (ssh-keygen -N '')", path)
	}
	if err != nil {
		return nil, fmt.Errorf("the signing key %s: %w", path, err)
	}
	return k, nil
}

// Fingerprint names a key as OpenSSH does: its type and SHA256 fingerprint.
func Fingerprint(pub ssh.PublicKey) string {
	return pub.Type() + " " + ssh.FingerprintSHA256(pub)
}

// CheckAllowedSigners parses every line of an allowed_signers file, as
// Verify will, so that a bad file is refused when it is given, not at the
// first signature it should have checked: a key that does not parse, an
// option OpenSSH does not know or refuses (named). A file naming no key is
// an error too.
func CheckAllowedSigners(allowedSigners []byte) error {
	lines, err := parseAllowedSigners(allowedSigners)
	if err != nil {
		return err
	}
	if len(lines) == 0 {
		return fmt.Errorf("allowed signers: no key (a line is: principals, then the public key)")
	}
	return nil
}
