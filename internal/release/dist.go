package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// A release directory (make release) holds, besides the manifests:
//   - images/NAME.oci.tar: each image as an OCI archive (BuildImage), named
//     by tag and digest in install*.yaml and function-runner-config.yaml;
//   - a CycloneDX SBOM per binary and per image (NAME.cdx.json, SBOM);
//   - provenance.intoto.json: an in-toto Statement v1 whose predicate is
//     SLSA provenance v1: every file and image as a subject with its
//     sha256, the source (repository and commit) as the resolved
//     dependency, the builder, the parameters (version, image repository)
//     and the Go toolchain;
//   - checksums.txt: the sha256 of every other file (sha256sum's format,
//     paths relative to the directory), and, when the release is given a
//     key, checksums.txt.sig: an SSH signature of it (SignatureNamespace).
// VerifyDist checks all of it offline.

// DistOptions say what make release assembles.
type DistOptions struct {
	Options
	Out string
	// ImageBinaries are the static linux/amd64 binaries of the images, by
	// image name (controller and each function); none: no images.
	ImageBinaries map[string]string
	// Source is the repository (a URL) and Commit the commit built; Epoch
	// the commit's time (every image file's and the images' creation).
	Source, Commit string
	Epoch          time.Time
	// SigningKey is an SSH private key file (ssh-keygen -Y sign's -f);
	// "": the release is not signed (VerifyDist refuses it).
	SigningKey string
}

// Dist writes a release into o.Out, where make release already put the
// pvctl binaries (pvctl-VERSION-OS-ARCH).
func Dist(o DistOptions) error {
	o.Digests = map[string]string{}
	for _, name := range sortedKeys(o.ImageBinaries) {
		spec := imageSpec(name, o.ImageBinaries[name], o.Version)
		ref := o.ImageRepo + "/" + name + ":" + o.Version
		d, err := BuildImage(spec, ref, o.Epoch, filepath.Join(o.Out, "images", name+".oci.tar"))
		if err != nil {
			return err
		}
		o.Digests[name] = d
		bom, err := SBOM(ref, o.Version, spec.Binary)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(o.Out, "images", name+".cdx.json"), bom, 0o644); err != nil {
			return err
		}
	}
	arts, err := Manifests(o.Options)
	if err != nil {
		return err
	}
	for _, a := range arts {
		if err := os.WriteFile(filepath.Join(o.Out, a.Name), a.Data, 0o644); err != nil {
			return err
		}
	}
	bins, _ := filepath.Glob(filepath.Join(o.Out, "pvctl-*"))
	for _, b := range bins {
		if strings.HasSuffix(b, ".cdx.json") {
			continue
		}
		bom, err := SBOM(filepath.Base(b), o.Version, b)
		if err != nil {
			return err
		}
		if err := os.WriteFile(b+".cdx.json", bom, 0o644); err != nil {
			return err
		}
	}
	files, err := distFiles(o.Out)
	if err != nil {
		return err
	}
	st, err := provenance(o, files)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.Out, ProvenanceFile), st, 0o644); err != nil {
		return err
	}
	if files, err = distFiles(o.Out); err != nil {
		return err
	}
	var sums bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&sums, "%s  %s\n", f.sha256, f.name)
	}
	if err := os.WriteFile(filepath.Join(o.Out, ChecksumsFile), sums.Bytes(), 0o644); err != nil {
		return err
	}
	if o.SigningKey == "" {
		return nil
	}
	cmd := exec.Command("ssh-keygen", "-q", "-Y", "sign", "-f", o.SigningKey, "-n", SignatureNamespace, ChecksumsFile)
	cmd.Dir = o.Out
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("signing %s with %s (ssh-keygen -Y sign): %v: %s", ChecksumsFile, o.SigningKey, err, out)
	}
	return nil
}

// The files of a release that name the others.
const (
	ChecksumsFile  = "checksums.txt"
	SignatureFile  = "checksums.txt.sig"
	ProvenanceFile = "provenance.intoto.json"
)

// imageSpec is the image of name (the controller or a function), as the
// Dockerfiles describe them.
func imageSpec(name, binary, version string) ImageSpec {
	labels := map[string]string{"org.opencontainers.image.version": version, "org.opencontainers.image.source": "https://github.com/pvkit/pvkit",
		"org.opencontainers.image.licenses": "Apache-2.0", "org.opencontainers.image.title": name}
	if name == "controller" {
		labels["org.opencontainers.image.title"] = "pvkit-controller"
		return ImageSpec{Name: name, Binary: binary, Path: "/usr/local/bin/pvkit-controller", Entrypoint: []string{"/usr/local/bin/pvkit-controller"},
			Ports: []string{"8081/tcp", "8443/tcp"}, Labels: labels}
	}
	return ImageSpec{Name: name, Binary: binary, Path: "/usr/local/bin/function", Entrypoint: []string{"/usr/local/bin/function"}, Labels: labels}
}

type distFile struct{ name, sha256 string }

// distFiles are the files of dir but the checksums and their signature,
// by path, with their sha256.
func distFiles(dir string) ([]distFile, error) {
	names, err := distNames(dir)
	if err != nil {
		return nil, err
	}
	return digests(dir, names)
}

// distNames are the names of a release directory's files (checksums.txt
// and its signature left out), sorted, read from the directory alone: a
// file must be named before it is read (a 6 GB file nobody
// listed was read whole, and the verification ran out of memory).
func distNames(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ChecksumsFile || rel == SignatureFile {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", rel)
		}
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// digests are the named files with their sha256, each read as a stream.
func digests(dir string, names []string) ([]distFile, error) {
	out := make([]distFile, 0, len(names))
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, distFile{name, hex.EncodeToString(h.Sum(nil))})
	}
	return out, nil
}

// statement is an in-toto Statement v1.
type statement struct {
	Type          string         `json:"_type"`
	Subject       []subject      `json:"subject"`
	PredicateType string         `json:"predicateType"`
	Predicate     map[string]any `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// provenance is the release's statement: files and images as subjects,
// SLSA provenance v1 as the predicate.
func provenance(o DistOptions, files []distFile) ([]byte, error) {
	st := statement{Type: "https://in-toto.io/Statement/v1", PredicateType: "https://slsa.dev/provenance/v1"}
	for _, f := range files {
		st.Subject = append(st.Subject, subject{Name: f.name, Digest: map[string]string{"sha256": f.sha256}})
	}
	for _, name := range sortedKeys(o.Digests) {
		st.Subject = append(st.Subject, subject{Name: o.ImageRepo + "/" + name + ":" + o.Version,
			Digest: map[string]string{"sha256": strings.TrimPrefix(o.Digests[name], "sha256:")}})
	}
	st.Predicate = map[string]any{
		"buildDefinition": map[string]any{
			"buildType":          "https://github.com/pvkit/pvkit/blob/main/Makefile#release",
			"externalParameters": map[string]any{"version": o.Version, "imageRepo": o.ImageRepo},
			"internalParameters": map[string]any{"goVersion": runtime.Version(), "epoch": o.Epoch.UTC().Format(time.RFC3339)},
			"resolvedDependencies": []any{map[string]any{"uri": "git+" + o.Source + "@" + o.Commit,
				"digest": map[string]string{"gitCommit": o.Commit}}},
		},
		"runDetails": map[string]any{
			"builder": map[string]any{"id": "https://github.com/pvkit/pvkit/blob/main/internal/release"},
		},
	}
	return json.MarshalIndent(st, "", "  ")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
