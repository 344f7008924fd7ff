// Package release builds what a pvkit release ships besides its binaries and
// images: the install manifests, as kubebuilder's build-installer does, and
// Porch's function runner config naming the release's images. It is make
// release's logic (internal/cmd/release is its command line).
//
// Decisions:
//   - One version source: the file VERSION. A release of another version is
//     refused until VERSION says it and CHANGELOG.md has its section, so a
//     tag, its binaries, its images and its manifests cannot disagree.
//   - The manifests are config/ rendered by kustomize's own library
//     (sigs.k8s.io/kustomize/api, in process, on an in-memory copy of
//     config/), so a release needs neither kustomize nor kubectl, and the
//     output is byte for byte the same on every machine.
//   - install.yaml is config/default (CRDs, RBAC, Deployment, PDB, metrics
//     Service); install-without-crds.yaml is config/without-crds, for a
//     cluster where Porch's install keeps the CRDs; install-namespaced.yaml
//     is config/namespaced (one namespace, fleet: replace it);
//     install-sharded.yaml is config/sharding (the unlabelled shard and
//     shards a and b). All name the image IMAGE_REPO/controller:VERSION,
//     never :dev.
package release

import (
	"bytes"
	"fmt"
	"github.com/Masterminds/semver/v3"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Functions are the suite's function images (the Makefile's FUNCTIONS).
var Functions = []string{"package-context", "pipeline-prepend", "config-inject", "pvs-expand"}

// isRelease reports whether version is a release version:
// vMAJOR.MINOR.PATCH with an optional pre-release (v0.2.0-rc.1), as
// Masterminds' semver reads it strictly; no build metadata, which image
// tags cannot hold.
func isRelease(version string) bool {
	rest, ok := strings.CutPrefix(version, "v")
	v, err := semver.StrictNewVersion(rest)
	return ok && err == nil && v.Metadata() == ""
}

