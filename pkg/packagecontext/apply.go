package packagecontext

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Summary counts what Apply did to the data keys.
type Summary struct {
	Added, Updated, Removed, Unchanged int
	// Nothing is set when the config had no keys to set or remove.
	Nothing bool
}

func (s Summary) String() string {
	if s.Nothing {
		return "nothing to do: the functionConfig sets and removes no keys"
	}
	return fmt.Sprintf("ConfigMap %q in %q: %d key(s) added, %d updated, %d removed, %d unchanged",
		ConfigMapName, FileName, s.Added, s.Updated, s.Removed, s.Unchanged)
}

// Apply edits the package context among items. On any problem it changes
// nothing. An empty config is a no-op even when the file is missing.
func Apply(items []*yaml.RNode, cfg *Config) (Summary, []krm.Problem) {
	if cfg.Empty() {
		return Summary{Nothing: true}, nil
	}
	data, problems := locate(items)
	if len(problems) > 0 {
		return Summary{}, problems
	}
	return edit(data, cfg), nil
}

// locate finds ConfigMap "kptfile.kpt.dev" in package-context.yaml and its
// `data` map, checking each way the file can be wrong.
func locate(items []*yaml.RNode) (*yaml.Node, []krm.Problem) {
	inFile := krm.ItemsAt(items, FileName)
	fail := func(obj *yaml.RNode, field, format string, a ...any) (*yaml.Node, []krm.Problem) {
		return nil, []krm.Problem{krm.Errorf(obj, field, format, a...).InFile(FileName)}
	}
	switch len(inFile) {
	case 0:
		return fail(nil, "", "file not found; the package context must be ConfigMap %q in %q", ConfigMapName, FileName)
	case 1:
	default:
		return fail(nil, "", "must hold exactly one object, the package context ConfigMap %q; found %d objects", ConfigMapName, len(inFile))
	}
	cm := inFile[0]
	n := cm.YNode()
	apiVersion, kind := krm.TypeMeta(n)
	if !krm.ConfigMapGVK.Is(cm) {
		return fail(cm, "kind", "the package context must be a v1 ConfigMap, found apiVersion %q kind %q", apiVersion, kind)
	}
	if name := krm.Name(n); name != ConfigMapName {
		return fail(cm, "metadata.name", "the package context ConfigMap must be named %q, found %q", ConfigMapName, name)
	}
	data := krm.Field(n, "data")
	if krm.IsNull(data) {
		return fail(cm, "data", "the package context ConfigMap must have a `data` field")
	}
	if data.Kind != yaml.MappingNode {
		return fail(cm, "data", "`data` must be a map of strings, found %s", krm.KindName(data))
	}
	for i := 0; i+1 < len(data.Content); i += 2 {
		if v := data.Content[i+1]; v.Kind != yaml.ScalarNode {
			k := data.Content[i].Value
			return fail(cm, "data."+k, "`data.%s` must be a string, found %s", k, krm.KindName(v))
		}
	}
	return data, nil
}

// edit sets and removes keys in the data mapping. A key listed in both
// data and removeKeys is not set, only removed: the result of setting then
// removing, without counting it twice.
func edit(data *yaml.Node, cfg *Config) Summary {
	var s Summary
	remove := make(map[string]bool, len(cfg.RemoveKeys))
	for _, k := range cfg.RemoveKeys {
		remove[k] = true
	}
	for _, k := range krm.SortedKeys(cfg.Data) {
		if remove[k] {
			continue
		}
		v := cfg.Data[k]
		switch cur := krm.Field(data, k); {
		case cur == nil:
			data.Content = append(data.Content, krm.KeyNode(k), krm.StringNode(v))
			s.Added++
		case cur.Value == v:
			s.Unchanged++
		default:
			krm.SetString(cur, v)
			s.Updated++
		}
	}
	for _, k := range cfg.RemoveKeys {
		if krm.RemoveField(data, k) {
			s.Removed++
		}
	}
	return s
}
