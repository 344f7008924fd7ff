package krm

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/pkg/validate"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// readerAnnotations are the annotations FilesToItems (and kpt) add to items;
// ItemsToFiles removes them again.
var readerAnnotations = []string{
	kioutil.PathAnnotation, kioutil.LegacyPathAnnotation,
	kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation,
	kioutil.SeqIndentAnnotation, kioutil.IdAnnotation, kioutil.LegacyIdAnnotation,
	kioutil.InternalAnnotationsMigrationResourceIDAnnotation,
}

// IsReaderAnnotation reports whether an annotation is one kpt or
// FilesToItems adds to an item to track where it came from, not the object's own.
func IsReaderAnnotation(key string) bool {
	for _, a := range readerAnnotations {
		if key == a {
			return true
		}
	}
	return strings.HasPrefix(key, "internal.config.kubernetes.io/")
}

// IsResourceFile reports whether a package file holds KRM resources, the way
// kpt and Porch decide it: the Kptfile and every *.yaml / *.yml file.
func IsResourceFile(name string) bool {
	base := path.Base(name)
	return base == "Kptfile" || strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")
}

// FilesToItems parses the resource files of a package (file name -> content,
// as Porch's PackageRevisionResources holds them) into items annotated with
// their path and index, as kpt does. Files are read in name order. A file that
// does not parse is an error naming it.
func FilesToItems(files map[string]string) ([]*yaml.RNode, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		if msg := validate.FilePath(name); msg != "" {
			return nil, fmt.Errorf("file path %s", msg)
		}
		if IsResourceFile(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var items []*yaml.RNode
	for _, name := range names {
		r := &kio.ByteReader{
			Reader:            strings.NewReader(files[name]),
			SetAnnotations:    map[string]string{kioutil.PathAnnotation: name, kioutil.LegacyPathAnnotation: name},
			PreserveSeqIndent: true,
			DisableUnwrapping: true,
		}
		nodes, err := r.Read()
		if err != nil {
			// kyaml appends the offending document after a newline; the
			// first line says what is wrong.
			msg, _, _ := strings.Cut(err.Error(), "\n")
			return nil, fmt.Errorf("failed to parse %q: %s", name, strings.TrimSuffix(msg, ": node contents:"))
		}
		for _, n := range nodes {
			if err := CheckAliases(n.YNode()); err != nil {
				return nil, fmt.Errorf("%q: %w", name, err)
			}
		}
		items = append(items, nodes...)
	}
	return items, nil
}

// ItemsToFiles writes items back into files. original is the package the
// items were read from: files that are not resource files are carried over,
// resource files left without items are dropped, and a file whose new content
// is semantically equal to its original keeps its original bytes (so a
// key-order or formatting difference is never a change).
func ItemsToFiles(items []*yaml.RNode, original map[string]string) (map[string]string, error) {
	byFile := map[string][]*yaml.RNode{}
	for _, it := range items {
		p := Path(it)
		if p == "" {
			return nil, fmt.Errorf("%s has no %q annotation, so it belongs to no file", Describe(it.YNode()), kioutil.PathAnnotation)
		}
		byFile[p] = append(byFile[p], it)
	}
	out := make(map[string]string, len(original)+len(byFile))
	for name, content := range original {
		if !IsResourceFile(name) {
			out[name] = content
		}
	}
	for name, nodes := range byFile {
		content, err := encodeFile(nodes)
		if err != nil {
			return nil, fmt.Errorf("failed to write %q: %w", name, err)
		}
		if old, ok := original[name]; ok && SemanticEqualFiles(old, content) {
			content = old
		}
		out[name] = content
	}
	return out, nil
}

func encodeFile(nodes []*yaml.RNode) (string, error) {
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, Sort: true, ClearAnnotations: readerAnnotations}
	if err := w.Write(nodes); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// SemanticEqualFiles reports whether two YAML streams hold the same documents,
// ignoring key order, comments and formatting. Unparsable input is unequal.
func SemanticEqualFiles(a, b string) bool {
	if a == b {
		return true
	}
	da, errA := kio.FromBytes([]byte(a))
	db, errB := kio.FromBytes([]byte(b))
	if errA != nil || errB != nil || len(da) != len(db) {
		return false
	}
	for i := range da {
		if CheckAliases(da[i].YNode()) != nil || CheckAliases(db[i].YNode()) != nil {
			return false
		}
	}
	for i := range da {
		if !SemanticEqual(da[i].YNode(), db[i].YNode()) {
			return false
		}
	}
	return true
}

// SemanticEqual compares two YAML nodes by value: mappings as unordered sets of
// keys, sequences in order, scalars by resolved tag and value.
func SemanticEqual(a, b *yaml.Node) bool {
	a, b = deref(a), deref(b)
	if a == b { // the same node (two aliases of one anchor): equal without expanding it
		return true
	}
	if a == nil || b == nil {
		return IsNull(a) && IsNull(b)
	}
	if a.Kind != b.Kind {
		return IsNull(a) && IsNull(b)
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value && a.ShortTag() == b.ShortTag()
	case yaml.SequenceNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := range a.Content {
			if !SemanticEqual(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			bv := Field(b, a.Content[i].Value)
			if bv == nil || !SemanticEqual(a.Content[i+1], bv) {
				return false
			}
		}
		return true
	}
	return false
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}
