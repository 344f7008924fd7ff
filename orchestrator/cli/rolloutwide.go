package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
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
// summary of them. What matters first: the members of the waves not
// complete (the open one first: during the canary, the canary), then the
// failed children, then the others not healthy; the rest, healthy, are
// counted in one line unless all (--all) asks for every line.
func printHealth(w io.Writer, set *pvsapi.PackageVariantSet, children []pvapi.PackageVariant, all bool) {
	rank := map[string]int{}
	if r := set.Status.Rollout; r != nil {
		for _, f := range r.Failed {
			n, _, _ := strings.Cut(f, ": ")
			rank[n] = 2
		}
		for i := len(r.Waves) - 1; i >= 0; i-- {
			if r.Waves[i].State == v1alpha2.WaveComplete {
				continue
			}
			for _, m := range r.Waves[i].Members {
				if rank[m] == 0 || r.Waves[i].State == v1alpha2.WaveOpen {
					rank[m] = 1
				}
			}
		}
	}
	type line struct {
		rank int
		text string
	}
	var lines []line
	healthy := 0
	for _, v := range children {
		for _, t := range v.Status.DownstreamTargets {
			h := t.Health
			if h == nil {
				continue
			}
			words := h.Reported
			if words == "" {
				words = h.Message
			}
			k := rank[v.Name]
			if k == 0 && h.Status != "True" {
				k = 3
			}
			if k == 0 {
				healthy++
				k = 4
				if !all {
					continue
				}
			}
			lines = append(lines, line{k, fmt.Sprintf("    %s %s: %s %s (%s): %s", v.Name, t.Name, h.Status, h.Reason, h.Object, words)})
		}
	}
	if len(lines) == 0 && healthy == 0 {
		fmt.Fprintln(w, "  health: no child reads one (spec.rollout.health), or none is published yet")
		return
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].rank < lines[j].rank })
	fmt.Fprintln(w, "  health (as each cluster reports it; the waves under way first, then the failed, then the others not healthy):")
	for _, l := range lines {
		fmt.Fprintln(w, l.text)
	}
	if !all && healthy > 0 {
		fmt.Fprintf(w, "    and %d other targets healthy, outside the waves under way (--all lists them)\n", healthy)
	}
}
