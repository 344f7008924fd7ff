package packagecontext

import (
	"strconv"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
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

// NewConfig builds the config from a typed package context (nil: nothing
// to set or remove) and checks it: no reserved key, every key a valid
// ConfigMap key; a key both set and removed is a warning. at is where the
// package context sits in its object, for the problems' field paths:
// "spec.packageContext" in a PackageVariant, "spec" in a PackageContext, ""
// in a ConfigMap. The problems name no object (krm.About attaches one).
func NewConfig(pc *pv.PackageContext, at string) (*Config, []krm.Problem) {
	if pc == nil {
		return &Config{}, nil
	}
	remove := make([]krm.StringItem, len(pc.RemoveKeys))
	for i, k := range pc.RemoveKeys {
		remove[i] = krm.StringItem{Index: i, Value: k}
	}
	return newConfig(pc.Data, remove, at)
}

// newConfig is NewConfig on removeKeys as read from YAML: entries that were
// not strings are left out and the others keep their index, so that each
// problem names the entry it is about.
func newConfig(data map[string]string, remove []krm.StringItem, at string) (*Config, []krm.Problem) {
	cfg := &Config{Data: data}
	for _, r := range remove {
		cfg.RemoveKeys = append(cfg.RemoveKeys, r.Value)
	}
	return cfg, validate(data, remove, krm.JoinField(at, "data"), krm.JoinField(at, "removeKeys"))
}

// ConfigFromObject reads a functionConfig of an accepted kind (the
// binary's edge): the kind, the shapes of its fields, then NewConfig's
// checks, every problem about fc. Problems of error severity mean the
// config is unusable; warnings do not.
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
	data, p := krm.StringMap(fc, krm.Field(section, "data"), krm.JoinField(base, "data"))
	problems = append(problems, p...)
	var remove []krm.StringItem
	if base != "" { // a ConfigMap has no removeKeys
		remove, p = krm.StringList(fc, krm.Field(section, "removeKeys"), krm.JoinField(base, "removeKeys"))
		problems = append(problems, p...)
	}
	cfg, p := newConfig(data, remove, base)
	return cfg, append(problems, krm.About(fc, p)...)
}

func validate(data map[string]string, remove []krm.StringItem, dataField, removeField string) []krm.Problem {
	var problems []krm.Problem
	for _, k := range krm.SortedKeys(data) {
		if isReserved(k) {
			problems = append(problems, krm.Errorf(nil, dataField+"."+k,
				"`%s` must not contain the reserved key %q (kpt and Porch set it)", dataField, k))
		} else if msg := krm.ConfigMapKeyProblem(k); msg != "" {
			problems = append(problems, krm.Errorf(nil, dataField, "`%s` key %q %s", dataField, k, msg))
		}
	}
	for _, r := range remove {
		k, field := r.Value, removeField+"["+strconv.Itoa(r.Index)+"]"
		if isReserved(k) {
			problems = append(problems, krm.Errorf(nil, field,
				"`%s` must not be the reserved key %q (kpt and Porch set it)", field, k))
		} else if msg := krm.ConfigMapKeyProblem(k); msg != "" {
			problems = append(problems, krm.Errorf(nil, field, "`%s` %s", field, msg))
		} else if _, both := data[k]; both {
			problems = append(problems, krm.Warningf(nil, field,
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
