package embedded

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// List is the in-memory client's, but for a list with
// client.UnsafeDisableDeepCopy and at most a namespace and a label
// selector: the namespace's objects as last listed are filtered and given
// again, not decoded anew, until a write (controller-runtime's client
// without a cache decodes the whole namespace for every list; 400 sets of
// 25 listing 10,000 Repositories and PackageVariants each took a steady
// resync to 130 CPU seconds: docs/scale.md). As with an informer, the
// caller must not write to what it gets.
func (c *Cluster) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var o client.ListOptions
	o.ApplyOptions(opts)
	switch list.(type) {
	case *unstructured.UnstructuredList, *metav1.PartialObjectMetadataList: // one Go type for every kind
		return c.WithWatch.List(ctx, list, opts...)
	}
	if o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy || o.FieldSelector != nil || o.Limit > 0 || o.Continue != "" {
		return c.WithWatch.List(ctx, list, opts...)
	}
	key := listKey{reflect.TypeOf(list), o.Namespace}
	c.listMu.Lock()
	defer c.listMu.Unlock()
	all, err := c.kept(ctx, key, list)
	if err != nil {
		return err
	}
	items, err := apimeta.ExtractList(all)
	if err != nil {
		return err
	}
	kept := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		if m, err := apimeta.Accessor(it); err == nil && (o.LabelSelector == nil || o.LabelSelector.Matches(labels.Set(m.GetLabels()))) {
			kept = append(kept, it)
		}
	}
	return apimeta.SetList(list, kept)
}

// kept is the namespace's list as kept, brought up to date: listed whole
// the first time (kept unless a write ran meanwhile), then each object a
// write marked dirty read again (gone: dropped).
func (c *Cluster) kept(ctx context.Context, key listKey, list client.ObjectList) (client.ObjectList, error) {
	c.mu.Lock()
	all, ok := c.lists[key]
	epoch := c.epoch
	names := c.dirty[key]
	delete(c.dirty, key)
	c.mu.Unlock()
	if !ok {
		all = list.DeepCopyObject().(client.ObjectList)
		if err := c.WithWatch.List(ctx, all, client.InNamespace(key.namespace)); err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.epoch == epoch {
			if c.lists == nil {
				c.lists, c.kinds = map[listKey]client.ObjectList{}, map[listKey]string{}
			}
			c.lists[key], c.kinds[key] = all, strings.TrimSuffix(KindOf(c.Scheme(), all), "List")
		}
		c.mu.Unlock()
		return all, nil
	}
	if len(names) == 0 {
		return all, nil
	}
	fresh, err := c.refresh(ctx, key, all, names)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if _, still := c.lists[key]; still {
		c.lists[key] = fresh
	}
	c.mu.Unlock()
	return fresh, nil
}

// refresh is a kept list with the named objects read again: a new list
// (what callers were given stays as it was), sorted by name as the
// in-memory client lists.
func (c *Cluster) refresh(ctx context.Context, key listKey, all client.ObjectList, names map[string]bool) (client.ObjectList, error) {
	items, err := apimeta.ExtractList(all)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]runtime.Object, len(items))
	for _, it := range items {
		if m, err := apimeta.Accessor(it); err == nil {
			byName[m.GetName()] = it
		}
	}
	itemType := reflect.TypeOf(all).Elem()
	f, ok := itemType.FieldByName("Items")
	if !ok {
		return nil, fmt.Errorf("embedded cluster: list type %s has no Items", itemType)
	}
	for name := range names {
		obj, ok := reflect.New(f.Type.Elem()).Interface().(client.Object)
		if !ok {
			return nil, fmt.Errorf("embedded cluster: the items of %s are not objects", itemType)
		}
		err := c.WithWatch.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			delete(byName, name)
		case err != nil:
			return nil, err
		default:
			byName[name] = obj
		}
	}
	sorted := make([]string, 0, len(byName))
	for n := range byName {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	out := make([]runtime.Object, len(sorted))
	for i, n := range sorted {
		out[i] = byName[n]
	}
	fresh := reflect.New(itemType).Interface().(client.ObjectList)
	fresh.GetObjectKind().SetGroupVersionKind(all.GetObjectKind().GroupVersionKind())
	return fresh, apimeta.SetList(fresh, out)
}