// imageRepo is a registry and path prefix: lower case, no tag.
var imageRepo = regexp.MustCompile(`^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)

// Options name a release.
type Options struct {
	Root      string // the repository root (config/, VERSION, CHANGELOG.md)
	Version   string // vX.Y.Z
	ImageRepo string // the images' prefix: IMAGE_REPO/controller:VERSION
	// Digests are the images' manifest digests by image name (BuildImage),
	// when built: the manifests then name each image by tag and digest.
	Digests map[string]string
}

// Artifact is one file of a release.
type Artifact struct {
	Name string
	Data []byte
}

// Check refuses a release VERSION and CHANGELOG.md do not describe.
func Check(o Options) error {
	if !isRelease(o.Version) {
		return fmt.Errorf("VERSION=%q is not a release version: want vMAJOR.MINOR.PATCH, as v0.2.0 or v0.2.0-rc.1", o.Version)
	}
	if !imageRepo.MatchString(o.ImageRepo) {
		return fmt.Errorf("IMAGE_REPO=%q is not an image repository (a lower-case registry and path, no tag), as ghcr.io/pvkit", o.ImageRepo)
	}
	b, err := os.ReadFile(filepath.Join(o.Root, "VERSION"))
	if err != nil {
		return fmt.Errorf("the version source: %w", err)
	}
	if file := strings.TrimSpace(string(b)); file != o.Version {
		return fmt.Errorf("VERSION says %s, not %s: to release %s, write it to VERSION and give it a section in CHANGELOG.md first", file, o.Version, o.Version)
	}
	log, err := os.ReadFile(filepath.Join(o.Root, "CHANGELOG.md"))
	if err != nil {
		return fmt.Errorf("the changelog: %w", err)
	}
	if !ChangelogHas(log, o.Version) {
		return fmt.Errorf("CHANGELOG.md has no section for %s: add a line \"## %s\" and what it changes", o.Version, o.Version)
	}
	return nil
}

// ChangelogHas says whether a changelog has a "## VERSION" section heading.
func ChangelogHas(log []byte, version string) bool {
	for _, line := range strings.Split(string(log), "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "## "))
		if strings.HasPrefix(line, "## ") && len(f) > 0 && strings.Trim(f[0], "[]") == version {
			return true
		}
	}
	return false
}

// Manifests renders the release's manifests from o.Root's config/.
func Manifests(o Options) ([]Artifact, error) {
	if err := Check(o); err != nil {
		return nil, err
	}
	mem, err := copyConfig(o.Root)
	if err != nil {
		return nil, err
	}
	image := o.ImageRepo + "/controller"
	var out []Artifact
	for _, m := range []struct{ name, dir, what string }{
		{"install.yaml", "default", "CRDs, RBAC, Deployment"},
		{"install-without-crds.yaml", "without-crds", "RBAC, Deployment; the CRDs stay Porch's install's"},
		{"install-namespaced.yaml", "namespaced", "CRDs, RBAC bound in namespace fleet only, Deployment with --watch-namespace=fleet"},
		{"install-sharded.yaml", "sharding", "CRDs, RBAC, a Deployment for the unlabelled objects and one per shard (a, b: --shard)"},
	} {
		overlay := "/release-" + m.dir
		k := fmt.Sprintf("resources:\n- ../config/%s\nimages:\n- name: pvkit/controller\n  newName: %s\n  newTag: %s\n", m.dir, image, o.Version)
		if err := mem.WriteFile(path.Join(overlay, "kustomization.yaml"), []byte(k)); err != nil {
			return nil, err
		}
		opts := krusty.MakeDefaultOptions()
		opts.Reorder = krusty.ReorderOptionLegacy // as kubectl apply -k: the Namespace first, the CRDs before their objects
		res, err := krusty.MakeKustomizer(opts).Run(mem, overlay)
		if err != nil {
			return nil, fmt.Errorf("kustomize config/%s: %w", m.dir, err)
		}
		y, err := res.AsYaml()
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(y, []byte("image: "+image+":"+o.Version+"\n")) || otherControllerImage(y, image+":"+o.Version) {
			return nil, fmt.Errorf("config/%s: the Deployment does not name the image pvkit/controller, so the release's image could not be set", m.dir)
		}
		if d := o.Digests["controller"]; d != "" {
			y = bytes.ReplaceAll(y, []byte("image: "+image+":"+o.Version+"\n"), []byte("image: "+image+":"+o.Version+"@"+d+"\n"))
		}
		head := fmt.Sprintf("# pvkit %s: %s (config/%s).\n#\n#   kubectl apply --server-side -f %s\n#\n# Generated by make release; edit config/, not this file.\n", o.Version, m.what, m.dir, m.name)
		out = append(out, Artifact{m.name, append([]byte(head), y...)})
	}
	out = append(out, Artifact{"function-runner-config.yaml", FunctionRunnerConfig(o)})
	return out, nil
}

// otherControllerImage says whether a manifest names a controller image
// other than want (a Deployment the release's image did not reach: each
// shard's must be the release's too).
func otherControllerImage(y []byte, want string) bool {
	for _, line := range strings.Split(string(y), "\n") {
		img, ok := strings.CutPrefix(strings.TrimSpace(line), "image: ")
		if ok && strings.Contains(img, "/controller") && img != want {
			return true
		}
	}
	return false
}

// FunctionRunnerConfig is Porch's function runner exec config for the
// release: each function's image names (IMAGE_REPO's, and pvkit/'s that
// Kptfiles written from the docs name) mapped to its binary.
func FunctionRunnerConfig(o Options) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# pvkit %s: Porch's function runner exec config (porch v1.5.3 func/server).\n", o.Version)
	b.WriteString("#   function-runner --disable-runtimes pod --config function-runner-config.yaml --functions DIR\n")
	b.WriteString("# DIR holds the release's function binaries, named after their functions.\nfunctions:\n")
	for _, fn := range Functions {
		fmt.Fprintf(&b, "  - function: %s\n    images:\n", fn)
		fmt.Fprintf(&b, "      - %s/%s:%s\n", o.ImageRepo, fn, o.Version)
		if d := o.Digests[fn]; d != "" {
			fmt.Fprintf(&b, "      - %s/%s:%s@%s\n      - %s/%s@%s\n", o.ImageRepo, fn, o.Version, d, o.ImageRepo, fn, d)
		}
		if o.ImageRepo != "pvkit" {
			fmt.Fprintf(&b, "      - pvkit/%s:%s\n", fn, o.Version)
		}
	}
	return []byte(b.String())
}

// copyConfig copies root's config/ into an in-memory file system at /config.
func copyConfig(root string) (filesys.FileSystem, error) {
	mem := filesys.MakeFsInMemory()
	dir := filepath.Join(root, "config")
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return mem.WriteFile(path.Join("/config", filepath.ToSlash(rel)), b)
	})
	if err != nil {
		return nil, fmt.Errorf("reading config/: %w", err)
	}
	return mem, nil
}
