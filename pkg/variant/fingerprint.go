package variant

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"sync"

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
		h.Write(contribution(name, files[name]))
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// contribution is a file's part of its package's Fingerprint: each object
// as canonical JSON, or the file as it is, each with its length.
// Resource files' parts are memoized (contributions).
func contribution(name, content string) []byte {
	if !krm.IsResourceFile(name) {
		return []byte(fmt.Sprintf("%d\x00%s", len(content), content))
	}
	key := memoKey(name, content)
	if b, ok := contributions.get(key); ok {
		return b
	}
	var buf bytes.Buffer
	items, err := krm.FilesToItems(map[string]string{name: content})
	if err != nil {
		items = nil
		fmt.Fprintf(&buf, "%d\x00%s", len(content), content)
	}
	for _, it := range items {
		it = it.Copy()
		dropKptAnnotations(it.YNode())
		b, err := krm.JSON(it)
		if err != nil || it.YNode().Kind != yaml.MappingNode {
			b = []byte(it.MustString())
		}
		fmt.Fprintf(&buf, "%d\x00%s", len(b), b)
	}
	contributions.put(key, buf.Bytes())
	return buf.Bytes()
}

// contributions memoizes resource files' parts of fingerprints, by the
// digest of the file's name and content (a digest by meaning is a function
// of them: the memo changes no fingerprint, TestFingerprintFormat). A
// package's files are fingerprinted several times a reconcile (its write,
// the check of what the store answered, approval's, drift's, the
// provenance record's), and parsing them was 7% of a realistic first
// run. Its memory has a bound: past memoBytes it starts again
// empty (a memo, not a store: a miss only parses again).
var contributions = &memo{m: map[[sha256.Size]byte][]byte{}}

const memoBytes = 32 << 20

type memo struct {
	mu   sync.Mutex
	m    map[[sha256.Size]byte][]byte
	size int
}

func memoKey(name, content string) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(content))
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (c *memo) get(k [sha256.Size]byte) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[k]
	return b, ok
}

func (c *memo) put(k [sha256.Size]byte, b []byte) {
	if len(b) > memoBytes/64 {
		return // a large file: not worth the room
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size+len(b) > memoBytes {
		c.m, c.size = map[[sha256.Size]byte][]byte{}, 0
	}
	if _, ok := c.m[k]; !ok {
		c.m[k] = b
		c.size += len(b) + sha256.Size
	}
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
