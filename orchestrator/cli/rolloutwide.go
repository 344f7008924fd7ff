package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// readChildren are set's children (variants it owns), from the cluster or
// the last run's state, by name.
func (o *Options) readChildren(ctx context.Context, cf clusterFlags, set *pvsapi.PackageVariantSet) ([]pvapi.PackageVariant, error) {
	var all []pvapi.PackageVariant
	if cf.set() {
		c, err := ClusterClient(cf.kubeconfig, cf.context)
		if err != nil {
			return nil, err
		}
		var list pvapi.PackageVariantList
		if err := c.List(ctx, &list, client.InNamespace(o.Namespace)); err != nil {
			return nil, fmt.Errorf("listing the children of PackageVariantSet %s: %w", set.Name, err)
		}
		all = list.Items
	} else {
		st, err := state.Read(filepath.Join(o.Repos, state.File))
		if err != nil {
			return nil, err
		}
		all = st.Variants
	}
	var out []pvapi.PackageVariant
	for _, v := range all {
		for _, r := range v.OwnerReferences {
			if r.Kind == "PackageVariantSet" && r.Name == set.Name {
				out = append(out, v)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// printHealth prints, for rollout status -o wide, each child's published
// targets' health as the cluster reports it: its words whole (the
// message expression's, or the object's Ready condition's), not pvkit's
// summary of them.
func printHealth(w io.Writer, children []pvapi.PackageVariant) {
	n := 0
	for _, v := range children {
		for _, t := range v.Status.DownstreamTargets {
			h := t.Health
			if h == nil {
				continue
			}
			if n == 0 {
				fmt.Fprintln(w, "  health (as each cluster reports it):")
			}
			n++
			words := h.Reported
			if words == "" {
				words = h.Message
			}
			fmt.Fprintf(w, "    %s %s: %s %s (%s): %s\n", v.Name, t.Name, h.Status, h.Reason, h.Object, words)
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "  health: no child reads one (spec.rollout.health), or none is published yet")
	}
}
