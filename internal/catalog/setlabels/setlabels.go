// Package setlabels is set-labels v0.2.x of the kpt function catalog,
// written from its README and its e2e cases (`tests/set-labels`,
// `examples/set-labels-*` of github.com/kptdev/krm-functions-catalog), on
// the kpt function SDK the catalog's function uses, so that its messages,
// its function config kinds and the bytes it writes are the catalog's.
//
// What it does, as observed on the catalog's cases:
//   - every object that is not local config gets the labels in
//     `metadata.labels`, created when missing; existing keys keep their
//     place, new keys are added in sorted order;
//   - selectors and templates of the workload kinds get them too (the table
//     in places below): a selector marked "update" is only updated where a key
//     is already there (a Job's or a PodDisruptionBudget's selector is
//     immutable in practice, so v0.2 adds nothing to it);
//   - pod templates also update the label selectors of
//     topologySpreadConstraints; v0.2.x looks for pod affinity terms one
//     level too high (`affinity.requiredDuringScheduling...` next to
//     `affinity.podAffinity`), so a real affinity term is left alone. pvkit
//     does what v0.2.x does: a fix would change the bytes of every package
//     that has one.
//   - results: "set N labels in total", where N counts one per label per
//     place visited, whether it changed anything or not; "no input
//     resources" (info) when every object is local config; a warning when
//     the config gives no labels; and, from the SDK, "`FunctionConfig` is not
//     given" with a failure when there is no config at all.
package setlabels

import (
	"context"
	"io"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/internal/catalog/internal/sdkproc"
)

// SetLabels is the function config (kind SetLabels, fn.kpt.dev/v1alpha1)
// and the function. Its type name is the config kind the SDK checks, and
// appears in the SDK's conversion errors (`*setlabels.SetLabels`).
type SetLabels struct {
	Labels map[string]string `json:"labels,omitempty"`
	count  int
}

// Run is the function as a process: a ResourceList on in, the result on out,
// the SDK's failure line on stderr; it returns the exit code.
func Run(in io.Reader, out, stderr io.Writer) int {
	return sdkproc.Main(fn.WithContext(context.Background(), &SetLabels{}), in, out, stderr)
}

// placeholderConfig is kpt's stand-in for no config: `kpt fn eval` gives a
// ConfigMap function-input with no data, `kpt fn render` an empty object.
func placeholderConfig(o *fn.KubeObject) bool {
	if o.GetKind() == "ConfigMap" && o.GetName() == "function-input" {
		data, _, _ := o.NestedStringMap("data")
		return len(data) == 0
	}
	return o.GetKind() == "" && o.GetName() == ""
}

// Run implements fn.Runner.
func (s *SetLabels) Run(_ *fn.Context, cfg *fn.KubeObject, items fn.KubeObjects, results *fn.Results) bool {
	objects := items.WhereNot(fn.IsLocalConfig)
	if len(objects) == 0 || objects[0] == nil {
		results.Infof("no input resources")
		return true
	}
	if placeholderConfig(cfg) {
		return false
	}
	if len(s.Labels) == 0 {
		results.Warningf("no `labels` arguments are given in FunctionConfig")
		return true
	}
	s.count = 0
	for _, o := range objects {
		if err := s.object(o); err != nil {
			results.ErrorE(err)
		}
	}
	results.Infof("set %v labels in total", s.count)
	return results.ExitCode() != 1
}
