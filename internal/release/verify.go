package release

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/pvkit/pvkit/internal/sshsig"
	"strings"
)

// A release is signed as git signs commits and OpenSSH signs files:
// `ssh-keygen -Y sign -n pvkit-release` over checksums.txt (which names
// every other file with its sha256), the signature in checksums.txt.sig;
// anyone verifies it offline with `ssh-keygen -Y verify` or `pvctl
// verify-release`, which reads the same allowed_signers file (internal/sshsig).

// SignatureNamespace is the namespace a release's signature is made in:
// a signature made for anything else (a git commit, a file) does not
// verify as a release's.
const SignatureNamespace = "pvkit-release"

// Verified is what VerifyDist checked.
type Verified struct {
	Signer string // the key's type and fingerprint
	Files  int    // files whose sha256 checksums.txt lists and the directory holds
	Images []string
}

// VerifyDist checks a release directory offline: checksums.txt's
// signature by a key allowedSigners lets identity use (namespace
// pvkit-release); every file's sha256 as checksums.txt says, and no file
// it does not name; each image archive's blobs against their digests and
// its manifest against the digest the manifests name it by; every subject
// of the provenance statement against the file or image it names. The
// first problem found is the error, naming the file.
func VerifyDist(dir string, allowedSigners []byte, identity string) (Verified, error) {
	var v Verified
	sums, err := os.ReadFile(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		return v, fmt.Errorf("%s: %w", ChecksumsFile, err)
	}
	sig, err := os.ReadFile(filepath.Join(dir, SignatureFile))
	if errors.Is(err, os.ErrNotExist) {
		return v, fmt.Errorf("%s: the release is not signed (make release SIGNING_KEY=...): nothing to trust it by", SignatureFile)
	} else if err != nil {
		return v, err
	}
	if v.Signer, err = sshsig.Verify(sums, sig, allowedSigners, identity, SignatureNamespace); err != nil {
		return v, fmt.Errorf("%s: %w", SignatureFile, err)
	}
	want := map[string]string{}
	for n, line := range strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			return v, fmt.Errorf("%s, line %d: not \"SHA256  FILE\"", ChecksumsFile, n+1)
		}
		want[name] = sum
	}
	names, err := distNames(dir)
	if err != nil {
		return v, err
	}
	for _, name := range names { // every file named before any is read
		if _, ok := want[name]; !ok {
			return v, fmt.Errorf("%s: not in %s (added after the release was signed)", name, ChecksumsFile)
		}
	}
	files, err := digests(dir, names)
	if err != nil {
		return v, err
	}
	for _, f := range files {
		switch sum := want[f.name]; {
		case sum != f.sha256:
			return v, fmt.Errorf("%s: sha256 %s, but %s says %s: the file was changed", f.name, f.sha256, ChecksumsFile, sum)
		}
		delete(want, f.name)
	}
	for name := range want {
		return v, fmt.Errorf("%s: named in %s but missing", name, ChecksumsFile)
	}
	v.Files = len(files)
	digests := map[string]string{}
	for _, f := range files {
		if name, ok := strings.CutSuffix(f.name, ".oci.tar"); ok && strings.HasPrefix(name, "images/") {
			d, err := verifyImage(filepath.Join(dir, f.name))
			if err != nil {
				return v, fmt.Errorf("%s: %w", f.name, err)
			}
			digests[strings.TrimPrefix(name, "images/")] = d
			v.Images = append(v.Images, strings.TrimPrefix(name, "images/")+"@"+d)
		}
	}
	if err := verifyReferences(dir, files, digests); err != nil {
		return v, err
	}
	return v, verifyProvenance(dir, files, digests)
}

// verifyImage checks an OCI archive's blobs against their names and
// returns the digest of the manifest its index names.
func verifyImage(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	blobs := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("not a tar archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(tr, 1<<30))
		if err != nil {
			return "", err
		}
		blobs[h.Name] = b
	}
	for name, b := range blobs {
		if d, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && hexDigest(b) != d {
			return "", fmt.Errorf("blob %s holds content of sha256 %s: the image was changed", name, hexDigest(b))
		}
	}
	var ix index
	if err := json.Unmarshal(blobs["index.json"], &ix); err != nil || len(ix.Manifests) != 1 {
		return "", fmt.Errorf("index.json does not name one manifest")
	}
	d := ix.Manifests[0].Digest
	var m manifest
	if err := json.Unmarshal(blobs["blobs/sha256/"+strings.TrimPrefix(d, "sha256:")], &m); err != nil {
		return "", fmt.Errorf("manifest %s: %v", d, err)
	}
	for _, l := range append([]descriptor{m.Config}, m.Layers...) {
		if _, ok := blobs["blobs/sha256/"+strings.TrimPrefix(l.Digest, "sha256:")]; !ok {
			return "", fmt.Errorf("manifest %s names blob %s, which the archive lacks", d, l.Digest)
		}
	}
	return d, nil
}

var imageRef = regexp.MustCompile(`(?m)^\s*(?:image:|-)\s*\S+/([a-z0-9-]+):[^@\s]+@(sha256:[0-9a-f]{64})\s*$`)

// verifyReferences checks that every image the manifests name by digest
// is the archive of that name.
func verifyReferences(dir string, files []distFile, digests map[string]string) error {
	for _, f := range files {
		if !strings.HasSuffix(f.name, ".yaml") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			return err
		}
		for _, m := range imageRef.FindAllSubmatch(b, -1) {
			name, d := string(m[1]), string(m[2])
			if got, ok := digests[name]; !ok || got != d {
				return fmt.Errorf("%s names image %s by %s, but images/%s.oci.tar holds %q", f.name, name, d, name, got)
			}
		}
	}
	return nil
}

// verifyProvenance checks each subject of the statement.
func verifyProvenance(dir string, files []distFile, digests map[string]string) error {
	b, err := os.ReadFile(filepath.Join(dir, ProvenanceFile))
	if err != nil {
		return fmt.Errorf("%s: %w", ProvenanceFile, err)
	}
	var st statement
	if err := json.Unmarshal(b, &st); err != nil || st.Type != "https://in-toto.io/Statement/v1" {
		return fmt.Errorf("%s: not an in-toto Statement v1", ProvenanceFile)
	}
	sums := map[string]string{}
	for _, f := range files {
		sums[f.name] = f.sha256
	}
	for _, s := range st.Subject {
		got, ok := sums[s.Name]
		if !ok { // an image: REPO/NAME:VERSION
			ref, _, _ := strings.Cut(s.Name[strings.LastIndexByte(s.Name, '/')+1:], ":")
			got, ok = strings.TrimPrefix(digests[ref], "sha256:"), digests[ref] != ""
		}
		if !ok || got != s.Digest["sha256"] {
			return fmt.Errorf("%s: subject %s has sha256 %s, the release %q", ProvenanceFile, s.Name, s.Digest["sha256"], got)
		}
	}
	if !bytes.Contains(b, []byte(`"gitCommit"`)) {
		return fmt.Errorf("%s: no source commit", ProvenanceFile)
	}
	return nil
}
