// Package tasks computes a new draft's files as Porch's tasks do: a clone
// copies the upstream and records it in the Kptfile; an upgrade merges old
// upstream, new upstream and local three ways. Every store that keeps files
// itself (memory, local git) uses it, so the semantics exist once.
package tasks

import (
	"fmt"
	"path"
	"sort"
	"strings"

	kptfilev1 "github.com/nephio-project/porch/pkg/kpt/api/kptfile/v1"
	"github.com/pvkit/pvkit/orchestrator/store"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge3"
)

const contextFile = "package-context.yaml"

// Clone is a clone's files as Porch v1.5.3's clone task writes them (rule
// porch-clone-shape): the upstream's files; the Kptfile named after the new
// package, recording the upstream and its lock (Porch's encoding,
// kptfile.go); in a deployment repository, a package-context.yaml
// generated beside every Kptfile (name: that Kptfile's name,
// package-path: the new package; the upstream's context data is dropped,
// nephio#408), elsewhere the upstream's context kept as it is; every
// resource marked with its merge key.
func Clone(up map[string]string, lock *store.Lock, pkg string, deployment bool) (map[string]string, error) {
	files := CopyFiles(up)
	if files, err := withUpstream(files, lock, pkg); err != nil {
		return files, err
	}
	if deployment {
		for _, name := range kptfileNames(files) {
			dir := path.Dir(name)
			kfName, err := nameOf(files[name])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			files[path.Join(dir, contextFile)] = packageContext(kfName, pkg)
		}
	}
	return WithMergeKeys(files)
}

