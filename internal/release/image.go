package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Images are built without Docker, as OCI image layout archives
// (dist/images/NAME.oci.tar), byte for byte the same from the same binary:
// one layer (the binary at a fixed path, /etc/passwd and /etc/group with
// nobody, 65534), every time the commit's, no history. A manifest's digest
// is then known before any registry sees it, and install.yaml names the
// image by it (`controller:v0.1.0@sha256:...`): `skopeo copy
// oci-archive:dist/images/controller.oci.tar docker://REGISTRY/...:v0.1.0`
// pushes the same manifest bytes, so the registry serves that digest;
// `docker load -i` and `ctr -n k8s.io images import` take the archive as
// it is. The Dockerfiles stay for `make images` (a development engine's
// image, not a release's).

// ImageSpec is one image of a release.
type ImageSpec struct {
	Name       string            // controller, package-context, ...
	Binary     string            // the static linux binary it holds
	Path       string            // where: /usr/local/bin/pvkit-controller
	Entrypoint []string          // the image's entrypoint
	Ports      []string          // exposed ports, "8443/tcp"
	Labels     map[string]string // org.opencontainers.image.*
}

// OCI media types.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// The files every image holds besides its binary: nobody, as kpt runs a
// function (`--user nobody`), and the controller's Deployment.
const (
	passwd = "nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	group  = "nogroup:x:65534:\n"
)

// BuildImage writes the OCI archive of spec to out and returns the
// manifest's digest (sha256:...) and the reference it is named by
// (ref, as REPO/NAME:VERSION). epoch is every file's time and the image's
// creation (the source commit's, for a reproducible image).
func BuildImage(spec ImageSpec, ref string, epoch time.Time, out string) (string, error) {
	bin, err := os.ReadFile(spec.Binary)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", spec.Name, err)
	}
	layer, diffID, err := layerOf(map[string]fileEntry{
		"etc/passwd":                    {[]byte(passwd), 0o644},
		"etc/group":                     {[]byte(group), 0o644},
		filepath.ToSlash(spec.Path[1:]): {bin, 0o755},
	}, epoch)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", spec.Name, err)
	}
	ports := map[string]struct{}{}
	for _, p := range spec.Ports {
		ports[p] = struct{}{}
	}
	config, err := json.Marshal(map[string]any{
		"created":      epoch.UTC().Format(time.RFC3339),
		"architecture": "amd64",
		"os":           "linux",
		"config": map[string]any{"User": "65534:65534", "Entrypoint": spec.Entrypoint, "Labels": spec.Labels,
			"ExposedPorts": ports, "Env": []string{"PATH=/usr/local/bin"}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return "", err
	}
	m, err := json.Marshal(manifest{SchemaVersion: 2, MediaType: mediaManifest,
		Config: describe(mediaConfig, config, nil), Layers: []descriptor{describe(mediaLayer, layer, nil)}})
	if err != nil {
		return "", err
	}
	md := describe(mediaManifest, m, map[string]string{"org.opencontainers.image.ref.name": ref, "io.containerd.image.name": FullyQualified(ref)})
	ix, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaIndex, Manifests: []descriptor{md}})
	if err != nil {
		return "", err
	}
	// manifest.json: the docker-archive index `docker save` also writes,
	// which `docker load` reads (Docker 28's classic store reads no
	// index.json); the OCI layout is what the digest is of.
	dockerManifest, err := json.Marshal([]map[string]any{{"Config": "blobs/sha256/" + hexDigest(config),
		"RepoTags": []string{ref}, "Layers": []string{"blobs/sha256/" + hexDigest(layer)}}})
	if err != nil {
		return "", err
	}
	files := map[string]fileEntry{
		"oci-layout":    {[]byte(`{"imageLayoutVersion":"1.0.0"}`), 0o644},
		"index.json":    {ix, 0o644},
		"manifest.json": {dockerManifest, 0o644},
	}
	for _, blob := range [][]byte{config, layer, m} {
		files["blobs/sha256/"+hexDigest(blob)] = fileEntry{blob, 0o644}
	}
	var archive bytes.Buffer
	if err := writeTar(&archive, files, epoch); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	return md.Digest, os.WriteFile(out, archive.Bytes(), 0o644)
}

type fileEntry struct {
	data []byte
	mode int64
}

// layerOf is a gzipped tar of files (with their directories) and its
// uncompressed digest (the config's diff_id).
func layerOf(files map[string]fileEntry, epoch time.Time) ([]byte, string, error) {
	var raw bytes.Buffer
	if err := writeTar(&raw, files, epoch); err != nil {
		return nil, "", err
	}
	var gz bytes.Buffer
	w, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, "", err
	}
	w.ModTime = time.Unix(0, 0) // no time, no name: the same bytes every build
	if _, err := w.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hexDigest(raw.Bytes()), nil
}

// writeTar writes files in name order, each parent directory first, owned
// by root, at epoch.
func writeTar(w *bytes.Buffer, files map[string]fileEntry, epoch time.Time) error {
	names := make([]string, 0, len(files))
	dirs := map[string]bool{}
	for name := range files {
		names = append(names, name)
		for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
			dirs[d+"/"] = true
		}
	}
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, name := range names {
		h := &tar.Header{Name: name, ModTime: epoch.UTC(), Format: tar.FormatPAX, Uname: "root", Gname: "root"}
		if f, ok := files[name]; ok {
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, f.mode, int64(len(f.data))
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			if _, err := tw.Write(f.data); err != nil {
				return err
			}
			continue
		}
		h.Typeflag, h.Mode = tar.TypeDir, 0o755
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	return tw.Close()
}

func describe(mediaType string, b []byte, annotations map[string]string) descriptor {
	return descriptor{MediaType: mediaType, Digest: "sha256:" + hexDigest(b), Size: int64(len(b)), Annotations: annotations}
}

func hexDigest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// FullyQualified is ref as a container runtime names it: a reference
// without a registry is Docker Hub's (pvkit/controller:v1 is
// docker.io/pvkit/controller:v1, nginx:1 docker.io/library/nginx:1).
// `ctr images import` names an OCI archive's image by its
// io.containerd.image.name as written, and the kubelet asks containerd's
// CRI for the normalized name: an image imported as pvkit/controller:v1
// was not found for a Pod naming it so (make e2e-node, ErrImagePull).
func FullyQualified(ref string) string {
	first, rest, ok := strings.Cut(ref, "/")
	switch {
	case !ok:
		return "docker.io/library/" + ref
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return ref
	default:
		return "docker.io/" + first + "/" + rest
	}
}
