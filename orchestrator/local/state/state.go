// Package state is pvctl run's state file: the embedded cluster's
// PackageVariants, PackageVariantSets, other objects and Events, kept in
// the repositories directory between runs (File). It is read strictly, its
// YAML aliases bounded, and written atomically with its objects sorted.
package state

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"

	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/internal/atomicfile"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/validate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// File is where pvctl run keeps its embedded cluster between runs,
// in the repositories directory: the PackageVariants (the ones the files
// give and the ones sets generated) and PackageVariantSets as the cluster
// holds them, with UIDs, generations, finalizers and status. A variant in
// it that the files no longer give is deleted on the next run with
// --prune, and its deletion policy applies, as when it is deleted from a
// cluster; so are the other objects (injection and selection candidates).
const File = "pvctl-state.yaml"

type State struct {
	Variants []pvapi.PackageVariant     `json:"packageVariants,omitempty"`
	Sets     []pvsapi.PackageVariantSet `json:"packageVariantSets,omitempty"`
	// Objects are the other objects of the embedded cluster (injection and
	// selection candidates): one the files no longer give stays until
	// --prune, as a variant does.
	Objects []map[string]any `json:"objects,omitempty"`
	// Events are the Events the reconcilers recorded, every run's, the
	// newest MaxEvents (pvctl events).
	Events []Event `json:"events,omitempty"`
	// Controls are the annotations pvctl's control verbs lay on sets and
	// variants (pvctl suspend and resume: pvkit.dev/suspend; pvctl rollout
	// pause, resume, hold, release, skip: pvkit.dev/rollout-*), by
	// ControlKey ("PackageVariantSet/app"). Each run gives an object its
	// annotations, but a key its file sets (the file wins), and saves the
	// object without them: the saved objects' annotations are the files',
	// these are pvctl's alone (one map for every control).
	Controls map[string]map[string]string `json:"controls,omitempty"`
	// Applied are the Controls the last run applied (what Controls was
	// when it wrote this file): a control verb since then changes Controls
	// only, and pvctl rollout status names the difference as pending
	// (compared with the saved objects' annotations, which
	// never carry the controls, it read pending forever). nil in a state
	// file from before it: the annotations are compared.
	Applied map[string]map[string]string `json:"applied,omitempty"`
	// Suspended and Rollouts are the controls as state files before
	// Controls kept them (pvctl suspend's keys; pvctl rollout's by set
	// name): read, folded into Controls, never written.
	Suspended []string                     `json:"suspended,omitempty"`
	Rollouts  map[string]map[string]string `json:"rollouts,omitempty"`
	// Repositories are the Repository objects the files gave at the last
	// run: how every verb serves the repositories directory, as the run did
	// (their registered names, a directory's packages relative to it), not
	// by the bare repositories' own names.
	Repositories []porchconfig.Repository `json:"repositories,omitempty"`
	// FilesPeak is the most PackageVariants and PackageVariantSets the
	// files gave since pvctl run's mass-deletion guard was last lifted
	// (--prune=all): the baseline it counts every loss from, so that
	// variants leaving the files a few at a time cannot empty a fleet.
	FilesPeak int `json:"filesPeak,omitempty"`
}

// ControlKey is a set's or variant's key in Controls.
func ControlKey(kind, name string) string { return kind + "/" + name }

// SuspendAnnotation is pvctl suspend's annotation (kit.SuspendAnnotation,
// which this package cannot import).
const SuspendAnnotation = "pvkit.dev/suspend"

// SetControl sets (value not "") or removes one of an object's controls.
func (s *State) SetControl(key, annotation, value string) {
	m := s.Controls[key]
	if value == "" {
		delete(m, annotation)
		if len(m) == 0 {
			delete(s.Controls, key)
		}
		return
	}
	if s.Controls == nil {
		s.Controls = map[string]map[string]string{}
	}
	if m == nil {
		m = map[string]string{}
		s.Controls[key] = m
	}
	m[annotation] = value
}

