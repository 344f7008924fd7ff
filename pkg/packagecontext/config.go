package packagecontext

import (
	"strconv"
	"strings"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	// FileName is the package context file at the package root.
	FileName = "package-context.yaml"
	// ConfigMapName is the name of the package context ConfigMap.
	ConfigMapName = "kptfile.kpt.dev"
)

// ReservedKeys are set by kpt and Porch and may be neither set nor removed.
var ReservedKeys = []string{"name", "package-path"}

// ConfigGVK is pvkit's own config kind for this function.
var ConfigGVK = krm.GVK{APIVersion: krm.PvkitGroupVersion, Kind: "PackageContext"}

// Accepted lists the functionConfig kinds this function takes.
var Accepted = []krm.GVK{krm.PackageVariantGVK, krm.ConfigMapGVK, ConfigGVK}

// Config is what to set and remove.
type Config struct {
	Data       map[string]string
	RemoveKeys []string
}

// Empty reports whether the config has nothing to do.
func (c *Config) Empty() bool { return len(c.Data) == 0 && len(c.RemoveKeys) == 0 }

// ConfigFromObject reads a functionConfig of an accepted kind and validates
// it. Problems of error severity mean the config is unusable; warnings do not.
func ConfigFromObject(fc *yaml.RNode) (*Config, []krm.Problem) {
	if fc == nil || krm.IsKptPlaceholder(fc) {
		return nil, []krm.Problem{krm.MissingConfig(Accepted)}
	}
	n := fc.YNode()
	var base string
	var problems []krm.Problem
	switch {
	case krm.PackageVariantGVK.Is(fc):
		base = "spec.packageContext"
	case krm.ConfigMapGVK.Is(fc):
		base = ""
	case ConfigGVK.Is(fc):
		base = "spec"
		problems = append(problems, krm.KnownFields(fc, n, "", "apiVersion", "kind", "metadata", "spec")...)
		problems = append(problems, krm.KnownFields(fc, krm.Field(n, "spec"), "spec", "data", "removeKeys")...)
	default:
		return nil, []krm.Problem{krm.UnsupportedConfig(fc, Accepted)}
	}
	section := n
	if base != "" {
		var p []krm.Problem
		section, p = krm.MapAt(fc, krm.Lookup(n, strings.Split(base, ".")...), base)
		problems = append(problems, p...)
	}
	cfg := &Config{}
	dataField, removeField := krm.JoinField(base, "data"), krm.JoinField(base, "removeKeys")
	var p []krm.Problem
	cfg.Data, p = krm.StringMap(fc, krm.Field(section, "data"), dataField)
	problems = append(problems, p...)
	var remove []krm.StringItem
	if base != "" { // a ConfigMap has no removeKeys
		remove, p = krm.StringList(fc, krm.Field(section, "removeKeys"), removeField)
		problems = append(problems, p...)
	}
	for _, r := range remove {
		cfg.RemoveKeys = append(cfg.RemoveKeys, r.Value)
	}
	problems = append(problems, validate(fc, cfg.Data, remove, dataField, removeField)...)
	return cfg, problems
}

func validate(fc *yaml.RNode, data map[string]string, remove []krm.StringItem, dataField, removeField string) []krm.Problem {
	var problems []krm.Problem
	for _, k := range krm.SortedKeys(data) {
		if isReserved(k) {
			problems = append(problems, krm.Errorf(fc, dataField+"."+k,
				"`%s` must not contain the reserved key %q (kpt and Porch set it)", dataField, k))
		} else if msg := krm.ConfigMapKeyProblem(k); msg != "" {
			problems = append(problems, krm.Errorf(fc, dataField, "`%s` key %q %s", dataField, k, msg))
		}
	}
	for _, r := range remove {
		k, field := r.Value, removeField+"["+strconv.Itoa(r.Index)+"]"
		if isReserved(k) {
			problems = append(problems, krm.Errorf(fc, field,
				"`%s` must not be the reserved key %q (kpt and Porch set it)", field, k))
		} else if msg := krm.ConfigMapKeyProblem(k); msg != "" {
			problems = append(problems, krm.Errorf(fc, field, "`%s` %s", field, msg))
		} else if _, both := data[k]; both {
			problems = append(problems, krm.Warningf(fc, field,
				"key %q is in both `%s` and `%s`; it is removed", k, dataField, removeField))
		}
	}
	return problems
}

func isReserved(k string) bool {
	for _, r := range ReservedKeys {
		if k == r {
			return true
		}
	}
	return false
}
