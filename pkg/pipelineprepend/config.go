package pipelineprepend

import (
	"fmt"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
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

// NewConfig builds the config from a typed owner and pipeline (nil:
// nothing to prepend) and checks it: an owner, and each function with
// exactly one of image and exec and at most one of configMap and
// configPath. The functions become Kptfile pipeline entries as Go's JSON
// encoding of pv.Function writes them. The problems name no object
// (krm.About attaches one).
func NewConfig(owner string, p *pv.Pipeline) (*Config, []krm.Problem) {
	cfg := &Config{Owner: owner}
	problems := checkOwner(owner)
	if p == nil {
		return cfg, problems
	}
	for _, l := range []struct {
		name string
		fns  []pv.Function
		dst  *[]*yaml.Node
	}{{kptfile.Mutators, p.Mutators, &cfg.Mutators}, {kptfile.Validators, p.Validators, &cfg.Validators}} {
		for i, f := range l.fns {
			problems = append(problems, checkFunction(f, fmt.Sprintf("spec.pipeline.%s[%d]", l.name, i))...)
			n, err := krm.Encode(f)
			if err != nil {
				problems = append(problems, krm.Errorf(nil, fmt.Sprintf("spec.pipeline.%s[%d]", l.name, i), "%v", err))
				continue
			}
			*l.dst = append(*l.dst, n)
		}
	}
	return cfg, problems
}

func checkOwner(owner string) []krm.Problem {
	if owner == "" {
		return []krm.Problem{krm.Errorf(nil, "metadata.name", "`metadata.name` must not be empty; it names the owner of the prepended functions")}
	}
	return nil
}

// checkFunction is NewConfig's check of one function (rule: image-or-exec).
func checkFunction(f pv.Function, field string) []krm.Problem {
	var problems []krm.Problem
	switch {
	case f.Image == "" && f.Exec == "":
		problems = append(problems, krm.Errorf(nil, field, "`%s` must specify one of `image` or `exec`", field))
	case f.Image != "" && f.Exec != "":
		problems = append(problems, krm.Errorf(nil, field, "`%s` must specify only one of `image` and `exec`", field))
	}
	if len(f.ConfigMap) > 0 && f.ConfigPath != "" {
		problems = append(problems, krm.Errorf(nil, field, "`%s` must specify only one of `configMap` and `configPath`", field))
	}
	return problems
}

// ConfigFromObject reads a functionConfig of an accepted kind (the
// binary's edge): the kind, the shapes of its fields, then NewConfig's
// checks of each function that could be read, every problem about fc.
// The functions keep the YAML they were written in (field order, fields
// pvkit does not know), comments aside.
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
	problems = append(problems, krm.About(fc, checkOwner(cfg.Owner))...)
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

// functions reads one list of pipeline functions: the shape of each entry,
// and NewConfig's checks of each entry whose fields could be read.
func functions(fc *yaml.RNode, list *yaml.Node, field string) ([]*yaml.Node, []krm.Problem) {
	if krm.IsNull(list) {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, []krm.Problem{krm.Errorf(fc, field, "`%s` must be a list of functions, found %s", field, krm.KindName(list))}
	}
	var problems []krm.Problem
	for i, f := range list.Content {
		at := fmt.Sprintf("%s[%d]", field, i)
		fn, p := readFunction(fc, f, at)
		problems = append(problems, p...)
		if fn != nil {
			problems = append(problems, krm.About(fc, checkFunction(*fn, at))...)
		}
	}
	return list.Content, problems
}

// readFunction reads the fields of one function that NewConfig checks; nil
// when the entry is not a map or any of its fields is of the wrong type.
func readFunction(fc *yaml.RNode, f *yaml.Node, field string) (*pv.Function, []krm.Problem) {
	if f.Kind != yaml.MappingNode {
		return nil, []krm.Problem{krm.Errorf(fc, field, "`%s` must be a function (a map), found %s", field, krm.KindName(f))}
	}
	var problems []krm.Problem
	fn := &pv.Function{}
	for _, s := range []struct {
		key string
		dst *string
	}{{"image", &fn.Image}, {"exec", &fn.Exec}, {"name", &fn.Name}, {"configPath", &fn.ConfigPath}, {"tag", &fn.Tag}} {
		switch v := krm.Field(f, s.key); {
		case v == nil:
		case v.Kind != yaml.ScalarNode || krm.IsNull(v):
			problems = append(problems, krm.Errorf(fc, field+"."+s.key, "`%s.%s` must be a string, found %s", field, s.key, krm.KindName(v)))
		default:
			*s.dst = v.Value
		}
	}
	var p []krm.Problem
	fn.ConfigMap, p = krm.StringMap(fc, krm.Field(f, "configMap"), field+".configMap")
	if problems = append(problems, p...); len(problems) > 0 {
		return nil, problems
	}
	return fn, nil
}
