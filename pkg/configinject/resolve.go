package configinject

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// choice is what a point of a given type receives: a candidate, or the reason
// there is none.
type choice struct {
	candidate *yaml.RNode
	reason    string
}

// resolver chooses candidates. The choice depends only on the point's type,
// so it is made once per type over an index built once per run.
type resolver struct {
	cfg    *Config
	byName map[typeKey]map[string]*yaml.RNode
	chosen map[typeKey]choice
}

func newResolver(cfg *Config) *resolver {
	r := &resolver{cfg: cfg, byName: map[typeKey]map[string]*yaml.RNode{}, chosen: map[typeKey]choice{}}
	for _, c := range cfg.Candidates {
		apiVersion, kind := krm.TypeMeta(c.YNode())
		t := typeKey{apiVersion, kind}
		if r.byName[t] == nil {
			r.byName[t] = map[string]*yaml.RNode{}
		}
		r.byName[t][krm.Name(c.YNode())] = c
	}
	return r
}

// choose returns the choice for points of type t.
func (r *resolver) choose(t typeKey) choice {
	if c, ok := r.chosen[t]; ok {
		return c
	}
	c := r.compute(t)
	r.chosen[t] = c
	return c
}

func (r *resolver) compute(t typeKey) choice {
	if len(r.cfg.Injectors) == 0 {
		return choice{reason: "no injectors defined"}
	}
	named := r.byName[t]
	if len(named) == 0 {
		return choice{reason: fmt.Sprintf("no in-cluster resources of type %s", t)} // Porch's text (rule: porch-texts)
	}
	for _, inj := range r.cfg.Injectors {
		if !MayMatch(inj.Group, inj.Version, inj.Kind, krm.GVK{APIVersion: t.apiVersion, Kind: t.kind}) {
			continue
		}
		if c, ok := named[inj.Name]; ok {
			return choice{candidate: c}
		}
	}
	return choice{reason: NoMatch}
}

// NoMatch is the reason a point's condition gives when the cluster has
// objects of its type but no injector selects one (Porch's text).
const NoMatch = "no resource matched any injection selector for this injection point"

func matches(want *string, got string) bool { return want == nil || *want == got }

// MayMatch reports whether an injector with these fields can select an
// object of type g for an injection point: the one matching rule, also used
// to decide which kinds need listing at all.
func MayMatch(group, version, kind *string, g krm.GVK) bool {
	return matches(group, krm.Group(g.APIVersion)) && matches(version, krm.Version(g.APIVersion)) && matches(kind, g.Kind)
}
