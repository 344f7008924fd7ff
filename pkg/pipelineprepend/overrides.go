package pipelineprepend

import (
	"fmt"
	"path"
	"strings"

	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// overrides (rule: blueprint-runs-last) warns of an owner's prepended
// function that the blueprint's own pipeline runs again after it, setting
// the same things: kpt and Porch run the prepended (the variant's)
// functions first, so a later function of the same kind (set-namespace
// after set-namespace, set-labels of the same key) sets what both set, and
// the package ends with the blueprint's values while the variant says
// Ready. What a function sets is read from its config (its configMap's
// keys, or those of the configPath object: data keys, the keys of a map
// field such as SetLabels' labels, a scalar field's name); a function with
// no config it can read is taken to set everything. One warning per pair,
// naming both entries; nothing is changed.
func overrides(items []*yaml.RNode, kf *kptfile.Kptfile, owner string) ([]krm.Problem, error) {
	var out []krm.Problem
	for _, list := range lists {
		steps, err := kf.Pipeline(list)
		if err != nil {
			return nil, err
		}
		for i, mine := range steps {
			name, _ := krm.ScalarAt(mine, "name")
			if !Owns(owner, name) {
				continue
			}
			kind, sets := functionKind(mine), configKeys(items, mine)
			for j := i + 1; j < len(steps); j++ {
				// The blueprint's own entries only: another owner's (a chained
				// variant's) are that owner's to answer for.
				other, _ := krm.ScalarAt(steps[j], "name")
				if strings.HasPrefix(other, Prefix+".") || kind == "" || functionKind(steps[j]) != kind || !overlap(sets, configKeys(items, steps[j])) {
					continue
				}
				field := fmt.Sprintf("pipeline.%s[%d]", list, j)
				out = append(out, krm.Warningf(nil, field,
					"the blueprint's own %s (`%s`) runs after the variant's (`pipeline.%s[%d]`, %s) and sets what it sets: the package ends with the blueprint's values; "+
						"remove it from the blueprint, or give it the variant's values through the package context", kind, field, list, i, name).InFile(kptfile.FileName))
			}
		}
	}
	return out, nil
}

// functionKind is which function a pipeline entry runs, whatever its
// registry, tag or digest: the image's last path element (set-namespace
// for gcr.io/kpt-fn/set-namespace:v0.4.1 and
// ghcr.io/kptdev/krm-functions-catalog/set-namespace@sha256:...), or the
// exec's file name.
func functionKind(step *yaml.Node) string {
	ref, _ := krm.ScalarAt(step, "image")
	if ref == "" {
		exe, _ := krm.ScalarAt(step, "exec")
		if fields := strings.Fields(exe); len(fields) > 0 {
			return path.Base(fields[0])
		}
		return ""
	}
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return path.Base(ref)
}

// configKeys is what a pipeline entry's config sets (nil: unknown).
func configKeys(items []*yaml.RNode, step *yaml.Node) map[string]bool {
	if cm := krm.Field(step, "configMap"); cm != nil {
		return keysOf(cm)
	}
	p, _ := krm.ScalarAt(step, "configPath")
	if p == "" {
		return nil
	}
	for _, it := range items {
		if krm.Path(it) != path.Clean(p) {
			continue
		}
		n := it.YNode()
		if _, kind := krm.TypeMeta(n); kind == "ConfigMap" {
			return keysOf(krm.Field(n, "data"))
		}
		out := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, v := n.Content[i].Value, n.Content[i+1]
			switch key {
			case "apiVersion", "kind", "metadata":
			default:
				if v.Kind == yaml.MappingNode {
					for k := range keysOf(v) {
						out[k] = true
					}
				} else {
					out[key] = true
				}
			}
		}
		return out
	}
	return nil
}

// keysOf are a mapping's keys.
func keysOf(m *yaml.Node) map[string]bool {
	out := map[string]bool{}
	if m == nil || m.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = true
	}
	return out
}

// overlap: two configs set something in common (an unknown one, anything).
func overlap(a, b map[string]bool) bool {
	if a == nil || b == nil {
		return true
	}
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}
