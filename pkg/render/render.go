package render

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Function is a pipeline function as a Kptfile names it.
type Function = pv.Function

// Runner runs one function: a ResourceList on in, a ResourceList on out.
// A function that ran and failed is an *ExitError.
type Runner func(in io.Reader, out io.Writer) error

// Runtime finds the runner of a pipeline function (its image already
// resolved), or says why there is none.
type Runtime interface {
	Runner(ctx context.Context, f Function) (Runner, error)
}

// Options configure a render.
type Options struct {
	// Runtime runs the functions.
	Runtime Runtime
	// AllowExec lets `exec` functions run (kpt: --allow-exec).
	AllowExec bool
	// KptStatus renders as kpt v1.0's in-place `kpt fn render` does: the
	// render status written into the root Kptfile, on success and on
	// failure (kptstatus.go), and the root Kptfile's
	// kpt.dev/save-on-render-failure honoured. Off, a render is kpt
	// v1.0.0-beta.56's and Porch v1.5.3's: no status, and a failed render
	// leaves the package as it was.
	KptStatus bool
}

// root is where the package lives in the in-memory file system.
const root = "/package"

// The annotation kpt keeps a resource's package on while rendering.
const pkgPathAnnotation = "internal.config.kubernetes.io/package-path"

// kptfileName is the Kptfile's file name.
const kptfileName = "Kptfile"

// matchAllKRM are the files a package's resources are read from.
var matchAllKRM = append([]string{kptfileName}, kio.MatchAll...)

// Render renders a package (file name -> content) and returns its files
// afterwards and the status. A failed render returns the error (also in the
// status) and no files: the package is left as it was; with
// Options.KptStatus, the files kpt v1.0 leaves: the package as it was but
// the root Kptfile's render status, or, with kpt.dev/save-on-render-failure,
// the partly rendered resources too (nothing removed).
func Render(ctx context.Context, files map[string]string, o Options) (map[string]string, *Status, error) {
	st := &Status{}
	out, err := render(ctx, files, o, st)
	if err != nil {
		st.Err = err.Error()
		if o.KptStatus && out != nil {
			if werr := writeKptStatus(out.fs, st); werr != nil {
				return nil, st, fmt.Errorf("%w (and the render status was not written: %v)", err, werr)
			}
			if all, rerr := readAll(out.fs); rerr == nil {
				return all, st, err
			}
		}
		return nil, st, err
	}
	if o.KptStatus {
		if err := writeKptStatus(out.fs, st); err != nil {
			st.Err = err.Error()
			return nil, st, err
		}
	}
	all, err := readAll(out.fs)
	if err != nil {
		return nil, st, err
	}
	return all, st, nil
}

// rendered is the file system a render leaves.
type rendered struct{ fs filesys.FileSystem }

func render(ctx context.Context, files map[string]string, o Options, st *Status) (*rendered, error) {
	if _, ok := files[kptfileName]; !ok {
		return nil, fmt.Errorf("the package has no Kptfile at its root")
	}
	fs := filesys.MakeFsInMemory()
	for name, content := range files {
		p := path.Join(root, name)
		if err := fs.MkdirAll(path.Dir(p)); err != nil {
			return nil, err
		}
		if err := fs.WriteFile(p, []byte(content)); err != nil {
			return nil, err
		}
	}
	h := &hydration{ctx: ctx, fs: fs, opts: o, status: st, inputFiles: map[string]bool{}, state: map[string]int{}}
	hydrate := h.hydrate
	if annotationOn(files[kptfileName], BFSRenderingAnnotation) {
		hydrate = h.hydrateTopDown
	}
	resources, err := hydrate(root)
	if err != nil && !(o.KptStatus && annotationOn(files[kptfileName], SaveOnRenderFailureAnnotation)) {
		return &rendered{fs}, err // the package as it was
	}
	hydErr := err
	outputFiles := map[string]bool{}
	for _, r := range resources {
		if err := relativeToRoot(r); err != nil {
			return nil, err
		}
		p, _, err := kioutil.GetFileAnnotations(r)
		if err != nil {
			return nil, err
		}
		outputFiles[path.Clean(p)] = true
	}
	w := &kio.LocalPackageReadWriter{PackagePath: root, PreserveSeqIndent: true, PackageFileName: kptfileName,
		IncludeSubpackages: true, WrapBareSeqNode: true, FileSystem: filesys.FileSystemOrOnDisk{FileSystem: fs}, MatchFilesGlob: matchAllKRM}
	if err := w.Write(resources); err != nil {
		if hydErr != nil {
			return nil, fmt.Errorf("%w (and saving what it rendered failed: %v)", hydErr, err)
		}
		return nil, fmt.Errorf("writing the rendered resources: %w", err)
	}
	if hydErr != nil { // saved on failure: nothing is removed
		return &rendered{fs}, hydErr
	}
	for f := range h.inputFiles { // files whose every resource is gone
		if !outputFiles[f] {
			if err := fs.RemoveAll(path.Join(root, f)); err != nil {
				return nil, err
			}
		}
	}
	return &rendered{fs}, nil
}

