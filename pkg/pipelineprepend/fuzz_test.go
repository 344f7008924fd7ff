package pipelineprepend

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// FuzzPipelinePrepend: any package file and any functionConfig, through the
// binary's code path. Seeds: the golden cases.
func FuzzPipelinePrepend(f *testing.F) {
	fntest.FuzzFunction(f, "pipeline-prepend", Process,
		[2]string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
			"apiVersion: fn.pvkit.dev/v1alpha1\nkind: PipelinePrepend\nmetadata:\n  name: a.b\nspec:\n  mutators:\n  - image: x\n"})
}
