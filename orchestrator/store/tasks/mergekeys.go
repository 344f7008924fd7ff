package tasks

import (
	"fmt"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"strings"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Porch marks every resource of a package it clones or upgrades with its
// identity in the upstream (rule: porch-clone-shape), so that a later upgrade
// still finds the resource after a function renamed it or moved it to another
// namespace (set-namespace): a `# kpt-merge: NAMESPACE/NAME` comment on
// `metadata`, and the annotation internal.kpt.dev/upstream-identifier,
// GROUP|KIND|NAMESPACE|NAME ("default" for no namespace). Both are kept once
// there.
const (
	mergeCommentPrefix = "kpt-merge:"
	upstreamIDKey      = "internal.kpt.dev/upstream-identifier"
)

// WithMergeKeys marks the package's resources as Porch's clone and upgrade
// do. A resource with neither name, namespace nor labels is left alone.
func WithMergeKeys(files map[string]string) (map[string]string, error) {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if err := markMergeKey(it); err != nil {
			return nil, fmt.Errorf("%s: %w", krm.Path(it), err)
		}
	}
	return krm.ItemsToFiles(items, files)
}

func markMergeKey(it *yaml.RNode) error {
	m := it.Field(yaml.MetadataField)
	if m == nil || (it.GetName() == "" && it.GetNamespace() == "" && len(it.GetLabels()) == 0) {
		return nil
	}
	key := m.Key.YNode()
	if !strings.Contains(key.LineComment, mergeCommentPrefix) {
		key.LineComment = fmt.Sprintf("# %s %s/%s", mergeCommentPrefix, it.GetNamespace(), it.GetName())
	}
	namespace, name := mergeIdentity(it)
	if namespace == "" {
		namespace = "default"
	}
	group, _ := resid.ParseGroupVersion(it.GetApiVersion())
	return it.PipeE(yaml.SetAnnotation(upstreamIDKey, fmt.Sprintf("%s|%s|%s|%s", group, it.GetKind(), namespace, name)))
}

// mergeIdentity is a resource's namespace and name in its upstream: the
// merge comment's when it has one, else its own.
func mergeIdentity(it *yaml.RNode) (string, string) {
	if m := it.Field(yaml.MetadataField); m != nil {
		c := strings.TrimSpace(strings.TrimPrefix(m.Key.YNode().LineComment, "#"))
		if rest, ok := strings.CutPrefix(c, mergeCommentPrefix); ok {
			if ns, name, ok := strings.Cut(strings.TrimSpace(rest), "/"); ok {
				return ns, name
			}
		}
	}
	return it.GetNamespace(), it.GetName()
}

// mergeKey identifies a resource across an upgrade's three packages, as
// Porch's resource merge matches them: group, kind, the merge identity
// (namespace and name) and the file.
//
// A Kptfile is matched by its file alone: a package has one at its root
// (and each subpackage at its own), and a clone names it after the
// downstream package, so that the upstream's Kptfile (named after the
// upstream package) and the downstream's never shared a name when the two
// packages' names differ, and an upgrade kept the old Kptfile whole,
// dropping the new upstream's pipeline and info (found by examples/groups:
// free5gc-smf cloned as smf).
func mergeKey(it *yaml.RNode) string {
	group, _ := resid.ParseGroupVersion(it.GetApiVersion())
	p, _, _ := kioutil.GetFileAnnotations(it)
	if it.GetKind() == kptfile.Kind && group == "kpt.dev" {
		return strings.Join([]string{group, it.GetKind(), p}, "|")
	}
	ns, name := mergeIdentity(it)
	return strings.Join([]string{group, it.GetKind(), ns, name, p}, "|")
}