// fold moves the controls of an earlier state file (Suspended, Rollouts)
// into Controls.
func (s *State) fold() {
	for _, k := range s.Suspended {
		s.SetControl(k, SuspendAnnotation, "true")
	}
	for set, m := range s.Rollouts {
		for a, v := range m {
			s.SetControl(ControlKey("PackageVariantSet", set), a, v)
		}
	}
	s.Suspended, s.Rollouts = nil, nil
}

func Read(path string) (*State, error) {
	s := &State{}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse reads a state file's content strictly; its YAML aliases are
// bounded like every other input's.
func Parse(path string, b []byte) (*State, error) {
	s := &State{}
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
	if err := s.checkNames(); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it to start from no variants; the repositories keep the packages)", path, err)
	}
	s.fold()
	return s, nil
}

// checkNames holds the names of the state's objects to an API server's
// rules: pvctl prints them (status, get, shell completion), and a state
// file from a repositories directory someone else made must not put a
// terminal escape or a second line into a listing.
func (s *State) checkNames() error {
	check := func(field, name, namespace string) error {
		if msg := validate.DNS1123Subdomain(name); msg != "" {
			return fmt.Errorf("%s.metadata.name %s", field, msg)
		}
		if namespace != "" {
			if msg := validate.DNS1123Label(namespace); msg != "" {
				return fmt.Errorf("%s.metadata.namespace %q %s", field, namespace, msg)
			}
		}
		return nil
	}
	for i, v := range s.Variants {
		if err := check(fmt.Sprintf("packageVariants[%d]", i), v.Name, v.Namespace); err != nil {
			return err
		}
	}
	for i, v := range s.Sets {
		if err := check(fmt.Sprintf("packageVariantSets[%d]", i), v.Name, v.Namespace); err != nil {
			return err
		}
	}
	for i, r := range s.Repositories {
		if err := check(fmt.Sprintf("repositories[%d]", i), r.Name, r.Namespace); err != nil {
			return err
		}
	}
	return nil
}

// Write saves the state atomically, objects sorted by name.
func (s *State) Write(path string) error {
	sort.Slice(s.Variants, func(i, j int) bool { return s.Variants[i].Name < s.Variants[j].Name })
	sort.Slice(s.Sets, func(i, j int) bool { return s.Sets[i].Name < s.Sets[j].Name })
	sort.Slice(s.Objects, func(i, j int) bool { return ObjectKey(s.Objects[i]) < ObjectKey(s.Objects[j]) })
	s.fold()
	sort.Slice(s.Repositories, func(i, j int) bool { return s.Repositories[i].Name < s.Repositories[j].Name })
	for i := range s.Repositories {
		r := &s.Repositories[i]
		r.APIVersion, r.Kind = porchconfig.GroupVersion.String(), "Repository"
		r.ResourceVersion, r.UID, r.ManagedFields, r.Status = "", "", nil, porchconfig.RepositoryStatus{}
	}
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
	return atomicfile.Write(path, append(b, '\n'), 0o644)
}

// ObjectKey identifies a cluster object of the state: "apiVersion Kind name".
func ObjectKey(o map[string]any) string {
	u := unstructured.Unstructured{Object: o}
	return u.GetAPIVersion() + " " + u.GetKind() + " " + u.GetName()
}

// Event is an Event on a set or variant, as `pvctl events` shows it: from
// pvctl run's state file (the reconcilers record the same Events in pvctl
// run as in the controller) or from a cluster's core/v1 Events.
type Event struct {
	LastSeen metav1.Time `json:"lastSeen"`
	// Count is how many times the same event (object, type, reason and
	// message) was recorded, as the API server aggregates them.
	Count   int32  `json:"count"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

// MaxEvents bounds the events the state file keeps: the newest ones.
const MaxEvents = 1000

// SortEvents orders events oldest first, ties by object, reason and message.
func SortEvents(ev []Event) {
	sort.SliceStable(ev, func(i, j int) bool {
		a, b := ev[i], ev[j]
		if !a.LastSeen.Equal(&b.LastSeen) {
			return a.LastSeen.Before(&b.LastSeen)
		}
		return strings.Join([]string{a.Kind, a.Name, a.Reason, a.Message}, "\x00") < strings.Join([]string{b.Kind, b.Name, b.Reason, b.Message}, "\x00")
	})
}
