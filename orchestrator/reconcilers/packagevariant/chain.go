package packagevariant

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/variant"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// inputs are what a chain run depended on besides the variant and the
// package: the injected kinds and a fingerprint of their objects.
type inputs struct {
	types      []krm.GVK
	candidates string
}

// same says whether two chain runs read the same injected objects.
func (in *inputs) same(other *inputs) bool {
	return in != nil && other != nil && in.candidates == other.candidates && slices.Equal(in.types, other.types)
}

// runChain runs the variant's mutations on files (parsed once), with the
// in-cluster objects of the package's injection points' types as candidates.
func (r *Reconciler) runChain(ctx context.Context, v *pvapi.PackageVariant, files map[string]string) (*variant.Result, *inputs, error) {
	pkg, err := variant.Load(files)
	if err != nil {
		return nil, nil, kit.Stall(pvapi.ReasonMutationFailed, err)
	}
	in := &inputs{types: r.readTypes(v, pkg.InjectionTypes())}
	candidates, fp, err := r.candidates(ctx, v.Namespace, in.types)
	if err != nil {
		return nil, nil, err
	}
	in.candidates = fp
	c, err := variant.NewChain(v.Core(), candidates)
	if err != nil {
		return nil, nil, kit.Stall(pvapi.ReasonMutationFailed, err)
	}
	out, err := pkg.Run(c)
	if err != nil {
		return nil, nil, kit.Stall(pvapi.ReasonMutationFailed, err)
	}
	return out, in, nil
}

// readTypes are the injection points' types whose objects the chain needs:
// every readable one (config-inject's messages depend on whether objects of
// the type exist), and of the others only those an injector of the variant
// may select, which stall with KindNotAllowed. A point of a kind pvkit may
// not read that no injector names is left alone, as Porch leaves it: an
// optional one proceeds, a required one reports that no object matched.
func (r *Reconciler) readTypes(v *pvapi.PackageVariant, types []krm.GVK) []krm.GVK {
	var out []krm.GVK
	for _, t := range types {
		wanted := r.Kinds.Allows(t)
		for _, inj := range v.Spec.Injectors {
			wanted = wanted || configinject.MayMatch(inj.Group, inj.Version, inj.Kind, t)
		}
		if wanted {
			out = append(out, t)
		}
	}
	return out
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
