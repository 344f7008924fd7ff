// Package chain runs a PackageVariant's mutations on a downstream package
// in-process: package-context, then pipeline-prepend, then config-inject, the
// fixed order of the design (mutation-application.md). It builds the very
// function configs the binaries take (contract.md) and calls the functions'
// own code in pkg/, so a fix in a function reaches the orchestrator too; a
// test runs the chain both ways and requires identical output.
//
// The readiness gate MutationGate, when the package has it, is set True
// once every step succeeded: the draft is finished in the same write.
//
// Change detection is semantic (F9): a file whose content only moved keys or
// formatting is no change and keeps its bytes, so an unchanged variant never
// causes a write.
package chain

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/GoogleContainerTools/kpt-functions-sdk/go/fn"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/meta"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/packagecontext"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Step is one function of the chain and the config it gets.
type Step struct {
	Name    string
	Process krm.Processor
	Config  *yaml.RNode
}

// Steps returns the chain for a PackageVariant: the PackageVariant itself is
// the config of package-context and pipeline-prepend; config-inject gets a
// ConfigInjection of the variant's injectors and the in-cluster candidates
// (objects of the injection points' types in the variant's namespace).
func Steps(v *pvapi.PackageVariant, candidates []*yaml.RNode) ([]Step, error) {
	variant, err := krm.Encode(pv.PackageVariant{APIVersion: pv.APIVersion, Kind: pv.Kind,
		Metadata: meta.ObjectMeta{Name: v.Name, Namespace: v.Namespace}, Spec: v.Spec})
	if err != nil {
		return nil, err
	}
	inj, err := injectionConfig(v, candidates)
	if err != nil {
		return nil, err
	}
	return []Step{
		{Name: "package-context", Process: packagecontext.Process, Config: yaml.NewRNode(variant)},
		{Name: "pipeline-prepend", Process: pipelineprepend.Process, Config: yaml.NewRNode(yaml.CopyYNode(variant))},
		{Name: "config-inject", Process: configinject.Process, Config: inj},
	}, nil
}

func injectionConfig(v *pvapi.PackageVariant, candidates []*yaml.RNode) (*yaml.RNode, error) {
	spec, err := krm.Encode(struct {
		Injectors []pv.InjectionSelector `json:"injectors,omitempty"`
	}{v.Spec.Injectors})
	if err != nil {
		return nil, err
	}
	res := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
	for _, c := range candidates {
		res.Content = append(res.Content, c.YNode())
	}
	if len(res.Content) > 0 {
		krm.SetField(spec, "resources", res)
	}
	n, err := krm.Encode(struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Metadata   meta.ObjectMeta `json:"metadata"`
	}{configinject.ConfigGVK.APIVersion, configinject.ConfigGVK.Kind, meta.ObjectMeta{Name: v.Name, Namespace: v.Namespace}})
	if err != nil {
		return nil, err
	}
	krm.SetField(n, "spec", spec)
	return yaml.NewRNode(n), nil
}

// Result is the outcome of running the chain on a package.
type Result struct {
	// Files is the package afterwards; unchanged files keep their bytes.
	Files map[string]string
	// Changed reports a semantic difference from the input.
	Changed bool
	// Results are every function's results, in order.
	Results fn.Results
}

// Package is a downstream package parsed once, for InjectionTypes and Run.
type Package struct {
	files map[string]string
	items []*yaml.RNode
}

// Load parses a package (file name -> content); a file that does not parse
// is an error naming it.
func Load(files map[string]string) (*Package, error) {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return nil, err
	}
	return &Package{files: files, items: items}, nil
}

// Run runs the steps on a package (file name -> content).
func Run(files map[string]string, steps []Step) (*Result, error) {
	p, err := Load(files)
	if err != nil {
		return nil, err
	}
	return p.Run(steps)
}

// Run runs the steps. Any error result stops the chain: the package is not
// half-mutated, and the error names the function, file, object and field.
// A Package runs once.
func (p *Package) Run(steps []Step) (*Result, error) {
	items, out := p.items, &Result{}
	for _, s := range steps {
		rl := &krm.ResourceList{Items: items, FunctionConfig: s.Config}
		s.Process(rl)
		out.Results = append(out.Results, rl.Results...)
		if err := krm.ResultsError(rl.Results); err != nil {
			return out, fmt.Errorf("%s: %w", s.Name, err)
		}
		items = rl.Items
	}
	if err := closeGate(items); err != nil {
		return out, err
	}
	var err error
	if out.Files, err = krm.ItemsToFiles(items, p.files); err != nil {
		return out, err
	}
	out.Changed = !maps.Equal(p.files, out.Files)
	return out, nil
}

// MutationGate is the readiness gate a PackageVariant's drafts carry from
// their creation (store.DraftSpec.ReadinessGates, its condition False) until
// the chain has run on them: a draft whose mutation has not run, or failed,
// is not approvable (porchctl, Nephio's approval controller and pvctl
// approve check every gate).
const MutationGate = "pvkit.dev/mutation"

// The condition the chain sets when it has run.
const (
	MutatedReason  = "Mutated"
	MutatedMessage = "the PackageVariant's mutations ran"
)

// closeGate sets the MutationGate's condition True in a package that has
// the gate; a package without it is left alone (a draft pvkit did not
// create: taken over from Porch's controllers, say).
func closeGate(items []*yaml.RNode) error {
	kf, err := kptfile.Find(items)
	if err != nil || kf == nil {
		return err
	}
	gates, err := kf.ReadinessGates()
	if err != nil {
		return fmt.Errorf("Kptfile: %w", err)
	}
	if !slices.Contains(gates, MutationGate) {
		return nil
	}
	if err := kf.SetConditions([]kptfile.Condition{{Type: MutationGate, Status: kptfile.ConditionTrue, Reason: MutatedReason, Message: MutatedMessage}}); err != nil {
		return fmt.Errorf("Kptfile: %w", err)
	}
	return nil
}

// InjectionTypes lists the apiVersion/kind of the package's injection points:
// the kinds whose objects the orchestrator must read for config-inject.
func (p *Package) InjectionTypes() []krm.GVK {
	points, _ := configinject.FindPoints(p.items)
	seen := map[krm.GVK]bool{}
	var out []krm.GVK
	for _, pt := range points {
		g := krm.GVK{APIVersion: pt.APIVersion, Kind: pt.Kind}
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

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
