package pvsexpand

import (
	"context"
	"errors"
	"fmt"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DryRunAnnotation on the set makes the function report what it would do
// and change nothing.
const DryRunAnnotation = "fn.pvkit.dev/dry-run"

// ConfigGVK is the config kind of pvs-expand.
var ConfigGVK = krm.GVK{APIVersion: v1alpha2.APIVersion, Kind: v1alpha2.Kind}

// ConfigFromObject reads and validates a PackageVariantSet config.
func ConfigFromObject(fc *yaml.RNode) (*v1alpha2.PackageVariantSet, []krm.Problem) {
	accepted := []krm.GVK{ConfigGVK}
	if fc == nil || krm.IsKptPlaceholder(fc) {
		return nil, []krm.Problem{krm.MissingConfig(accepted)}
	}
	if !ConfigGVK.Is(fc) {
		return nil, []krm.Problem{krm.UnsupportedConfig(fc, accepted)}
	}
	set := &v1alpha2.PackageVariantSet{}
	problems := krm.Decode(fc, set)
	if krm.HasErrorProblems(problems) {
		return nil, problems
	}
	problems = append(problems, krm.About(fc, Validate(set))...)
	return set, problems
}

// Process is the pvs-expand KRM function, a generator: it adds, updates and
// removes PackageVariant items. Results: an info result per child created,
// updated, removed (every child in a dry run), and the summary.
//
// A target entry that cannot be computed (a CEL error, a selected object with
// no Repository, two entries rendering one downstream, a kind that cannot be
// listed) is an error naming the entry and its field: the function exits
// non-zero and writes nothing, as the contract asks of every function.
// Partial success (the other children written, nothing removed) is the
// controller's, which calls Expand and Plan itself. A dry run still lists
// every planned step next to the errors.
func Process(rl *krm.ResourceList) { ProcessContext(context.Background(), rl) }

// ProcessContext is Process within ctx: its deadline, set by the caller
// (the binary sets one), bounds the expansion's CEL evaluations.
func ProcessContext(ctx context.Context, rl *krm.ResourceList) {
	set, problems := ConfigFromObject(rl.FunctionConfig)
	report := func(ps []krm.Problem) {
		for _, p := range ps {
			rl.Results = append(rl.Results, p.Result())
		}
	}
	if krm.HasErrorProblems(problems) {
		report(problems)
		rl.Results = append(rl.Results, krm.Info("%s", krm.FailureSummary("pvs-expand", problems)))
		return
	}
	x, err := Expand(ctx, set, WorldFromItems(set.Metadata.Namespace, rl.Items))
	field := "spec.upstream"
	if errors.Is(err, ErrTooManyChildren) {
		field = "spec.targets"
	}
	var steps []Step
	if err == nil {
		steps, err = PlanItems(set, x, rl.Items)
		field = ""
	}
	if err != nil {
		problems = append(problems, krm.Errorf(rl.FunctionConfig, field, "%v", err))
		report(problems)
		rl.Results = append(rl.Results, krm.Info("%s", krm.FailureSummary("pvs-expand", problems)))
		return
	}
	for _, f := range x.Failures {
		problems = append(problems, krm.Errorf(rl.FunctionConfig, f.Field, "target %s could not be computed: %s", f.Where, f.Message))
	}
	report(problems)
	dryRun := set.Metadata.Annotations[DryRunAnnotation] == "true"
	if len(x.Failures) > 0 {
		if dryRun {
			rl.Results = append(rl.Results, stepResults(steps, true)...)
		}
		rl.Results = append(rl.Results, krm.Info("%s", krm.FailureSummary("pvs-expand", problems)+
			fmt.Sprintf(" (target entries not computed: %d; no PackageVariant was written)", len(x.Failures))))
		return
	}
	rl.Results = append(rl.Results, stepResults(steps, dryRun)...)
	if !dryRun {
		items, err := ApplyItems(rl.Items, steps)
		if err != nil {
			rl.Results = append(rl.Results, krm.Errorf(rl.FunctionConfig, "", "%v", err).Result())
			return
		}
		rl.Items = items
	}
	rl.Results = append(rl.Results, krm.Info("%s", summary(set, x, steps, dryRun)))
}

func stepResults(steps []Step, dryRun bool) fn.Results {
	var out fn.Results
	for _, s := range steps {
		if !dryRun && s.Action == Unchanged {
			continue
		}
		msg := fmt.Sprintf("PackageVariant %q: %s", s.Name, s.Action)
		switch {
		case s.Action == Keep:
			msg += " (its target is gone, but some target could not be computed)"
		case s.Where != "":
			msg += " for target " + s.Where
		}
		r := krm.Problem{Severity: fn.Info, Object: s.item, Message: msg}.Result()
		if d := s.Desired; d != nil { // the child as written: no file yet
			r.File = nil
			r.ResourceRef = &fn.ResourceRef{APIVersion: d.APIVersion, Kind: d.Kind, Name: d.Metadata.Name, Namespace: d.Metadata.Namespace}
		}
		out = append(out, r)
	}
	return out
}

func summary(set *v1alpha2.PackageVariantSet, x *Expansion, steps []Step, dryRun bool) string {
	count := map[Action]int{}
	for _, s := range steps {
		count[s.Action]++
	}
	s := fmt.Sprintf("PackageVariantSet %q: %d PackageVariant(s): %d created, %d updated, %d unchanged, %d removed",
		set.Metadata.Name, len(x.Children), count[Create], count[Update], count[Unchanged], count[Remove])
	if dryRun {
		s += " (dry run: nothing was changed)"
	}
	return s
}
