package render

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/validate"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// A Kptfile's pipeline as read and checked: its steps, their configs, what
// counts as a package's resources (pipeline.go runs it).

// pipeline is a Kptfile's pipeline.
type pipeline struct {
	Mutators   []step `json:"mutators,omitempty"`
	Validators []step `json:"validators,omitempty"`
}

// step is a pipeline function as kpt's main branch reads it: the function,
// and the two fields kpt v1.0.0-beta.56 and Porch v1.5.3 refuse as
// unknown, which pvkit honours as kpt's main branch does (doc.go).
type step struct {
	Function
	// When is a CEL condition over the resources the step's selectors
	// pick: false skips the step (kpt#4388).
	When string `json:"when,omitempty"`
	// ConfigRef names the resource of the package that is the function's
	// config (kpt's book, "Using functions").
	ConfigRef *ConfigRef `json:"configRef,omitempty"`
	// when is When compiled, once, when the Kptfile is read.
	when cel.Program
	// validator: the step is one of the pipeline's validators.
	validator bool
}

// ConfigRef is a function config by reference: the one resource of the
// package with this kind and name, and apiVersion and namespace when set.
type ConfigRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
}

func (r *ConfigRef) String() string {
	s := r.Kind
	if r.APIVersion != "" {
		s = r.APIVersion + "/" + r.Kind
	}
	s += fmt.Sprintf(" %q", r.Name)
	if r.Namespace != "" {
		s += fmt.Sprintf(" in namespace %q", r.Namespace)
	}
	return s
}

func (r *ConfigRef) matches(n *yaml.RNode) bool {
	m, err := n.GetMeta()
	if err != nil {
		return false
	}
	return (r.APIVersion == "" || m.APIVersion == r.APIVersion) && m.Kind == r.Kind && m.Name == r.Name &&
		(r.Namespace == "" || m.Namespace == r.Namespace)
}

func (p *pipeline) empty() bool { return len(p.Mutators) == 0 && len(p.Validators) == 0 }

// readKptfile reads and checks the pipeline of the package at dir. Unless
// kptV1 (Options.KptStatus), a Kptfile holding kpt v1.0's render status is
// refused, as kpt v1.0.0-beta.56 and Porch v1.5.3 refuse it.
func readKptfile(fs filesys.FileSystem, dir string, kptV1 bool) (*pipeline, error) {
	file := path.Join(display(dir), kptfileName)
	if dir == root {
		file = kptfileName
	}
	b, err := fs.ReadFile(path.Join(dir, kptfileName))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	n, err := yaml.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if st := n.Field("status"); !kptV1 && st != nil && st.Value.Field("renderStatus") != nil {
		return nil, fmt.Errorf("%s: `status.renderStatus` is kpt v1.0's render status, which kpt v1.0.0-beta.56 and Porch v1.5.3 refuse "+
			"(\"field renderStatus not found in type v1.Status\"), so Porch renders no clone of this package: remove it, "+
			"or render with pvctl render's default (--render-status)", file)
	}
	p := &pipeline{}
	if pl := n.Field("pipeline"); pl != nil && !yaml.IsMissingOrNull(pl.Value) {
		js, err := krm.JSON(pl.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: `pipeline`: %w", file, err)
		}
		if err := json.Unmarshal(js, p); err != nil {
			return nil, fmt.Errorf("%s: `pipeline` must be a map of `mutators` and `validators` lists of functions: %w", file, err)
		}
	}
	if n := len(p.Mutators) + len(p.Validators); n > MaxFunctions { // before checking each
		return nil, fmt.Errorf("%s: `pipeline` has %d functions; a render runs at most %d", file, n, MaxFunctions)
	}
	for _, l := range []struct {
		name string
		fns  []step
	}{{"mutators", p.Mutators}, {"validators", p.Validators}} {
		for i := range l.fns {
			f := &l.fns[i]
			if err := checkFunction(fs, dir, f, fmt.Sprintf("pipeline.%s[%d]", l.name, i)); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			f.Image = resolveImage(f.Image)
		}
	}
	return p, nil
}

