package configinject

import (
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Process is the config-inject KRM function: one info summary, a warning per
// required point left without an object, and a result per error. On error
// the items are left as they were.
var Process = krm.AsProcessor(Run)

// Run applies a ConfigInjection to items, for in-process callers.
func Run(items []*yaml.RNode, fc *yaml.RNode) (string, []krm.Problem) {
	return krm.Mutate("config-inject", items, fc, ConfigFromObject, Apply)
}