// readAll is every regular file under root, by path relative to it.
func readAll(fs filesys.FileSystem) (map[string]string, error) {
	out := map[string]string{}
	err := fs.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := fs.ReadFile(p)
		if err != nil {
			return err
		}
		out[strings.TrimPrefix(p, root+"/")] = string(b)
		return nil
	})
	return out, err
}

// hydration is the state of one render: the packages met (Dry, Hydrating,
// Wet), the files resources were read from, the runs.
type hydration struct {
	ctx        context.Context
	fs         filesys.FileSystem
	opts       Options
	status     *Status
	inputFiles map[string]bool // relative to the root package
	state      map[string]int
	resources  map[string][]*yaml.RNode
	functions  int // in the pipelines read so far
	// runners are the prepared steps' runners, by package and field.
	runners map[string]Runner
}

// MaxFunctions bounds the functions of one render: the package's pipeline
// and its subpackages' together (kpt has no bound; a 10,000-function
// pipeline ran for more than 10 minutes). Nephio's and kpt's packages have
// a handful.
const MaxFunctions = 100

const (
	hydrating = iota + 1
	wet
)

// hydrate renders the package at dir and returns its resources: its
// subpackages' rendered resources, then its own, through its pipeline. A
// failed render returns what it rendered so far with the error.
func (h *hydration) hydrate(dir string) ([]*yaml.RNode, error) {
	switch h.state[dir] {
	case hydrating:
		return nil, fmt.Errorf("package %s: cycle detected in pkg dependencies", display(dir))
	case wet:
		return h.resources[dir], nil
	}
	h.state[dir] = hydrating
	kf, err := readKptfile(h.fs, dir, h.opts.KptStatus)
	if err != nil {
		return nil, err
	}
	if h.functions += len(kf.Mutators) + len(kf.Validators); h.functions > MaxFunctions {
		return nil, fmt.Errorf("package %s: its pipeline brings the render to %d functions; a render runs at most %d (the package's pipeline and its subpackages' together)",
			display(dir), h.functions, MaxFunctions)
	}
	subs, err := subpackages(h.fs, dir)
	if err != nil {
		return nil, err
	}
	var input []*yaml.RNode
	for _, sub := range subs {
		out, err := h.hydrate(sub)
		if err != nil { // what rendered so far, for kpt.dev/save-on-render-failure
			return append(input, out...), err
		}
		input = append(input, out...)
	}
	local, err := localResources(h.fs, dir)
	if err != nil {
		return input, fmt.Errorf("package %s: %w", display(dir), err)
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
	for _, r := range local {
		p, _, err := kioutil.GetFileAnnotations(r)
		if err != nil {
			return nil, err
		}
		h.inputFiles[path.Join(rel, path.Clean(p))] = true
	}
	input = append(input, local...)
	out, err := h.pipeline(dir, kf, input)
	if err != nil {
		if out == nil {
			out = input
		}
		return out, fmt.Errorf("package %s: %w", display(dir), err)
	}
	h.state[dir] = wet
	if h.resources == nil {
		h.resources = map[string][]*yaml.RNode{}
	}
	h.resources[dir] = out
	return out, nil
}

// display is a package's path for messages: "." for the root.
func display(dir string) string {
	if dir == root {
		return "."
	}
	return strings.TrimPrefix(dir, root+"/")
}

// subpackages are the packages directly under dir (a directory with a
// Kptfile, not inside another subpackage), in path order; `.git` is
// skipped.
func subpackages(fs filesys.FileSystem, dir string) ([]string, error) {
	var out []string
	err := fs.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == dir || !info.IsDir() {
			return nil
		}
		if info.Name() == ".git" {
			return filepath.SkipDir
		}
		if fs.Exists(path.Join(p, kptfileName)) {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// localResources reads a package's own resources (not its subpackages'),
// each with its path relative to the package and its package.
func localResources(fs filesys.FileSystem, dir string) ([]*yaml.RNode, error) {
	r := &kio.LocalPackageReader{PackagePath: dir, PackageFileName: kptfileName, IncludeSubpackages: false,
		MatchFilesGlob: matchAllKRM, PreserveSeqIndent: true, SetAnnotations: map[string]string{pkgPathAnnotation: dir},
		WrapBareSeqNode: true, FileSystem: filesys.FileSystemOrOnDisk{FileSystem: fs}}
	return r.Read()
}

// relativeToRoot makes a resource's path relative to the root package and
// drops its package annotation.
func relativeToRoot(r *yaml.RNode) error {
	pkgPath := r.GetAnnotations()[pkgPathAnnotation]
	p, _, err := kioutil.GetFileAnnotations(r)
	if err != nil {
		return err
	}
	if pkgPath != "" && pkgPath != root {
		rel := strings.TrimPrefix(pkgPath, root+"/")
		if rel == pkgPath {
			return fmt.Errorf("package %q is not under the root package", pkgPath)
		}
		p = path.Join(rel, path.Clean(p))
	}
	for _, a := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
		if err := r.PipeE(yaml.SetAnnotation(a, p)); err != nil {
			return err
		}
	}
	return r.PipeE(yaml.ClearAnnotation(pkgPathAnnotation))
}
