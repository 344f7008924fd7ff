package packagecontext

import (
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Process is the package-context KRM function: one info summary, plus a
// result per warning or error. On error the items are left as they were.
var Process = krm.AsProcessor(Run)

// Run applies a functionConfig to items, for in-process callers: it returns
// the summary line and every problem found.
func Run(items []*yaml.RNode, fc *yaml.RNode) (string, []krm.Problem) {
	return krm.Mutate("package-context", items, fc, ConfigFromObject, Apply)
}