// kptfileNames are the package's Kptfiles (its own and its
// subpackages'), sorted.
func kptfileNames(files map[string]string) []string {
	var out []string
	for name := range files {
		if path.Base(name) == kptfile.FileName {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// nameOf is a Kptfile's metadata.name.
func nameOf(text string) (string, error) {
	n, err := yaml.Parse(text)
	if err != nil {
		return "", err
	}
	return n.GetName(), nil
}

// packageContext is the package-context.yaml Porch generates for a
// package: name and package-path, built as nodes.
func packageContext(name, pkgPath string) string {
	cm := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata: {}\n")
	data := krm.Field(cm.YNode(), "data")
	data.Style = 0
	krm.SetField(data, "name", krm.StringNode(name))
	krm.SetField(data, "package-path", krm.StringNode(pkgPath))
	return cm.MustString()
}

// withUpstream names the Kptfile after pkg (when pkg is set) and records
// the upstream and its lock, as Porch does.
func withUpstream(files map[string]string, lock *store.Lock, pkg string) (map[string]string, error) {
	text, ok := files[kptfile.FileName]
	if !ok {
		return files, nil
	}
	upstream, upLock := porchUpstream(lock)
	out, porch, err := asPorch(text, func(kf *kptfilev1.KptFile) {
		kf.Upstream, kf.UpstreamLock = &upstream, &upLock
		if pkg != "" {
			kf.Name = pkg
		}
	})
	if err != nil {
		return nil, err
	}
	if !porch {
		if out, err = upstreamAsNodes(text, lock, pkg); err != nil {
			return nil, err
		}
	}
	files[kptfile.FileName] = out
	return files, nil
}

// WithLock records the upstream and its lock in the Kptfile, as Porch's
// upgrade does (the name is kept).
func WithLock(files map[string]string, lock *store.Lock) (map[string]string, error) {
	return withUpstream(files, lock, "")
}

// upstreamAsNodes is withUpstream on a Kptfile Porch's type cannot hold:
// edited as nodes, everything else kept. Built as nodes, never by
// formatting text: a package or ref with YAML's special characters (`a,b`,
// `x: y`) is recorded as it is.
func upstreamAsNodes(text string, lock *store.Lock, pkg string) (string, error) {
	items, err := krm.FilesToItems(map[string]string{kptfile.FileName: text})
	if err != nil {
		return "", err
	}
	upstream, upLock := porchUpstream(lock)
	for _, f := range []struct {
		field string
		git   map[string]string
	}{
		{"upstream", map[string]string{"repo": upstream.Git.Repo, "directory": upstream.Git.Directory, "ref": upstream.Git.Ref}},
		{"upstreamLock", map[string]string{"repo": upLock.Git.Repo, "directory": upLock.Git.Directory, "ref": upLock.Git.Ref, "commit": upLock.Git.Commit}},
	} {
		g := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, k := range []string{"repo", "directory", "ref", "commit"} {
			if v, ok := f.git[k]; ok && (v != "" || k != "commit") {
				krm.SetField(g, k, krm.StringNode(v))
			}
		}
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		krm.SetField(n, "type", krm.StringNode("git"))
		krm.SetField(n, "git", g)
		krm.SetField(items[0].YNode(), f.field, n)
	}
	if pkg != "" {
		krm.SetField(krm.EnsureMap(items[0].YNode(), "metadata"), "name", krm.StringNode(pkg))
	}
	out, err := krm.ItemsToFiles(items, map[string]string{kptfile.FileName: text})
	if err != nil {
		return "", err
	}
	return out[kptfile.FileName], nil
}

// Upgrade merges local changes with the move from the old upstream to the
// new one, object by object (kyaml merge3), as `kpt pkg update` and Porch's
// upgrade do: an object changed only upstream takes the change, one changed
// only locally keeps it, one changed on both sides gets both, field by field;
// objects added upstream are added, objects the upstream removed are removed
// unless changed locally.
func Upgrade(oldUp, newUp, local map[string]string, lock *store.Lock) (map[string]string, error) {
	o, err := index(oldUp)
	if err != nil {
		return nil, err
	}
	u, err := index(newUp)
	if err != nil {
		return nil, err
	}
	l, err := index(local)
	if err != nil {
		return nil, err
	}
	var items []*yaml.RNode
	for _, id := range l.order {
		dest, orig, upd := l.byID[id], o.byID[id], u.byID[id]
		switch {
		case orig == nil: // local, or added both sides: keep local
			items = append(items, dest)
		case upd == nil: // removed upstream
			if !krm.SemanticEqual(dest.YNode(), orig.YNode()) {
				items = append(items, dest)
			}
		default:
			var was *yaml.RNode
			if dest.GetKind() == kptfile.Kind {
				was = dest.Copy() // merge3 edits dest
			}
			merged, err := merge3.Merge(dest, orig, upd)
			if err != nil {
				return nil, fmt.Errorf("upgrade: merging %s: %w", id, err)
			}
			if merged != nil && merged.GetKind() == kptfile.Kind {
				// Gates merge by condition type, not as one list value.
				err = (&kptfile.Kptfile{Item: merged}).MergeReadinessGates(&kptfile.Kptfile{Item: orig}, &kptfile.Kptfile{Item: was}, &kptfile.Kptfile{Item: upd})
			}
			if err != nil {
				return nil, fmt.Errorf("upgrade: merging %s: %w", id, err)
			}
			items = append(items, merged)
		}
	}
	for _, id := range u.order {
		if l.byID[id] == nil && o.byID[id] == nil { // new upstream
			items = append(items, u.byID[id])
		}
	}
	files, err := krm.ItemsToFiles(items, local)
	if err != nil {
		return nil, err
	}
	for name, content := range newUp { // non-resource files new upstream
		if _, ok := files[name]; !ok && !krm.IsResourceFile(name) {
			files[name] = content
		}
	}
	if files, err = WithLock(files, lock); err != nil {
		return nil, err
	}
	return WithMergeKeys(files)
}

type indexed struct {
	order []string
	byID  map[string]*yaml.RNode
}

// index keys a package's objects by file, kind, namespace and name.
func index(files map[string]string) (*indexed, error) {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return nil, err
	}
	ix := &indexed{byID: map[string]*yaml.RNode{}}
	for _, it := range items {
		id := mergeKey(it)
		if _, dup := ix.byID[id]; !dup {
			ix.order = append(ix.order, id)
		}
		ix.byID[id] = it
	}
	return ix, nil
}

// CopyFiles copies a package's files.
func CopyFiles(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// LockOf reads the lock WithLock recorded in a package's Kptfile; a package
// without a Kptfile or without `upstreamLock.git` has none.
func LockOf(files map[string]string) (*store.Lock, error) {
	text, ok := files[kptfile.FileName]
	if !ok {
		return nil, nil
	}
	kf, err := yaml.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kptfile.FileName, err)
	}
	g, err := kf.Pipe(yaml.Lookup("upstreamLock", "git"))
	if err != nil || g == nil {
		return nil, err
	}
	field := func(name string) string {
		if f := g.Field(name); f != nil && f.Value != nil {
			return yaml.GetValue(f.Value)
		}
		return ""
	}
	l := &store.Lock{Repository: field("repo"), Package: field("directory"), Ref: field("ref"), Commit: field("commit")}
	if isURL(l.Repository) { // Porch's record: the repository by its URL
		l.URL, l.Repository = l.Repository, ""
	}
	return l, nil
}

// isURL: a git URL (scheme://, scp-like user@host:path, or a path), not a
// Repository's name (a DNS-1123 subdomain has none of "/", ":" or "@").
func isURL(s string) bool {
	return strings.ContainsAny(s, "/:@")
}

// WithPendingGates adds a readiness gate (info.readinessGates) for each
// condition type, with a False condition (status.conditions), to the
// Kptfile: a draft created so is not approvable (porchctl, Nephio's
// approval controller, pvctl approve) until its owner sets the conditions
// True. Gates and conditions the package has are kept; a package without a
// Kptfile is left as it is.
func WithPendingGates(files map[string]string, gates []string) (map[string]string, error) {
	if len(gates) == 0 {
		return files, nil
	}
	conds := make([]kptfile.Condition, 0, len(gates))
	for _, g := range gates {
		conds = append(conds, kptfile.Condition{Type: g, Status: kptfile.ConditionFalse, Reason: store.PendingReason, Message: store.PendingMessage})
	}
	return WithGates(files, gates, conds)
}

// WithGates adds readiness gates and sets conditions in the Kptfile
// (existing gates and conditions of other types are kept), as Porch writes
// a draft's spec.readinessGates and status.conditions into it.
func WithGates(files map[string]string, gates []string, conds []kptfile.Condition) (map[string]string, error) {
	out, err := kptfile.Edit(files, func(kf *kptfile.Kptfile) error {
		if _, err := kf.AddReadinessGates(gates); err != nil {
			return err
		}
		return kf.SetConditions(conds)
	})
	if err != nil {
		return nil, fmt.Errorf("Kptfile: %w", err)
	}
	if text, ok := out[kptfile.FileName]; ok { // Porch writes the Kptfile of a draft's gates anew
		if out[kptfile.FileName], _, err = asPorch(text, func(*kptfilev1.KptFile) {}); err != nil {
			return nil, err
		}
	}
	return out, nil
}
