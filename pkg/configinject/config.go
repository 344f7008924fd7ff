package configinject

import (
	"fmt"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigGVK is the config kind of config-inject.
var ConfigGVK = krm.GVK{APIVersion: krm.PvkitGroupVersion, Kind: "ConfigInjection"}

// Accepted lists the functionConfig kinds this function takes.
var Accepted = []krm.GVK{ConfigGVK}

// Injector selects an in-cluster object by name, optionally restricted to a
// group, version and kind (nil means "any").
type Injector struct {
	Group, Version, Kind *string
	Name                 string
}

// Config is a parsed ConfigInjection.
type Config struct {
	// Namespace is the only namespace candidates are taken from.
	Namespace string
	Injectors []Injector
	// Candidates are the in-cluster objects in Namespace, in input order.
	Candidates []*yaml.RNode
	// Ignored counts candidates in other namespaces.
	Ignored int
}

// NewConfig builds the config from typed injectors and the in-cluster
// candidates (objects read from the cluster, as YAML: they become package
// content) and checks it: every injector names an object; every candidate
// has apiVersion, kind and name, and appears once. Candidates outside
// namespace are counted and ignored. Field paths are a ConfigInjection's
// (`spec.injectors[i]`, `spec.resources[i]`); the problems name no object
// (krm.About attaches one).
func NewConfig(namespace string, injectors []pv.InjectionSelector, candidates []*yaml.RNode) (*Config, []krm.Problem) {
	cfg := &Config{Namespace: namespace}
	var problems []krm.Problem
	for i, sel := range injectors {
		inj := Injector{Group: sel.Group, Version: sel.Version, Kind: sel.Kind, Name: sel.Name}
		problems = append(problems, checkInjector(inj, fmt.Sprintf("spec.injectors[%d]", i))...)
		cfg.Injectors = append(cfg.Injectors, inj)
	}
	nodes := make([]*yaml.Node, len(candidates))
	for i, c := range candidates {
		nodes[i] = c.YNode()
	}
	return cfg, append(problems, cfg.candidates(nodes)...)
}

func checkInjector(inj Injector, field string) []krm.Problem {
	if inj.Name == "" {
		return []krm.Problem{krm.Errorf(nil, field+".name", "`%s.name` must not be empty", field)}
	}
	return nil
}

// ConfigFromObject reads a ConfigInjection (the binary's edge): the kind,
// the shapes of its fields, then NewConfig's checks, every problem about
// fc.
func ConfigFromObject(fc *yaml.RNode) (*Config, []krm.Problem) {
	if fc == nil || krm.IsKptPlaceholder(fc) {
		return nil, []krm.Problem{krm.MissingConfig(Accepted)}
	}
	if !ConfigGVK.Is(fc) {
		return nil, []krm.Problem{krm.UnsupportedConfig(fc, Accepted)}
	}
	n := fc.YNode()
	problems := krm.KnownFields(fc, n, "", "apiVersion", "kind", "metadata", "spec")
	problems = append(problems, krm.KnownFields(fc, krm.Field(n, "spec"), "spec", "injectors", "resources")...)
	cfg := &Config{Namespace: krm.Namespace(n)}
	spec, p := krm.MapAt(fc, krm.Field(n, "spec"), "spec")
	problems = append(problems, p...)
	cfg.Injectors, p = injectors(fc, krm.Field(spec, "injectors"))
	problems = append(problems, p...)
	const field = "spec.resources"
	list := krm.Field(spec, "resources")
	switch {
	case krm.IsNull(list):
	case list.Kind != yaml.SequenceNode:
		problems = append(problems, krm.Errorf(fc, field, "`%s` must be a list of objects, found %s", field, krm.KindName(list)))
	default:
		problems = append(problems, krm.About(fc, cfg.candidates(list.Content))...)
	}
	return cfg, problems
}

func injectors(fc *yaml.RNode, list *yaml.Node) ([]Injector, []krm.Problem) {
	const field = "spec.injectors"
	if krm.IsNull(list) {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, []krm.Problem{krm.Errorf(fc, field, "`%s` must be a list, found %s", field, krm.KindName(list))}
	}
	var out []Injector
	var problems []krm.Problem
	for i, e := range list.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		if e.Kind != yaml.MappingNode {
			problems = append(problems, krm.Errorf(fc, f, "`%s` must be a map, found %s", f, krm.KindName(e)))
			continue
		}
		problems = append(problems, krm.KnownFields(fc, e, f, "group", "version", "kind", "name")...)
		var inj Injector
		for _, sel := range []struct {
			key string
			dst **string
		}{{"group", &inj.Group}, {"version", &inj.Version}, {"kind", &inj.Kind}} {
			key, dst := sel.key, sel.dst
			if v := krm.Field(e, key); v != nil {
				if v.Kind != yaml.ScalarNode || krm.IsNull(v) {
					problems = append(problems, krm.Errorf(fc, f+"."+key, "`%s.%s` must be a string, found %s", f, key, krm.KindName(v)))
					continue
				}
				s := v.Value
				*dst = &s
			}
		}
		inj.Name, _ = krm.ScalarAt(e, "name")
		problems = append(problems, krm.About(fc, checkInjector(inj, f))...)
		out = append(out, inj)
	}
	return out, problems
}

// candidates checks the candidate objects and keeps those in the
// namespace.
func (c *Config) candidates(list []*yaml.Node) []krm.Problem {
	const field = "spec.resources"
	var problems []krm.Problem
	seen := make(map[objectKey]int, len(list))
	for i, e := range list {
		f := fmt.Sprintf("%s[%d]", field, i)
		if e.Kind != yaml.MappingNode {
			problems = append(problems, krm.Errorf(nil, f, "`%s` must be an object, found %s", f, krm.KindName(e)))
			continue
		}
		apiVersion, kind := krm.TypeMeta(e)
		name := krm.Name(e)
		if apiVersion == "" || kind == "" || name == "" {
			problems = append(problems, krm.Errorf(nil, f, "`%s` must have `apiVersion`, `kind` and `metadata.name`", f))
			continue
		}
		k := objectKey{apiVersion, kind, krm.EffectiveNamespace(krm.Namespace(e)), name}
		if j, dup := seen[k]; dup {
			problems = append(problems, krm.Errorf(nil, f, "`%s` is the same object as `%s[%d]` (%s %s %q in namespace %q)",
				f, field, j, apiVersion, kind, name, k.namespace))
			continue
		}
		seen[k] = i
		if !krm.SameNamespace(k.namespace, c.Namespace) {
			c.Ignored++
			continue
		}
		c.Candidates = append(c.Candidates, yaml.NewRNode(e))
	}
	return problems
}

// objectKey identifies an object.
type objectKey struct {
	apiVersion, kind, namespace, name string
}
