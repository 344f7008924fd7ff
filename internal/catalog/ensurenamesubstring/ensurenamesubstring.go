// Package ensurenamesubstring is ensure-name-substring of the kpt function
// catalog, written from its README and its e2e cases and examples
// (`tests/ensure-name-substring`, `examples/ensure-name-substring-*` of
// github.com/kptdev/krm-functions-catalog, at the release tag and at the
// main branch) on kustomize's resource map, prefix, suffix and name
// reference filters, the library the catalog's function is built on.
//
// What it does, as the README and the cases show:
//   - the config is a ConfigMap (v1) with exactly one data key, `prepend`
//     or `append`, whose value is the substring; or an EnsureNameSubstring
//     (fn.kpt.dev/v1alpha1): `substring`, `editMode` (prepend when empty),
//     `additionalNameFields` (kustomize field specs; `fieldSpecs` is the
//     deprecated name and may not be given with it);
//   - every object's `metadata.name` and each additional field that selects
//     it gets the substring (prefixed or suffixed) unless it already holds
//     it anywhere; CustomResourceDefinitions, Namespaces, APIServices and
//     the Kptfile keep their names; local config is renamed like the rest;
//   - references to a renamed object are renamed with it (kustomize's name
//     references: a Pod's ConfigMap, a RoleBinding's role, ...), and a
//     `config.kubernetes.io/depends-on` annotation that names, as one
//     `group/[namespaces/ns/]kind/name`, an object of the package;
//   - the two behaviours: v0.2.0 (the released one, `v0.2`, `latest`)
//     leaves every object in its file; the main branch (`unstable`, on
//     kustomize api v0.10) drops each object's file, index and sequence
//     style annotations, so kpt writes each object to its default file,
//     `<namespace>/<kind>_<name>.yaml` (the Kptfile too: kpt writes it to
//     `kptfile_<name>.yaml`, as the catalog's cases record).
//
// Deliberately different: an editMode other than prepend or append is
// refused with the message the ConfigMap's unknown key gets (the catalog's
// function takes it and changes nothing); kustomize api v0.20's name
// reference rules are the ones applied (the catalog's builds carry v0.8
// and v0.10; every catalog case gives the same bytes).
//
// v0.1.x (no depends-on, the Kptfile renamed too) is not listed.
package ensurenamesubstring

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/internal/catalog/internal/kyamlproc"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/filters/nameref"
	"sigs.k8s.io/kustomize/api/filters/prefix"
	"sigs.k8s.io/kustomize/api/filters/suffix"
	"sigs.k8s.io/kustomize/api/hasher"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// Behaviour is one of the function's behaviours.
type Behaviour struct {
	// DropFiles: every object loses its file, index and sequence style
	// annotations (the main branch).
	DropFiles bool
}

var (
	// V02 is v0.2.0: objects stay in their files.
	V02 = Behaviour{}
	// Unstable is the catalog's main branch.
	Unstable = Behaviour{DropFiles: true}
)

const dependsOn = "config.kubernetes.io/depends-on"

// Run is the function as a process: a ResourceList on in, the result on
// out, the error on stderr; it returns the exit code.
func (b Behaviour) Run(in io.Reader, out, stderr io.Writer) int {
	return kyamlproc.Main(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		c, err := readConfig(rl.FunctionConfig)
		if err != nil {
			return fmt.Errorf("failed to load the `functionConfig`: %w", err)
		}
		items, err := b.ensure(c, rl.Items)
		if err != nil {
			return err
		}
		rl.Items = items
		return nil
	}), in, out, stderr)
}

// config is the function config read.
type config struct {
	substring string
	prepend   bool
	fields    types.FsSlice
}

