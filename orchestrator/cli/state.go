package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// StateFile is where pvctl run keeps its embedded cluster between runs,
// in the repositories directory: the PackageVariants (the ones the files
// give and the ones sets generated) and PackageVariantSets as the cluster
// holds them, with UIDs, generations, finalizers and status. A variant in
// it that the files no longer give is deleted on the next run with
// --prune, and its deletion policy applies, as when it is deleted from a
// cluster; so are the other objects (injection and selection candidates).
const StateFile = "pvctl-state.yaml"

type state struct {
	Variants []pvapi.PackageVariant     `json:"packageVariants,omitempty"`
	Sets     []pvsapi.PackageVariantSet `json:"packageVariantSets,omitempty"`
	// Objects are the other objects of the embedded cluster (injection and
	// selection candidates): one the files no longer give stays until
	// --prune, as a variant does.
	Objects []map[string]any `json:"objects,omitempty"`
	// Events are the Events the reconcilers recorded, every run's, the
	// newest MaxEvents (pvctl events).
	Events []Event `json:"events,omitempty"`
}

func readState(path string) (*state, error) {
	s := &state{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	return parseState(path, b)
}

// parseState reads a state file's content strictly; its YAML aliases are
// bounded like every other input's.
func parseState(path string, b []byte) (*state, error) {
	s := &state{}
	// The alias bound is checked on kyaml's parse; a file only the strict
	// decoder's own parser would read is never expanded unchecked.
	n, err := yaml.Parse(string(b))
	if err == nil {
		err = krm.CheckAliases(n.YNode())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to start from no variants; the repositories keep the packages)", path, err)
	}
	if err := sigsyaml.UnmarshalStrict(b, s); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to start from no variants; the repositories keep the packages)", path, err)
	}
	return s, nil
}

// write saves the state atomically, objects sorted by name.
func (s *state) write(path string) error {
	sort.Slice(s.Variants, func(i, j int) bool { return s.Variants[i].Name < s.Variants[j].Name })
	sort.Slice(s.Sets, func(i, j int) bool { return s.Sets[i].Name < s.Sets[j].Name })
	sort.Slice(s.Objects, func(i, j int) bool { return objectKey(s.Objects[i]) < objectKey(s.Objects[j]) })
	for i := range s.Variants {
		s.Variants[i].ResourceVersion = ""
		s.Variants[i].APIVersion, s.Variants[i].Kind = pvapi.GroupVersion.String(), "PackageVariant"
	}
	for i := range s.Sets {
		s.Sets[i].ResourceVersion = ""
		s.Sets[i].APIVersion, s.Sets[i].Kind = pvsapi.GroupVersion.String(), "PackageVariantSet"
	}
	b, err := sigsyaml.Marshal(s)
	if err != nil {
		return err
	}
	b = append([]byte("# pvctl run's embedded cluster: written by pvctl, read on the next run.\n"), bytes.TrimSpace(b)...)
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// objectKey identifies a cluster object of the state: "apiVersion Kind name".
func objectKey(o map[string]any) string {
	u := unstructured.Unstructured{Object: o}
	return u.GetAPIVersion() + " " + u.GetKind() + " " + u.GetName()
}
