// Package catalog is pvkit's own build of the kpt catalog functions real
// packages name (rule catalog-in-process): each function at each behaviour
// its released versions have, the image names that mean it, and how an image
// reference resolves to it. pvctl's render runs them in process; the
// multi-call executable `pvkit-catalog` (orchestrator/cmd/pvkit-catalog) runs them for
// kpt (`--exec`) and for Porch's function runner (its exec runtime, through
// the config Config writes).
//
// Image names (Resolve):
//   - the catalog's registries, `gcr.io/kpt-fn/<fn>` and
//     `ghcr.io/kptdev/krm-functions-catalog/<fn>`, and the bare `<fn>` kpt
//     completes to the first;
//   - an exact release tag (`v0.2.0`); a tag constraint as kpt reads it,
//     `vX` or `vX.Y`, meaning the newest release it covers; `latest` (or no
//     tag): the newest release; `unstable`: the catalog's main branch;
//   - a digest only where Porch v1.5.3's function runner config lists it
//     for that function (the images are not here to hash).
//
// A version whose behaviour is not known from the catalog's sources or
// cases is not listed: its image still needs a registry.
package catalog

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pvkit/pvkit/pkg/validate"

	"github.com/pvkit/pvkit/internal/catalog/applyreplacements"
	"github.com/pvkit/pvkit/internal/catalog/applysetters"
	"github.com/pvkit/pvkit/internal/catalog/commonmeta"
	"github.com/pvkit/pvkit/internal/catalog/createsetters"
	"github.com/pvkit/pvkit/internal/catalog/ensurenamesubstring"
	"github.com/pvkit/pvkit/internal/catalog/searchreplace"
	"github.com/pvkit/pvkit/internal/catalog/setimage"
	"github.com/pvkit/pvkit/internal/catalog/setlabels"
	"github.com/pvkit/pvkit/internal/catalog/setnamespace"
	"github.com/pvkit/pvkit/internal/catalog/starlark"
	"github.com/pvkit/pvkit/internal/catalog/upsertresource"
)

// Func is a function as a process: a ResourceList on in, the function's
// output on out, its messages on stderr; it returns the exit code.
type Func func(in io.Reader, out, stderr io.Writer) int

// Function is one catalog function at one behaviour.
type Function struct {
	// Name is the catalog's name for the function (set-labels).
	Name string
	// Executable is the behaviour's name, and the name of its link to
	// pvkit-catalog (set-labels-v0.2).
	Executable string
	// Releases are the released tags with this behaviour, oldest first.
	Releases []string
	// Unstable: the catalog's main branch behaves so.
	Unstable bool
	// Digests are gcr.io/kpt-fn digests Porch's config maps to it.
	Digests []string
	// Run is the function.
	Run Func
	// Sandboxed: it runs the package's own program (starlark), so pvctl
	// runs its executable, sandboxed as kpt runs an image, never in
	// process: only a process can be given no network, a minimal
	// environment and a memory bound.
	Sandboxed bool
}

// Registries are the registry paths of the catalog's images; the first is
// where kpt completes a bare name.
var Registries = []string{"gcr.io/kpt-fn/", "ghcr.io/kptdev/krm-functions-catalog/"}

// Functions are pvkit's catalog functions, by executable name.
var Functions = []*Function{
	{Name: "apply-replacements", Executable: "apply-replacements-v0.1", Releases: []string{"v0.1.0", "v0.1.1"}, Run: applyreplacements.V01.Run},
	{Name: "apply-replacements", Executable: "apply-replacements-v0.1.2", Releases: []string{"v0.1.2"}, Unstable: true, Run: applyreplacements.V012.Run},
	{Name: "set-annotations", Executable: "set-annotations-v0.1", Releases: []string{"v0.1.3", "v0.1.4"},
		Digests: []string{"sha256:76d65ebddf6ce9c2c00bbcb3c0e963a2d856685bdcf2f1072386f41ca9b563e5"}, Run: commonmeta.SetAnnotations.Run},
	{Name: "set-annotations", Executable: "set-annotations-unstable", Unstable: true, Run: commonmeta.SetAnnotationsUnstable.Run},
	{Name: "set-labels", Executable: "set-labels-v0.1", Releases: []string{"v0.1.4", "v0.1.5"},
		Digests: []string{"sha256:0dfc3c8aba8b791d0c45fe7eafbc8cf3c5920a09f69848f46dcc270ae3423641"}, Run: commonmeta.SetLabels.Run},
	{Name: "apply-setters", Executable: "apply-setters-v0.2", Releases: []string{"v0.2.0", "v0.2.1"}, Unstable: true,
		Digests: []string{"sha256:4d4295727183396f0c3c6a75d2560254c2f9041a39e95dc1e5beffeb49cc1a12"}, Run: applysetters.Run},
	{Name: "create-setters", Executable: "create-setters-v0.1", Releases: []string{"v0.1.0"}, Run: createsetters.V01.Run},
	{Name: "create-setters", Executable: "create-setters-unstable", Unstable: true, Run: createsetters.Unstable.Run},
	{Name: "ensure-name-substring", Executable: "ensure-name-substring-v0.2", Releases: []string{"v0.2.0"}, Run: ensurenamesubstring.V02.Run},
	{Name: "ensure-name-substring", Executable: "ensure-name-substring-unstable", Unstable: true, Run: ensurenamesubstring.Unstable.Run},
	{Name: "search-replace", Executable: "search-replace-v0.2", Releases: []string{"v0.2.0"}, Unstable: true, Run: searchreplace.Run},
	{Name: "set-namespace", Executable: "set-namespace-unstable", Unstable: true, Run: setnamespace.Run},
	{Name: "starlark", Executable: "starlark-v0.5", Releases: []string{"v0.5.0", "v0.5.1"}, Unstable: true, Run: starlark.Run, Sandboxed: true},
	{Name: "set-image", Executable: "set-image-unstable", Unstable: true, Run: setimage.Run},
	{Name: "upsert-resource", Executable: "upsert-resource-v0.2", Releases: []string{"v0.2.0"}, Unstable: true, Run: upsertresource.Run},
	{Name: "set-labels", Executable: "set-labels-v0.2", Releases: []string{"v0.2.0", "v0.2.1"}, Unstable: true, Run: setlabels.Run},
}

