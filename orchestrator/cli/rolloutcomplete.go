package cli

import (
	"path/filepath"
	"slices"
	"strings"

	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rolloutArgs completes a rollout verb's arguments from the last run's
// state: first a set with a rollout; then, for a verb on
// children, the set's children not given yet (skip refuses a child that
// has not failed, naming it); for a verb on a wave, the set's waves.
// Nothing is offered past what the verb takes.
func rolloutArgs(o *Options, children, wave bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, given []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
		st, err := state.Read(filepath.Join(o.Repos, state.File))
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		add := func(name string) {
			if strings.HasPrefix(name, prefix) && !slices.Contains(given, name) {
				out = append(out, name)
			}
		}
		if len(given) == 0 {
			for _, s := range st.Sets {
				if s.Spec.Rollout != nil {
					add(s.Name)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		i := slices.IndexFunc(st.Sets, func(s pvsapi.PackageVariantSet) bool { return s.Name == given[0] })
		if i < 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		set := &st.Sets[i]
		switch {
		case wave && len(given) == 1 && set.Spec.Rollout != nil:
			for _, w := range set.Spec.Rollout.Waves {
				add(w.Name)
			}
		case children:
			for _, v := range st.Variants {
				if owner := metav1.GetControllerOf(&v); owner != nil && owner.Kind == "PackageVariantSet" && owner.UID == set.UID {
					add(v.Name)
				}
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
