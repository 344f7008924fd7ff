package render

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Top-down rendering (the root Kptfile's kpt.dev/bfs-rendering: "true"),
// as kpt v1.0 and Porch v1.5.3 render: the packages found breadth first
// (subpackages in path order), then each package's pipeline run in that
// order on its own resources and its descendants' as the pipelines before
// it left them, so a package can change its subpackages and not its
// parent or siblings. What a pipeline returns goes back to the package its
// package-path names; a package none of the output names keeps what it
// had, as kpt keeps it.

// node is one package of a top-down render.
type node struct {
	dir       string
	pipeline  *pipeline
	resources []*yaml.RNode
	children  []*node
}

// hydrateTopDown renders the package at dir top-down and returns every
// package's resources; a failed render returns what it rendered so far.
func (h *hydration) hydrateTopDown(dir string) ([]*yaml.RNode, error) {
	all, err := h.discover(dir)
	if err != nil {
		return nil, err
	}
	collect := func() []*yaml.RNode {
		var out []*yaml.RNode
		for _, n := range all {
			out = append(out, n.resources...)
		}
		return out
	}
	for _, n := range all {
		input := append([]*yaml.RNode(nil), n.resources...)
		var below func(*node)
		below = func(p *node) {
			for _, c := range p.children {
				input = append(input, c.resources...)
				below(c)
			}
		}
		below(n)
		out, err := h.pipeline(n.dir, n.pipeline, input)
		if out == nil {
			out = input
		}
		n.resources = out
		distribute(n, all)
		if err != nil {
			return collect(), fmt.Errorf("package %s: %w", display(n.dir), err)
		}
	}
	return collect(), nil
}

// discover finds the packages under dir breadth first, each with its
// pipeline and its own resources (their files recorded as the render's
// input).
func (h *hydration) discover(dir string) ([]*node, error) {
	first := &node{dir: dir}
	queue, all := []*node{first}, []*node(nil)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		all = append(all, n)
		kf, err := readKptfile(h.fs, n.dir, h.opts.KptStatus)
		if err != nil {
			return nil, err
		}
		if h.functions += len(kf.Mutators) + len(kf.Validators); h.functions > MaxFunctions {
			return nil, fmt.Errorf("package %s: its pipeline brings the render to %d functions; a render runs at most %d (the package's pipeline and its subpackages' together)",
				display(n.dir), h.functions, MaxFunctions)
		}
		n.pipeline = kf
		if n.resources, err = localResources(h.fs, n.dir); err != nil {
			return nil, fmt.Errorf("package %s: %w", display(n.dir), err)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(n.dir, root), "/")
		for _, r := range n.resources {
			p, _, err := kioutil.GetFileAnnotations(r)
			if err != nil {
				return nil, err
			}
			h.inputFiles[path.Join(rel, path.Clean(p))] = true
		}
		subs, err := subpackages(h.fs, n.dir)
		if err != nil {
			return nil, err
		}
		for _, s := range subs {
			c := &node{dir: s}
			n.children = append(n.children, c)
			queue = append(queue, c)
		}
	}
	return all, nil
}

// distribute gives each package the resources of n's output its
// package-path names; n keeps its own.
func distribute(n *node, all []*node) {
	by := map[string][]*yaml.RNode{}
	for _, r := range n.resources {
		p := r.GetAnnotations()[pkgPathAnnotation]
		if p == "" {
			p = n.dir
		}
		by[p] = append(by[p], r)
	}
	for _, t := range all {
		if rs, ok := by[t.dir]; ok && t != n {
			t.resources = rs
		}
	}
	n.resources = by[n.dir]
}