// Call runs the function; a panic in it is its failure (exit 1, the panic
// on stderr), not its caller's: in process, pvctl and the controller run it.
func (f *Function) Call(in io.Reader, out, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "%s: internal error: %v", f.Executable, p)
			code = 1
		}
	}()
	return f.Run(in, out, stderr)
}

// ByExecutable is the function an executable name runs, or nil.
func ByExecutable(name string) *Function {
	for _, f := range Functions {
		if f.Executable == name {
			return f
		}
	}
	return nil
}

// Resolve is the function an image reference names, or nil.
func Resolve(image string) *Function {
	name, tag, digest := split(image)
	if name == "" {
		return nil
	}
	if digest != "" {
		for _, f := range Functions {
			if f.Name == name && slices.Contains(f.Digests, digest) {
				return f
			}
		}
		return nil
	}
	switch {
	case tag == "unstable":
		for _, f := range Functions {
			if f.Name == name && f.Unstable {
				return f
			}
		}
		return nil
	case tag == "" || tag == "latest":
		tag = "v"
	}
	best, bestVersion := (*Function)(nil), []int(nil)
	for _, f := range Functions {
		if f.Name != name {
			continue
		}
		for _, r := range f.Releases {
			if r == tag {
				return f
			}
			if v := version(r); v != nil && covers(tag, r) && (bestVersion == nil || slices.Compare(bestVersion, v) < 0) {
				best, bestVersion = f, v
			}
		}
	}
	return best
}

// split takes an image reference apart: the catalog function's name ("" when
// the reference is not the catalog's), its tag and its digest.
func split(ref string) (name, tag, digest string) {
	img := validate.ParseImage(ref)
	image, tag, digest := img.Name, img.Tag, img.Digest
	if !strings.Contains(image, "/") {
		return image, tag, digest
	}
	for _, r := range Registries {
		if rest, ok := strings.CutPrefix(image, r); ok && !strings.Contains(rest, "/") {
			return rest, tag, digest
		}
	}
	return "", "", ""
}

// covers says whether a tag constraint (`v`, `v0`, `v0.2`) covers a release:
// kpt's reading of a partial semantic version as "its newest patch or minor".
func covers(constraint, release string) bool {
	if constraint == "v" {
		return true
	}
	parts := strings.Split(strings.TrimPrefix(constraint, "v"), ".")
	if !strings.HasPrefix(constraint, "v") || len(parts) > 2 {
		return false
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return false
		}
	}
	return strings.HasPrefix(release, constraint+".")
}

// version is a release's numbers (v0.2.1: 0 2 1), or nil.
func version(release string) []int {
	parts := strings.Split(strings.TrimPrefix(release, "v"), ".")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

// Images are every image reference of the catalog's registries that
// resolves to f, sorted: what Porch's function runner needs spelled out (it
// matches image names exactly).
func Images(f *Function) []string {
	var tags []string
	if f.Unstable {
		tags = append(tags, "unstable")
	}
	tags = append(tags, f.Releases...)
	tags = append(tags, "latest", "")
	for _, r := range f.Releases {
		v := strings.Split(r, ".")
		tags = append(tags, v[0], v[0]+"."+v[1])
	}
	seen := map[string]bool{}
	var out []string
	for _, reg := range Registries {
		for _, t := range tags {
			image := reg + f.Name + ":" + t
			if t == "" {
				image = reg + f.Name
			}
			if !seen[image] && Resolve(image) == f {
				seen[image] = true
				out = append(out, image)
			}
		}
	}
	for _, d := range f.Digests {
		out = append(out, Registries[0]+f.Name+"@"+d)
	}
	sort.Strings(out)
	return out
}

// Config is a Porch function runner config (func/config.yaml's format)
// mapping each function's images to its executable.
func Config() []byte {
	var b strings.Builder
	b.WriteString("# pvkit's catalog functions (internal/catalog): a link per behaviour to the one\n" +
		"# executable pvkit-catalog; generated by `pvkit-catalog --config`.\nfunctions:\n")
	for _, f := range Functions {
		fmt.Fprintf(&b, "  - function: %s\n    images:\n", f.Executable)
		for _, i := range Images(f) {
			fmt.Fprintf(&b, "      - %s\n", i)
		}
	}
	return []byte(b.String())
}
