package configinject

import (
	"fmt"

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

// ConfigFromObject reads and validates a ConfigInjection.
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
	p = cfg.candidates(fc, krm.Field(spec, "resources"))
	return cfg, append(problems, p...)
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
		if inj.Name == "" {
			problems = append(problems, krm.Errorf(fc, f+".name", "`%s.name` must not be empty", f))
		}
		out = append(out, inj)
	}
	return out, problems
}

// candidates checks spec.resources and keeps the objects in the namespace.
func (c *Config) candidates(fc *yaml.RNode, list *yaml.Node) []krm.Problem {
	const field = "spec.resources"
	if krm.IsNull(list) {
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		return []krm.Problem{krm.Errorf(fc, field, "`%s` must be a list of objects, found %s", field, krm.KindName(list))}
	}
	var problems []krm.Problem
	seen := make(map[objectKey]int, len(list.Content))
	for i, e := range list.Content {
		f := fmt.Sprintf("%s[%d]", field, i)
		if e.Kind != yaml.MappingNode {
			problems = append(problems, krm.Errorf(fc, f, "`%s` must be an object, found %s", f, krm.KindName(e)))
			continue
		}
		apiVersion, kind := krm.TypeMeta(e)
		name := krm.Name(e)
		if apiVersion == "" || kind == "" || name == "" {
			problems = append(problems, krm.Errorf(fc, f, "`%s` must have `apiVersion`, `kind` and `metadata.name`", f))
			continue
		}
		k := objectKey{apiVersion, kind, krm.Namespace(e), name}
		if j, dup := seen[k]; dup {
			problems = append(problems, krm.Errorf(fc, f, "`%s` is the same object as `%s[%d]` (%s %s %q in namespace %q)",
				f, field, j, apiVersion, kind, name, k.namespace))
			continue
		}
		seen[k] = i
		if k.namespace != c.Namespace {
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
