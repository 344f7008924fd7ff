package variant

import (
	"crypto/sha256"
	"fmt"
	"sort"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Fingerprint is a digest of a package by meaning: each YAML object as
// canonical JSON (keys sorted; comments, formatting and kpt's path and index
// annotations left out), every other file as it is, in name order. Porch
// rewrites a draft's Kptfile in its own format on every update of the
// PackageRevision; the fingerprint does not change with that, and changes
// with any edit of what the package says. A file that does not parse is
// taken as it is.
func Fingerprint(files map[string]string) string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%s\x00", name)
		items, err := krm.FilesToItems(map[string]string{name: files[name]})
		if err != nil || !krm.IsResourceFile(name) {
			fmt.Fprintf(h, "%d\x00%s", len(files[name]), files[name])
			continue
		}
		for _, it := range items {
			it = it.Copy()
			dropKptAnnotations(it.YNode())
			b, err := it.MarshalJSON()
			if err != nil || it.YNode().Kind != yaml.MappingNode {
				b = []byte(it.MustString())
			}
			fmt.Fprintf(h, "%d\x00%s", len(b), b)
		}
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// dropKptAnnotations removes the path, index and id annotations kpt and
// kyaml add to an object read from a package (and metadata.annotations when
// nothing else is left in it). Anything that is not an object is left alone.
func dropKptAnnotations(n *yaml.Node) {
	meta := krm.Field(n, "metadata")
	ann := krm.Field(meta, "annotations")
	if ann == nil || ann.Kind != yaml.MappingNode || len(ann.Content)%2 != 0 {
		return
	}
	drop := map[string]bool{kioutil.PathAnnotation: true, kioutil.LegacyPathAnnotation: true, kioutil.IndexAnnotation: true,
		kioutil.LegacyIndexAnnotation: true, kioutil.IdAnnotation: true, kioutil.LegacyIdAnnotation: true, kioutil.SeqIndentAnnotation: true}
	var kept []*yaml.Node
	for i := 0; i < len(ann.Content); i += 2 {
		if !drop[ann.Content[i].Value] {
			kept = append(kept, ann.Content[i], ann.Content[i+1])
		}
	}
	ann.Content = kept
	if len(kept) == 0 {
		for i := 0; i+1 < len(meta.Content); i += 2 {
			if meta.Content[i].Value == "annotations" {
				meta.Content = append(meta.Content[:i], meta.Content[i+2:]...)
				break
			}
		}
	}
}

// FileChange is one file that differs between two versions of a package:
// Added, Removed or Modified (by meaning, as Fingerprint reads it: a
// reformatted file is not modified).
type FileChange struct {
	Path, Change string
}

// The kinds of FileChange.
const (
	FileAdded    = "added"
	FileRemoved  = "removed"
	FileModified = "modified"
)

// FileDigests is each file's Fingerprint, by path: what ChangedFiles
// compares, small enough to remember in place of the files.
func FileDigests(files map[string]string) map[string]string {
	out := make(map[string]string, len(files))
	for path, b := range files {
		out[path] = Fingerprint(map[string]string{path: b})
	}
	return out
}

// ChangedFiles lists the files that differ between two packages' digests
// (FileDigests), by path: in to and not in from, the other way round, or
// in both with another digest.
func ChangedFiles(from, to map[string]string) []FileChange {
	var out []FileChange
	for path, b := range to {
		switch a, ok := from[path]; {
		case !ok:
			out = append(out, FileChange{Path: path, Change: FileAdded})
		case a != b:
			out = append(out, FileChange{Path: path, Change: FileModified})
		}
	}
	for path := range from {
		if _, ok := to[path]; !ok {
			out = append(out, FileChange{Path: path, Change: FileRemoved})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