// readConfig reads a ConfigMap or an EnsureNameSubstring; no config is an
// empty substring.
func readConfig(n *yaml.RNode) (*config, error) {
	c := &config{prepend: true}
	if n.IsNilOrEmpty() {
		return nil, fmt.Errorf("substring must not be empty")
	}
	meta, err := n.GetValidatedMetadata()
	if err != nil {
		return nil, err
	}
	text, err := n.String()
	if err != nil {
		return nil, err
	}
	switch {
	case meta.APIVersion == "v1" && meta.Kind == "ConfigMap":
		var cm struct {
			Data map[string]string `json:"data"`
		}
		if err := sigsyaml.Unmarshal([]byte(text), &cm); err != nil {
			return nil, err
		}
		if len(cm.Data) != 1 {
			return nil, fmt.Errorf("only 1 entry is allowed in the ConfigMap, but got: %d", len(cm.Data))
		}
		for k, v := range cm.Data { // the one entry
			if err := c.setMode(k); err != nil {
				return nil, err
			}
			c.substring = v
		}
	case meta.APIVersion == "fn.kpt.dev/v1alpha1" && meta.Kind == "EnsureNameSubstring":
		var e struct {
			Substring            string        `json:"substring"`
			EditMode             string        `json:"editMode"`
			FieldSpecs           types.FsSlice `json:"fieldSpecs"`
			AdditionalNameFields types.FsSlice `json:"additionalNameFields"`
		}
		if err := sigsyaml.Unmarshal([]byte(text), &e); err != nil {
			return nil, err
		}
		if e.EditMode != "" {
			if err := c.setMode(e.EditMode); err != nil {
				return nil, err
			}
		}
		c.substring, c.fields = e.Substring, e.AdditionalNameFields
		if c.fields == nil {
			c.fields, e.FieldSpecs = e.FieldSpecs, nil
		}
		if c.substring != "" && e.FieldSpecs != nil {
			return nil, fmt.Errorf("`fieldSpecs` has been deprecated, please rename it to `additionalNameFields`")
		}
	default:
		return nil, fmt.Errorf("function config must be either %v or %v, but we got: %v",
			schema.FromAPIVersionAndKind("v1", "ConfigMap"),
			schema.FromAPIVersionAndKind("fn.kpt.dev/v1alpha1", "EnsureNameSubstring"),
			schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind))
	}
	if c.substring == "" {
		return nil, fmt.Errorf("substring must not be empty")
	}
	return c, nil
}

func (c *config) setMode(mode string) error {
	switch mode {
	case "prepend", "append":
		c.prepend = mode == "prepend"
		return nil
	}
	return fmt.Errorf("unknown editMode: %v, only prepend and append are allowed", mode)
}

// The objects whose names are never changed.
var keepNames = []resid.Gvk{
	{Kind: "CustomResourceDefinition"},
	{Group: "apiregistration.k8s.io", Kind: "APIService"},
	{Kind: "Namespace"},
	{Group: "kpt.dev", Kind: "Kptfile"},
}

// nameField is kustomize's default name field (its namePrefix field spec).
var nameField = types.FieldSpec{Path: "metadata/name"}

func (b Behaviour) ensure(c *config, items []*yaml.RNode) ([]*yaml.RNode, error) {
	factory := resource.NewFactory(&hasher.Hasher{})
	factory.IncludeLocalConfigs = true
	layouts := map[*yaml.Node]layout{}
	for _, n := range items {
		layouts[n.YNode()] = snapshot(n)
	}
	m, err := resmap.NewFactory(factory).NewResMapFromRNodeSlice(items)
	if err != nil {
		return nil, fmt.Errorf("failed to convert items to resource map: %w", err)
	}
	// the objects a depends-on annotation may name, as they were
	known := map[[3]string]bool{}
	for _, r := range m.Resources() {
		known[[3]string{r.GetGvk().Group, r.GetKind(), r.GetName()}] = true
	}
	fields := append(types.FsSlice{nameField}, c.fields...)
	for _, r := range m.Resources() {
		if err := c.rename(r, fields, known); err != nil {
			return nil, fmt.Errorf("failed to transform name substring: %w", err)
		}
	}
	if err := fixReferences(m); err != nil {
		return nil, fmt.Errorf("failed to fix name back reference: %w", err)
	}
	for _, r := range m.Resources() {
		if err := b.dropBuildAnnotations(&r.RNode); err != nil {
			return nil, err
		}
		if l, ok := layouts[r.YNode()]; ok {
			l.restore(&r.RNode)
		}
	}
	return m.ToRNodeSlice(), nil
}

