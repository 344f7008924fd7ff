package packagevariant

import (
	"context"
	"encoding/json"
	"fmt"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/chain"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// mutate runs the chain on a draft and writes the result when it changed.
func (r *Reconciler) mutate(ctx context.Context, v *pvapi.PackageVariant, d store.Revision) (target, error) {
	res, err := r.Store.GetResources(ctx, v.Namespace, d.Name)
	if err != nil {
		return target{}, err
	}
	out, err := r.runChain(ctx, v, res.Files)
	if err != nil {
		return target{}, err
	}
	if !out.Changed {
		return target{name: d.Name}, nil
	}
	render, err := r.Store.UpdateResources(ctx, v.Namespace, d.Name, store.Resources{Files: out.Files, ResourceVersion: res.ResourceVersion})
	if err != nil {
		return target{}, fmt.Errorf("updating %s: %w", d.Name, err)
	}
	return target{name: d.Name, render: &render}, nil
}

// runChain runs the variant's mutations on files, with the in-cluster
// objects of the package's injection points' types as candidates.
func (r *Reconciler) runChain(ctx context.Context, v *pvapi.PackageVariant, files map[string]string) (*chain.Result, error) {
	types, err := chain.InjectionTypes(files)
	if err != nil {
		return nil, &userError{ReasonMutationFailed, err}
	}
	var candidates []*yaml.RNode
	for _, t := range types {
		objs, err := r.listObjects(ctx, v.Namespace, t.APIVersion, t.Kind)
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, objs...)
	}
	steps, err := chain.Steps(v, candidates)
	if err != nil {
		return nil, err
	}
	out, err := chain.Run(files, steps)
	if err != nil {
		return nil, &userError{ReasonMutationFailed, err}
	}
	return out, nil
}

// listObjects lists the objects of a kind in a namespace as YAML nodes. A
// kind the cluster does not serve has no objects (config-inject then records
// that no object of the type exists).
func (r *Reconciler) listObjects(ctx context.Context, namespace, apiVersion, kind string) ([]*yaml.RNode, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind+"List"))
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing %s %s in %q: %w", apiVersion, kind, namespace, err)
	}
	out := make([]*yaml.RNode, 0, len(list.Items))
	for _, o := range list.Items {
		b, err := json.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		n, err := krm.ParseJSON(b)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
