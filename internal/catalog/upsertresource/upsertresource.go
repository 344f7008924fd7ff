// Package upsertresource is upsert-resource of the kpt function catalog,
// v0.2.0 and its main branch (they behave alike), written from its README
// and its examples (`examples/upsert-resource-*` of
// github.com/kptdev/krm-functions-catalog) on kyaml's function framework,
// the framework the catalog's function uses.
//
// The function config is the resource to upsert, or a `List` of them. Each
// one replaces every object of the package with the same group, kind, name
// and namespace (and, when it has the annotation
// `config.kubernetes.io/target-path`, the same file); a replaced object
// keeps its file and index, takes the config's annotations, and loses the
// function and target-path annotations. With no match it is added, in the
// file its target-path names (else where kpt puts a new object). Objects
// that are function configs (annotated `config.kubernetes.io/function`) are
// never replaced. The group alone decides a match: v1 and v2 of a kind are
// the same resource.
//
// v0.1.0 (one resource, no List, no target-path) is not listed.
package upsertresource

import (
	"fmt"
	"io"
	"strings"

	"github.com/pvkit/pvkit/internal/catalog/internal/kyamlproc"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const (
	targetPath = "config.kubernetes.io/target-path"
	// the function annotations of kpt v1 and of kpt v0
	fnAnnotation, legacyFnAnnotation = "config.kubernetes.io/function", "config.k8s.io/function"
)

// Run is the function as a process: a ResourceList on in, the result on
// out, the error line on stderr; it returns the exit code.
func Run(in io.Reader, out, stderr io.Writer) int {
	p := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		items, err := upsert(rl.Items, rl.FunctionConfig)
		if err != nil {
			return fmt.Errorf("failed to upsert resource: %w", err)
		}
		rl.Items = items
		return nil
	})
	return kyamlproc.MainLine(p, in, out, stderr)
}

// upsert puts each resource of the config (one, or a List's items) into
// items.
func upsert(items []*yaml.RNode, cfg *yaml.RNode) ([]*yaml.RNode, error) {
	meta, err := cfg.GetMeta()
	if err != nil {
		return items, err
	}
	resources := []*yaml.RNode{cfg}
	if meta.Kind == "List" {
		resources = nil
		if list := cfg.Field("items"); list != nil {
			for _, n := range list.Value.Content() {
				resources = append(resources, yaml.NewRNode(n))
			}
		}
	}
	for _, r := range resources {
		if items, err = upsertOne(items, r); err != nil {
			return items, err
		}
	}
	return items, nil
}

func upsertOne(items []*yaml.RNode, r *yaml.RNode) ([]*yaml.RNode, error) {
	want, err := r.GetMeta()
	if err != nil {
		return items, err
	}
	replaced := false
	for i, it := range items {
		have, err := it.GetMeta()
		if err != nil {
			return items, err
		}
		if have.Annotations[fnAnnotation] != "" || have.Annotations[legacyFnAnnotation] != "" || !same(want, have) {
			continue
		}
		n := r.Copy()
		annotations := map[string]string{}
		for k, v := range want.Annotations {
			annotations[k] = v
		}
		annotations[kioutil.PathAnnotation] = have.Annotations[kioutil.PathAnnotation]
		annotations[kioutil.IndexAnnotation] = have.Annotations[kioutil.IndexAnnotation]
		for _, k := range []string{fnAnnotation, legacyFnAnnotation, targetPath} {
			delete(annotations, k)
		}
		if err := n.SetAnnotations(annotations); err != nil {
			return items, err
		}
		items[i] = n
		replaced = true
	}
	if replaced {
		return items, nil
	}
	n := r.Copy()
	annotations := n.GetAnnotations()
	for _, k := range []string{fnAnnotation, legacyFnAnnotation, kioutil.PathAnnotation, kioutil.IndexAnnotation, targetPath} {
		delete(annotations, k)
	}
	if p := want.Annotations[targetPath]; p != "" {
		annotations[kioutil.PathAnnotation] = p
	}
	if err := n.SetAnnotations(annotations); err != nil {
		return items, err
	}
	return append(items, n), nil
}

// same: the same group, kind, name and namespace, and the file the
// resource's target-path names, if it names one.
func same(want, have yaml.ResourceMeta) bool {
	group := func(apiVersion string) string {
		if g, _, ok := strings.Cut(apiVersion, "/"); ok {
			return g
		}
		return "" // the core group
	}
	return group(want.APIVersion) == group(have.APIVersion) && want.Kind == have.Kind && want.Name == have.Name && want.Namespace == have.Namespace &&
		(want.Annotations[targetPath] == "" || want.Annotations[targetPath] == have.Annotations[kioutil.PathAnnotation])
}
