package configinject

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	// PointAnnotation marks an injection point; its value is Required or Optional.
	PointAnnotation = "kpt.dev/config-injection"
	Required        = "required"
	Optional        = "optional"
	// InjectedAnnotation records the name of the injected in-cluster object.
	InjectedAnnotation = "kpt.dev/injected-resource"
	// ConditionPrefix starts every injection condition type.
	ConditionPrefix = "config.injection"
	// Reasons of injection conditions.
	ReasonInjected   = "ConfigInjected"
	ReasonNoResource = "NoResourceSelected"
)

// Point is an injection point.
type Point struct {
	Item       *yaml.RNode
	APIVersion string
	Kind       string
	Name       string
	Required   bool
}

// ConditionType is `config.injection.<Kind>.<metadata.name>`.
func (p *Point) ConditionType() string {
	return ConditionPrefix + "." + p.Kind + "." + p.Name
}

func (p *Point) typeKey() typeKey { return typeKey{p.APIVersion, p.Kind} }

// FindPoints returns the package's injection points in item order, and a
// problem for every invalid annotation value and every duplicate condition
// type.
func FindPoints(items []*yaml.RNode) ([]*Point, []krm.Problem) {
	var points []*Point
	var problems []krm.Problem
	byType := map[string]*Point{}
	for _, it := range items {
		v, ok := krm.ScalarAt(it.YNode(), "metadata", "annotations", PointAnnotation)
		if !ok {
			continue
		}
		if v != Required && v != Optional {
			problems = append(problems, krm.Errorf(it, "metadata.annotations."+PointAnnotation,
				"annotation %q must be %q or %q, found %q", PointAnnotation, Required, Optional, v))
			continue
		}
		apiVersion, kind := krm.TypeMeta(it.YNode())
		p := &Point{Item: it, APIVersion: apiVersion, Kind: kind, Name: krm.Name(it.YNode()), Required: v == Required}
		ct := p.ConditionType()
		if prev, dup := byType[ct]; dup {
			problems = append(problems, krm.Errorf(it, "metadata.name",
				"injection point condition type %q is also that of %s in %q; kind and name must be unique among injection points",
				ct, krm.Describe(prev.Item.YNode()), krm.Path(prev.Item)))
			continue
		}
		byType[ct] = p
		points = append(points, p)
	}
	return points, problems
}

// typeKey is an object type: apiVersion and kind.
type typeKey struct{ apiVersion, kind string }

func (t typeKey) String() string { return fmt.Sprintf("%s.%s", t.apiVersion, t.kind) }