// checkFunction checks a pipeline function as kpt does before rendering.
func checkFunction(fs filesys.FileSystem, dir string, f *step, field string) error {
	switch {
	case f.Image == "" && f.Exec == "":
		return fmt.Errorf("`%s` must specify a function (`image` or `exec`) to execute", field)
	case f.Image != "" && f.Exec != "":
		return fmt.Errorf("`%s` must not specify both `image` and `exec`", field)
	case f.ConfigRef != nil && (len(f.ConfigMap) > 0 || f.ConfigPath != ""):
		return fmt.Errorf("`%s` must specify at most one of `configMap`, `configPath`, or `configRef`", field)
	case len(f.ConfigMap) > 0 && f.ConfigPath != "":
		return fmt.Errorf("`%s` must not specify both `configMap` and `configPath`", field)
	case f.ConfigRef != nil && f.ConfigRef.Kind == "":
		return fmt.Errorf("`%s.configRef.kind`: configRef must specify `kind`", field)
	case f.ConfigRef != nil && f.ConfigRef.Name == "":
		return fmt.Errorf("`%s.configRef.name`: configRef must specify `name`", field)
	}
	if f.When != "" {
		prg, err := compileWhen(f.When)
		if err != nil {
			return fmt.Errorf("`%s.when` %w", field, err)
		}
		f.when = prg
	}
	if f.Image != "" {
		if msg := validate.ImageRef(f.Image); msg != "" {
			return fmt.Errorf("`%s.image` %s", field, msg)
		}
	}
	if f.ConfigPath == "" {
		return nil
	}
	if msg := validate.FilePath(path.Clean(f.ConfigPath)); msg != "" || strings.Contains(f.ConfigPath, "..") {
		return fmt.Errorf("`%s.configPath` %q must be a path inside the package", field, f.ConfigPath)
	}
	cfg, err := configFromFile(fs, dir, f.ConfigPath)
	if err != nil {
		return fmt.Errorf("`%s.configPath` %q: %w", field, f.ConfigPath, err)
	}
	if err := isKRM(cfg); err != nil {
		return fmt.Errorf("`%s.configPath` %q: functionConfig %w", field, f.ConfigPath, err)
	}
	return nil
}

// configFromFile reads a functionConfig file: exactly one object.
func configFromFile(fs filesys.FileSystem, dir, configPath string) (*yaml.RNode, error) {
	b, err := fs.ReadFile(path.Join(dir, configPath))
	if err != nil {
		return nil, fmt.Errorf("functionConfig must exist in the current package")
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), PreserveSeqIndent: true, WrapBareSeqNode: true, DisableUnwrapping: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("failed to read functionConfig: %w", err)
	}
	if len(nodes) != 1 {
		return nil, fmt.Errorf("functionConfig must hold exactly one object, found %d", len(nodes))
	}
	return nodes[0], nil
}

// resolveImage completes an image named without a registry path as kpt
// does: `gcr.io/kpt-fn/` + the name.
func resolveImage(image string) string {
	if image != "" && !strings.Contains(image, "/") {
		return "gcr.io/kpt-fn/" + image
	}
	return image
}

// isKRM checks a resource has apiVersion, kind and metadata.name (a
// kustomization file is let through, as kpt does).
func isKRM(n *yaml.RNode) error {
	if p, _, _ := kioutil.GetFileAnnotations(n); isKustomizationFile(p) {
		return nil
	}
	m, err := n.GetMeta()
	switch {
	case err != nil:
		return fmt.Errorf("must have `apiVersion`, `kind` and `metadata.name`")
	case m.APIVersion == "":
		return fmt.Errorf("must have `apiVersion`")
	case m.Kind == "":
		return fmt.Errorf("must have `kind`")
	case m.Name == "":
		return fmt.Errorf("must have `metadata.name`")
	}
	return nil
}

func isKustomizationFile(p string) bool {
	switch path.Base(p) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// areKRM checks every resource is an object kpt can hand a function.
func areKRM(what string, nodes []*yaml.RNode) error {
	for _, n := range nodes {
		if err := isKRM(n); err != nil {
			p, _, _ := kioutil.GetFileAnnotations(n)
			return fmt.Errorf("%s must contain only KRM resources: %s: resource %w", what, p, err)
		}
	}
	return nil
}

// ResolveImage is an image as a render runs it: a short name
// (set-labels:v0.2.0) is the kpt catalog's (gcr.io/kpt-fn/...).
func ResolveImage(image string) string { return resolveImage(image) }

// Functions are the functions the pipelines of a package's Kptfiles (its
// own and its subpackages') name, images resolved as a render resolves
// them, in file and pipeline order. A Kptfile that does not read names
// none. What a package runs is what its own files say: a caller that
// renders something else (a rebuild from a record) can hold a render to
// these.
func Functions(files map[string]string) []Function {
	var out []Function
	for _, name := range krm.SortedKeys(files) {
		if path.Base(name) != kptfileName {
			continue
		}
		n, err := yaml.Parse(files[name])
		if err != nil {
			continue
		}
		pl := n.Field("pipeline")
		if pl == nil || yaml.IsMissingOrNull(pl.Value) {
			continue
		}
		js, err := krm.JSON(pl.Value)
		p := &pipeline{}
		if err != nil || json.Unmarshal(js, p) != nil {
			continue
		}
		for _, s := range append(p.Mutators, p.Validators...) {
			f := s.Function
			f.Image = resolveImage(f.Image)
			out = append(out, f)
		}
	}
	return out
}
