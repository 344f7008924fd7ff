package pipelineprepend

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ConfigGVK is pvkit's own config kind for this function.
var ConfigGVK = krm.GVK{APIVersion: krm.PvkitGroupVersion, Kind: "PipelinePrepend"}

// Accepted lists the functionConfig kinds this function takes.
var Accepted = []krm.GVK{krm.PackageVariantGVK, ConfigGVK}

// Config is the owner and the functions to prepend to each list.
type Config struct {
	Owner      string
	Mutators   []*yaml.Node
	Validators []*yaml.Node
}

// List returns the configured functions for kptfile.Mutators or kptfile.Validators.
func (c *Config) List(name string) []*yaml.Node {
	if name == kptfile.Mutators {
		return c.Mutators
	}
	return c.Validators
}

// ConfigFromObject reads and validates a functionConfig of an accepted kind.
func ConfigFromObject(fc *yaml.RNode) (*Config, []krm.Problem) {
	if fc == nil || krm.IsKptPlaceholder(fc) {
		return nil, []krm.Problem{krm.MissingConfig(Accepted)}
	}
	n := fc.YNode()
	var problems []krm.Problem
	switch {
	case krm.PackageVariantGVK.Is(fc):
	case ConfigGVK.Is(fc):
		problems = append(problems, krm.KnownFields(fc, n, "", "apiVersion", "kind", "metadata", "spec")...)
		problems = append(problems, krm.KnownFields(fc, krm.Field(n, "spec"), "spec", "pipeline")...)
		problems = append(problems, krm.KnownFields(fc, krm.Lookup(n, "spec", "pipeline"), "spec.pipeline", kptfile.Mutators, kptfile.Validators)...)
	default:
		return nil, []krm.Problem{krm.UnsupportedConfig(fc, Accepted)}
	}
	cfg := &Config{Owner: krm.Name(n)}
	if cfg.Owner == "" {
		problems = append(problems, krm.Errorf(fc, "metadata.name", "`metadata.name` must not be empty; it names the owner of the prepended functions"))
	}
	spec, p := krm.MapAt(fc, krm.Field(n, "spec"), "spec")
	problems = append(problems, p...)
	pipeline, p := krm.MapAt(fc, krm.Field(spec, "pipeline"), "spec.pipeline")
	problems = append(problems, p...)
	cfg.Mutators, p = functions(fc, krm.Field(pipeline, kptfile.Mutators), "spec.pipeline."+kptfile.Mutators)
	problems = append(problems, p...)
	cfg.Validators, p = functions(fc, krm.Field(pipeline, kptfile.Validators), "spec.pipeline."+kptfile.Validators)
	problems = append(problems, p...)
	return cfg, problems
}

// functions reads and checks one list of pipeline functions.
func functions(fc *yaml.RNode, list *yaml.Node, field string) ([]*yaml.Node, []krm.Problem) {
	if krm.IsNull(list) {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, []krm.Problem{krm.Errorf(fc, field, "`%s` must be a list of functions, found %s", field, krm.KindName(list))}
	}
	var problems []krm.Problem
	for i, f := range list.Content {
		problems = append(problems, checkFunction(fc, f, fmt.Sprintf("%s[%d]", field, i))...)
	}
	return list.Content, problems
}

func checkFunction(fc *yaml.RNode, f *yaml.Node, field string) []krm.Problem {
	if f.Kind != yaml.MappingNode {
		return []krm.Problem{krm.Errorf(fc, field, "`%s` must be a function (a map), found %s", field, krm.KindName(f))}
	}
	var problems []krm.Problem
	for _, key := range []string{"image", "exec", "name", "configPath", "tag"} {
		if v := krm.Field(f, key); v != nil && (v.Kind != yaml.ScalarNode || krm.IsNull(v)) {
			problems = append(problems, krm.Errorf(fc, field+"."+key, "`%s.%s` must be a string, found %s", field, key, krm.KindName(v)))
		}
	}
	image, exec := krm.Field(f, "image"), krm.Field(f, "exec")
	switch {
	case krm.IsNull(image) && krm.IsNull(exec):
		problems = append(problems, krm.Errorf(fc, field, "`%s` must specify one of `image` or `exec`", field))
	case !krm.IsNull(image) && !krm.IsNull(exec):
		problems = append(problems, krm.Errorf(fc, field, "`%s` must specify only one of `image` and `exec`", field))
	}
	if !krm.IsNull(krm.Field(f, "configMap")) && !krm.IsNull(krm.Field(f, "configPath")) {
		problems = append(problems, krm.Errorf(fc, field, "`%s` must specify only one of `configMap` and `configPath`", field))
	}
	_, p := krm.StringMap(fc, krm.Field(f, "configMap"), field+".configMap")
	return append(problems, p...)
}
