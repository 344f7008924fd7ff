package pvsexpand

import (
	"maps"
	"slices"
	"strings"

	"github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
)

// targetLabels are the labels of a target that its child carries (rule
// child-labels): those the set's ChildLabelsAnnotation names ("*": all),
// but pvkit's and Porch's own keys; nil without the annotation.
func targetLabels(set *v1alpha2.PackageVariantSet, target map[string]string) map[string]string {
	want := strings.TrimSpace(set.Metadata.Annotations[v1alpha2.ChildLabelsAnnotation])
	if want == "" || len(target) == 0 {
		return nil
	}
	keys := map[string]bool{}
	for _, k := range strings.Split(want, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys[k] = true
		}
	}
	out := map[string]string{}
	for k, v := range target {
		if (keys["*"] || keys[k]) && !ownLabel(k) {
			out[k] = v
		}
	}
	return out
}

// ownLabel: a key of pvkit's or Porch's own, never copied from a target.
func ownLabel(k string) bool {
	return k == v1alpha2.SetLabel || k == v1alpha2.ShardLabel || strings.HasPrefix(k, "pvkit.dev/") || strings.HasPrefix(k, "config.porch.kpt.dev/") ||
		strings.HasPrefix(k, "porch.kpt.dev/")
}

// copiedKeys are the keys a child's CopiedLabelsAnnotation lists.
func copiedKeys(pv *v1alpha1.PackageVariant) []string {
	var out []string
	for _, k := range strings.Split(pv.Metadata.Annotations[v1alpha2.CopiedLabelsAnnotation], ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// SameMetadata says whether a child carries the metadata its set gives it:
// its shard label, and the target's labels it copies (rule child-labels).
func SameMetadata(cur, desired *v1alpha1.PackageVariant) bool {
	if !SameShard(cur, desired) || !slices.Equal(copiedKeys(cur), copiedKeys(desired)) {
		return false
	}
	for _, k := range groupLabels {
		if cur.Metadata.Labels[k] != desired.Metadata.Labels[k] {
			return false
		}
	}
	if cur.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation] != desired.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation] {
		return false
	}
	for _, k := range copiedKeys(desired) {
		if cur.Metadata.Labels[k] != desired.Metadata.Labels[k] {
			return false
		}
	}
	return true
}

// MetadataChange is what an update does to a child's labels and
// annotations for its set: keys to set and keys to remove, each sorted.
type MetadataChange struct {
	SetLabels, SetAnnotations       map[string]string
	RemoveLabels, RemoveAnnotations []string
}

// ChildMetadata is the change that gives cur desired's shard label and
// copied target labels; labels a person put on the child are not touched
// (only the keys cur's or desired's CopiedLabelsAnnotation lists, and the
// shard label).
func ChildMetadata(cur, desired *v1alpha1.PackageVariant) MetadataChange {
	ch := MetadataChange{SetLabels: map[string]string{}, SetAnnotations: map[string]string{}}
	if shard := desired.Metadata.Labels[v1alpha2.ShardLabel]; shard != "" {
		ch.SetLabels[v1alpha2.ShardLabel] = shard
	} else if _, had := cur.Metadata.Labels[v1alpha2.ShardLabel]; had {
		ch.RemoveLabels = append(ch.RemoveLabels, v1alpha2.ShardLabel)
	}
	want := copiedKeys(desired)
	for _, k := range want {
		ch.SetLabels[k] = desired.Metadata.Labels[k]
	}
	for _, k := range copiedKeys(cur) {
		if !slices.Contains(want, k) {
			ch.RemoveLabels = append(ch.RemoveLabels, k)
		}
	}
	if len(want) > 0 {
		ch.SetAnnotations[v1alpha2.CopiedLabelsAnnotation] = strings.Join(want, ",")
	} else if _, had := cur.Metadata.Annotations[v1alpha2.CopiedLabelsAnnotation]; had {
		ch.RemoveAnnotations = append(ch.RemoveAnnotations, v1alpha2.CopiedLabelsAnnotation)
	}
	for _, k := range groupLabels { // a grouped set's (rule package-groups)
		if v := desired.Metadata.Labels[k]; v != "" {
			ch.SetLabels[k] = v
		} else if _, had := cur.Metadata.Labels[k]; had {
			ch.RemoveLabels = append(ch.RemoveLabels, k)
		}
	}
	if v := desired.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation]; v != "" {
		ch.SetAnnotations[v1alpha2.GroupRevisionAnnotation] = v
	} else if _, had := cur.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation]; had {
		ch.RemoveAnnotations = append(ch.RemoveAnnotations, v1alpha2.GroupRevisionAnnotation)
	}
	slices.Sort(ch.RemoveLabels)
	slices.Sort(ch.RemoveAnnotations)
	return ch
}

// groupLabels are the labels a grouped set's children carry.
var groupLabels = []string{v1alpha2.GroupLabel, v1alpha2.MemberLabel}

// Apply is the change made to a copy of labels and annotations.
func (ch MetadataChange) Apply(labels, annotations map[string]string) (map[string]string, map[string]string) {
	l, a := maps.Clone(labels), maps.Clone(annotations)
	if l == nil {
		l = map[string]string{}
	}
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(l, ch.SetLabels)
	maps.Copy(a, ch.SetAnnotations)
	for _, k := range ch.RemoveLabels {
		delete(l, k)
	}
	for _, k := range ch.RemoveAnnotations {
		delete(a, k)
	}
	return l, a
}
