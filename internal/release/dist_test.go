package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tinyBinary builds a small Go program (a binary with a module graph) into
// dir.
func tinyBinary(t *testing.T, dir, name string) string {
	t.Helper()
	src := filepath.Join(dir, "src-"+name)
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, text := range map[string]string{"go.mod": "module example.com/" + name + "\n\ngo 1.26\n", "main.go": "package main\n\nfunc main() { println(\"" + name + "\") }\n"} {
		if err := os.WriteFile(filepath.Join(src, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir, cmd.Env = src, append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// sshKey makes an ed25519 key pair and an allowed_signers file naming it
// for identity.
func sshKey(t *testing.T, dir, identity string) (key, allowedSigners string) {
	t.Helper()
	key = filepath.Join(dir, "key-"+identity)
	if b, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", identity, "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen (make test needs OpenSSH's client, which .ci/run installs): %v\n%s", err, b)
	}
	pub, err := os.ReadFile(key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	allowedSigners = filepath.Join(dir, "allowed-"+identity)
	if err := os.WriteFile(allowedSigners, []byte(identity+" "+string(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
	return key, allowedSigners
}

func release(t *testing.T, root, key string, bins map[string]string, out string) {
	t.Helper()
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	o := DistOptions{Options: Options{Root: root, Version: strings.TrimSpace(string(version)), ImageRepo: "ghcr.io/pvkit"},
		Out: out, ImageBinaries: bins, Source: "https://github.com/pvkit/pvkit", Commit: strings.Repeat("ab", 20),
		Epoch: time.Unix(1790000000, 0), SigningKey: key}
	if err := Dist(o); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a release directory.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	if b, err := exec.Command("cp", "-a", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, b)
	}
	return to
}

func flipByte(t *testing.T, path string, at float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[int(float64(len(b))*at)] ^= 0x01
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Issue 44 #2: a release verifies offline (pvctl verify-release's code and
// OpenSSH's own `ssh-keygen -Y verify`, the README's command); one byte
// changed in an image or a binary fails it naming the file, and so do a
// changed checksum list, another key, no signature and an added file.
// The images are the same bytes from the same binaries.
func TestReleaseVerifiesAndTamperingFails(t *testing.T) {
	root, _ := filepath.Abs("../..")
	tmp := t.TempDir()
	bins := map[string]string{"controller": tinyBinary(t, tmp, "controller"), "package-context": tinyBinary(t, tmp, "package-context")}
	key, allowed := sshKey(t, tmp, "release@pvkit.dev")
	out := filepath.Join(tmp, "dist")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	pvctl := tinyBinary(t, tmp, "pvctl")
	if b, err := os.ReadFile(pvctl); err != nil || os.WriteFile(filepath.Join(out, "pvctl-v0-linux-amd64"), b, 0o755) != nil {
		t.Fatal(err)
	}
	release(t, root, key, bins, out)
	signers, err := os.ReadFile(allowed)
	if err != nil {
		t.Fatal(err)
	}
	v, err := VerifyDist(out, signers, "release@pvkit.dev")
	if err != nil {
		t.Fatalf("a fresh release does not verify: %v", err)
	}
	if len(v.Images) != 2 || v.Files < 10 || !strings.HasPrefix(v.Signer, "ssh-ed25519 SHA256:") {
		t.Fatalf("verified %+v", v)
	}
	install, _ := os.ReadFile(filepath.Join(out, "install.yaml"))
	if !strings.Contains(string(install), "image: ghcr.io/pvkit/controller:"+strings.TrimSpace(readVersion(t, root))+"@sha256:") {
		t.Fatalf("install.yaml does not name the controller by digest")
	}
	for _, f := range []string{"images/controller.cdx.json", "pvctl-v0-linux-amd64.cdx.json", ProvenanceFile} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(b), "example.com/") && f != ProvenanceFile || f == ProvenanceFile && !strings.Contains(string(b), `"predicateType": "https://slsa.dev/provenance/v1"`) {
			t.Fatalf("%s: %v\n%s", f, err, b)
		}
	}
	// OpenSSH agrees, with the command the README gives.
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "release@pvkit.dev", "-n", SignatureNamespace, "-s", filepath.Join(out, SignatureFile))
	cmd.Stdin = strings.NewReader(string(mustRead(t, filepath.Join(out, ChecksumsFile))))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v\n%s", err, b)
	}
	// The same binaries give the same images.
	again := filepath.Join(tmp, "again")
	if err := os.MkdirAll(again, 0o755); err != nil {
		t.Fatal(err)
	}
	release(t, root, "", bins, again)
	if a, b := mustRead(t, filepath.Join(out, "images/controller.oci.tar")), mustRead(t, filepath.Join(again, "images/controller.oci.tar")); string(a) != string(b) {
		t.Fatal("two builds of the controller image differ")
	}

	otherKey, _ := sshKey(t, tmp, "someone@example.com")
	for _, c := range []struct {
		name   string
		tamper func(dir string)
		want   string
	}{
		{"one byte of an image", func(d string) { flipByte(t, filepath.Join(d, "images/controller.oci.tar"), 0.6) },
			"images/controller.oci.tar: sha256 "},
		{"one byte of a binary", func(d string) { flipByte(t, filepath.Join(d, "pvctl-v0-linux-amd64"), 0.5) },
			"pvctl-v0-linux-amd64: sha256 "},
		{"a checksum list changed to match", func(d string) {
			flipByte(t, filepath.Join(d, "pvctl-v0-linux-amd64"), 0.5)
			sum := hexDigest(mustRead(t, filepath.Join(d, "pvctl-v0-linux-amd64")))
			lines := strings.Split(string(mustRead(t, filepath.Join(d, ChecksumsFile))), "\n")
			for i, l := range lines {
				if strings.HasSuffix(l, "  pvctl-v0-linux-amd64") {
					lines[i] = sum + "  pvctl-v0-linux-amd64"
				}
			}
			if err := os.WriteFile(filepath.Join(d, ChecksumsFile), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "checksums.txt.sig: the signature does not match the file (ssh-ed25519 SHA256:"},
		{"signed by another key", func(d string) {
			os.Remove(filepath.Join(d, SignatureFile))
			if b, err := exec.Command("ssh-keygen", "-q", "-Y", "sign", "-f", otherKey, "-n", SignatureNamespace, filepath.Join(d, ChecksumsFile)).CombinedOutput(); err != nil {
				t.Fatalf("%v %s", err, b)
			}
		}, "is not an allowed signer for \"release@pvkit.dev\""},
		{"no signature", func(d string) { os.Remove(filepath.Join(d, SignatureFile)) }, "checksums.txt.sig: the release is not signed"},
		{"a file added", func(d string) {
			if err := os.WriteFile(filepath.Join(d, "images", "extra.oci.tar"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "images/extra.oci.tar: not in checksums.txt"},
		// Issue 55 #8: a 6 GB file nobody listed was read whole before it
		// was found unlisted (out of memory); it is refused by its name.
		{"a 6 GB file added", func(d string) {
			f, err := os.Create(filepath.Join(d, "aaa-huge.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(6 << 30); err != nil { // sparse: nothing written
				t.Fatal(err)
			}
			f.Close()
		}, "aaa-huge.bin: not in checksums.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := copyDir(t, out)
			c.tamper(d)
			_, err := VerifyDist(d, signers, "release@pvkit.dev")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("VerifyDist: %v\nwant it to say %q", err, c.want)
			}
		})
	}
	// An image whose blob is changed and its archive re-listed (an insider
	// with the key who forgot the manifest): the blob names it.
	d := copyDir(t, out)
	if _, err := verifyImage(filepath.Join(d, "images/controller.oci.tar")); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(d, "images/controller.oci.tar"), 0.6)
	if _, err := verifyImage(filepath.Join(d, "images/controller.oci.tar")); err == nil || !strings.Contains(err.Error(), "the image was changed") && !strings.Contains(err.Error(), "not a tar archive") {
		t.Fatalf("verifyImage of a changed archive: %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readVersion(t *testing.T, root string) string {
	return string(mustRead(t, filepath.Join(root, "VERSION")))
}
