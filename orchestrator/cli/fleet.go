package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/pvkit/pvkit/orchestrator/local/state"
	"github.com/pvkit/pvkit/orchestrator/manager"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fleet is what status and events read: the sets, variants and events of
// pvctl run's state file, or of a namespace of a cluster.
type fleet struct {
	variants []pvapi.PackageVariant
	sets     []pvsapi.PackageVariantSet
	events   []state.Event
	now      time.Time
	// where names the source in messages.
	where string
	// revision says a downstream revision's lifecycle and readiness gates,
	// or "gone".
	revision func(ctx context.Context, name string) (string, error)
}

// clusterFlags are status's and events's way to a cluster.
type clusterFlags struct{ kubeconfig, context string }

func (cf *clusterFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&cf.kubeconfig, "kubeconfig", "", "read a cluster instead of the last run's state: this kubeconfig file (kubectl's rules: $KUBECONFIG, ~/.kube/config when empty and --context is set)")
	c.Flags().StringVar(&cf.context, "context", "", "read a cluster instead of the last run's state: this kubeconfig context")
}

func (cf clusterFlags) set() bool { return cf.kubeconfig != "" || cf.context != "" }

// ClusterClient connects to the cluster a kubeconfig and context name (as
// kubectl picks them); tests replace it.
var ClusterClient = manager.NewClient

// loadFleet reads the state file, or the cluster when cf says so.
func (o *Options) loadFleet(ctx context.Context, cf clusterFlags) (*fleet, error) {
	if cf.set() {
		c, err := ClusterClient(cf.kubeconfig, cf.context)
		if err != nil {
			return nil, err
		}
		return clusterFleet(ctx, c, o.Namespace)
	}
	st, err := state.Read(filepath.Join(o.Repos, state.File))
	if err != nil {
		return nil, err
	}
	f := &fleet{variants: st.Variants, sets: st.Sets, events: st.Events, now: time.Now(), where: "the last run's state"}
	var gs *local.Repos
	f.revision = func(ctx context.Context, name string) (string, error) {
		if gs == nil {
			if gs, err = openRepos(o.Repos, o.Namespace, false, o.Stderr); err != nil {
				return "", err
			}
		}
		for _, r := range gs.All(o.Namespace) {
			if r.Name == name {
				gates := "every readiness gate True"
				if err := local.CheckReady(ctx, gs, r); err != nil {
					gates = err.Error()
				}
				return string(r.Lifecycle) + "; " + gates, nil
			}
		}
		return "gone", nil
	}
	return f, nil
}

// clusterFleet reads a namespace of a cluster: its sets, variants and
// their Events, and the downstream revisions from Porch's API.
func clusterFleet(ctx context.Context, c client.Client, namespace string) (*fleet, error) {
	where := fmt.Sprintf("namespace %s of the cluster", namespace)
	var pvs pvapi.PackageVariantList
	if err := c.List(ctx, &pvs, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing PackageVariants in %s: %w", where, err)
	}
	var sets pvsapi.PackageVariantSetList
	if err := c.List(ctx, &sets, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing PackageVariantSets in %s: %w", where, err)
	}
	var evs corev1.EventList
	if err := c.List(ctx, &evs, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing Events in %s: %w", where, err)
	}
	sort.Slice(pvs.Items, func(i, j int) bool { return pvs.Items[i].Name < pvs.Items[j].Name })
	sort.Slice(sets.Items, func(i, j int) bool { return sets.Items[i].Name < sets.Items[j].Name })
	f := &fleet{variants: pvs.Items, sets: sets.Items, events: fromCoreEvents(evs.Items, "", ""), now: time.Now(), where: where}
	f.revision = func(ctx context.Context, name string) (string, error) {
		var pr porchapi.PackageRevision
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &pr)
		if apierrors.IsNotFound(err) {
			return "gone", nil
		}
		if err != nil {
			return "", fmt.Errorf("reading PackageRevision %s: %w", name, err)
		}
		return string(pr.Spec.Lifecycle) + "; " + gatesOf(&pr), nil
	}
	return f, nil
}

// gatesOf says whether every readiness gate of a PackageRevision has a
// True condition, as Porch checks before approval, or which has not.
func gatesOf(pr *porchapi.PackageRevision) string {
	conds := map[string]porchapi.ConditionStatus{}
	for _, c := range pr.Status.Conditions {
		conds[c.Type] = c.Status
	}
	var open []string
	for _, g := range pr.Spec.ReadinessGates {
		if conds[g.ConditionType] != porchapi.ConditionTrue {
			open = append(open, fmt.Sprintf("%q", g.ConditionType))
		}
	}
	if len(open) == 0 {
		return "every readiness gate True"
	}
	return "not ready: readiness gate " + strings.Join(open, ", ") + " not True"
}