// rename puts the substring into each of r's name fields that lacks it.
func (c *config) rename(r *resource.Resource, fields types.FsSlice, known map[[3]string]bool) error {
	id := r.OrgId()
	for _, keep := range keepNames {
		if id.IsSelected(&keep) {
			return nil
		}
	}
	for _, fs := range fields {
		if !id.IsSelected(&fs.Gvk) {
			continue
		}
		has, err := holds(r, fs.Path, c.substring)
		if err != nil {
			return err
		}
		if has {
			continue
		}
		var f kio.Filter
		if c.prepend {
			f = prefix.Filter{Prefix: c.substring, FieldSpec: fs}
		} else {
			f = suffix.Filter{Suffix: c.substring, FieldSpec: fs}
		}
		if fs.Path == nameField.Path { // for the name references
			r.StorePreviousId()
			if c.prepend {
				r.AddNamePrefix(c.substring)
			} else {
				r.AddNameSuffix(c.substring)
			}
		}
		if err := r.ApplyFilter(f); err != nil {
			return err
		}
		if err := c.renameDependsOn(r, known); err != nil {
			return err
		}
	}
	return nil
}

// holds says whether the field at path holds the substring (its YAML text
// does, for a field that is not the name).
func holds(r *resource.Resource, path, substring string) (bool, error) {
	if path == nameField.Path {
		return strings.Contains(r.GetName(), substring), nil
	}
	v, err := r.Pipe(yaml.Lookup(strings.Split(path, "/")...))
	if err != nil {
		return false, fmt.Errorf("unable to lookup path %v in %v: %w", path, r.OrgId(), err)
	}
	text, err := v.String()
	if err != nil {
		return false, err
	}
	return strings.Contains(text, substring), nil
}

// A depends-on annotation naming one object: group/namespaces/ns/kind/name
// or group/kind/name.
var (
	namespacedDependency = regexp.MustCompile(`\A[-.\w]*/namespaces/[-.\w]*/[-.\w]*/[-.\w]*\z`)
	clusterDependency    = regexp.MustCompile(`\A[-.\w]*/[-.\w]*/[-.\w]*\z`)
)

// renameDependsOn renames the object r's depends-on annotation names when
// that object is in the package.
func (c *config) renameDependsOn(r *resource.Resource, known map[[3]string]bool) error {
	annotations := r.GetAnnotations()
	value, ok := annotations[dependsOn]
	if !ok || !(namespacedDependency.MatchString(value) || clusterDependency.MatchString(value)) {
		return nil
	}
	parts := strings.Split(value, "/")
	last := len(parts) - 1
	if !known[[3]string{parts[0], parts[last-1], parts[last]}] {
		return nil
	}
	if c.prepend {
		parts[last] = c.substring + parts[last]
	} else {
		parts[last] += c.substring
	}
	annotations[dependsOn] = strings.Join(parts, "/")
	return r.SetAnnotations(annotations)
}

// fixReferences renames every reference to a renamed object, by
// kustomize's name reference field specs.
func fixReferences(m resmap.ResMap) error {
	for _, r := range m.Resources() {
		var candidates resmap.ResMap
		for _, ref := range references {
			for _, field := range ref.referrers {
				if !r.OrgId().IsSelected(&field.Gvk) {
					continue
				}
				if candidates == nil {
					var err error
					if candidates, err = m.SubsetThatCouldBeReferencedByResource(r); err != nil {
						return err
					}
				}
				f := nameref.Filter{Referrer: r, NameFieldToUpdate: field, ReferralTarget: ref.target, ReferralCandidates: candidates}
				if err := r.ApplyFilter(f); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fileAnnotations are the annotations kpt keeps an object's file, place and
// sequence style in.
var fileAnnotations = []string{
	kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.SeqIndentAnnotation, kioutil.IdAnnotation,
	kioutil.InternalAnnotationsMigrationResourceIDAnnotation,
	kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation,
}

// dropBuildAnnotations removes kustomize's build annotations and, for the
// main branch, the file annotations (kustomize api v0.10 counts them among
// its build annotations).
func (b Behaviour) dropBuildAnnotations(n *yaml.RNode) error {
	annotations := n.GetAnnotations()
	for _, a := range resource.BuildAnnotations {
		if b.DropFiles || !slices.Contains(fileAnnotations, a) {
			delete(annotations, a)
		}
	}
	return n.SetAnnotations(annotations)
}
