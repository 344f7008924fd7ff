package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/chain"
	"github.com/pvkit/pvkit/orchestrator/controllers/kit"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mutate runs the chain on a draft and writes the result when it changed.
// It returns the target, whether it wrote, and the inputs it ran on.
func (r *Reconciler) mutate(ctx context.Context, v *pvapi.PackageVariant, d store.Revision) (target, bool, *inputs, error) {
	res, err := r.Store.GetResources(ctx, v.Namespace, d.Name)
	if err != nil {
		return target{}, false, nil, err
	}
	out, in, err := r.runChain(ctx, v, res.Files)
	if err != nil {
		return target{}, false, nil, err
	}
	if !out.Changed {
		return target{name: d.Name}, false, in, nil
	}
	render, err := r.Store.UpdateResources(ctx, v.Namespace, d.Name, store.Resources{Files: out.Files, ResourceVersion: res.ResourceVersion, Origin: res.Origin})
	if errors.Is(err, store.ErrRenderFailed) {
		t := target{name: d.Name, render: &render}
		return t, false, nil, &renderFailure{target: t, err: fmt.Errorf("updating %s: %w", d.Name, err)}
	}
	if err != nil {
		return target{}, false, nil, fmt.Errorf("updating %s: %w", d.Name, err)
	}
	return target{name: d.Name, render: &render}, true, in, nil
}

// inputs are what a chain run depended on besides the variant and the
// package: the injected kinds and a fingerprint of their objects.
type inputs struct {
	types      []krm.GVK
	candidates string
}

// runChain runs the variant's mutations on files (parsed once), with the
// in-cluster objects of the package's injection points' types as candidates.
func (r *Reconciler) runChain(ctx context.Context, v *pvapi.PackageVariant, files map[string]string) (*chain.Result, *inputs, error) {
	pkg, err := chain.Load(files)
	if err != nil {
		return nil, nil, kit.Stall(pvapi.ReasonMutationFailed, err)
	}
	in := &inputs{types: pkg.InjectionTypes()}
	candidates, fp, err := r.candidates(ctx, v.Namespace, in.types)
	if err != nil {
		return nil, nil, err
	}
	in.candidates = fp
	steps, err := chain.Steps(v, candidates)
	if err != nil {
		return nil, nil, err
	}
	out, err := pkg.Run(steps)
	if err != nil {
		return nil, nil, kit.Stall(pvapi.ReasonMutationFailed, err)
	}
	return out, in, nil
}

// candidates lists the objects of the given kinds (watching each kind) and
// fingerprints them by name and resource version.
func (r *Reconciler) candidates(ctx context.Context, namespace string, types []krm.GVK) ([]*yaml.RNode, string, error) {
	var out []*yaml.RNode
	var ids []string
	for _, t := range types {
		if !r.Kinds.Allows(t) {
			return nil, "", r.Kinds.Refuse(pvapi.ReasonKindNotAllowed, fmt.Sprintf("the package has an injection point of kind %s", t))
		}
		if err := r.watchKind(t.APIVersion, t.Kind); err != nil {
			return nil, "", err
		}
		objs, err := r.listObjects(ctx, namespace, t.APIVersion, t.Kind)
		if err != nil {
			return nil, "", err
		}
		for _, o := range objs {
			rv, _ := krm.ScalarAt(o.YNode(), "metadata", "resourceVersion")
			ids = append(ids, t.String()+"/"+krm.Name(o.YNode())+"@"+rv)
		}
		out = append(out, objs...)
	}
	sort.Strings(ids)
	return out, strings.Join(ids, ","), nil
}

// listObjects lists the objects of a kind in a namespace as YAML nodes. A
// kind the cluster does not serve has no objects (config-inject then records
// that no object of the type exists, Porch's text).
func (r *Reconciler) listObjects(ctx context.Context, namespace, apiVersion, kind string) ([]*yaml.RNode, error) {
	objs, err := kit.ListNodes(ctx, r.Client, namespace, krm.GVK{APIVersion: apiVersion, Kind: kind})
	if errors.Is(err, kit.ErrNotServed) {
		return nil, nil
	}
	return objs, err
}

// renderFailure is an update Porch refused because the package's pipeline
// failed to render. The render status goes into the variant's
// status.downstreamTargets; the error is retried like any Porch failure (a
// function runner outage heals; a broken pipeline needs a package change,
// which the revision watch brings).
type renderFailure struct {
	target target
	err    error
}

func (e *renderFailure) Error() string { return e.err.Error() }
func (e *renderFailure) Unwrap() error { return e.err }
