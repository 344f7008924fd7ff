package pipelineprepend

import (
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Process is the pipeline-prepend KRM function: one info summary, plus a
// result per error. On error the items are left as they were.
var Process = krm.AsProcessor(Run)

// Run applies a functionConfig to items, for in-process callers.
func Run(items []*yaml.RNode, fc *yaml.RNode) (string, []krm.Problem) {
	return krm.Mutate("pipeline-prepend", items, fc, ConfigFromObject, Apply)
}
