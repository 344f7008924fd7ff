package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ErrNotServed: the cluster serves no such kind (no CRD, or not yet).
var ErrNotServed = errors.New("the cluster does not serve this kind")

// List lists the objects of a kind in a namespace. A kind the cluster does
// not serve is ErrNotServed (wrapped, naming the kind): the PackageVariant
// reconciler reads it as "no objects of that type", the set reconciler as a
// failed target (rule: no-removal-on-partial).
func List(ctx context.Context, c client.Client, namespace string, g krm.GVK) ([]unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(schema.FromAPIVersionAndKind(g.APIVersion, g.Kind+"List"))
	if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("listing %s in %q: %w", g, namespace, ErrNotServed)
		}
		return nil, fmt.Errorf("listing %s in %q: %w", g, namespace, err)
	}
	return l.Items, nil
}

// ListNodes is List with each object as a YAML node: objects config-inject
// copies into a package, whose content is YAML.
func ListNodes(ctx context.Context, c client.Client, namespace string, g krm.GVK) ([]*yaml.RNode, error) {
	items, err := List(ctx, c, namespace, g)
	if err != nil {
		return nil, err
	}
	out := make([]*yaml.RNode, 0, len(items))
	for i := range items {
		n, err := toNode(items[i].Object)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// toNode converts an object (anything JSON-encodable) to a YAML node.
func toNode(v any) (*yaml.RNode, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return krm.ParseJSON(b)
}
