package variant

import (
	"fmt"
	"maps"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/packagecontext"
	"github.com/pvkit/pvkit/pkg/pipelineprepend"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Chain is a PackageVariant's mutations with their configs, built from the
// typed variant: package-context, then pipeline-prepend, then config-inject.
type Chain struct {
	context  *packagecontext.Config
	pipeline *pipelineprepend.Config
	inject   *configinject.Config
}

// NewChain builds the chain for a PackageVariant: its package context, its
// pipeline owned by the variant's name, and its injectors with the
// in-cluster candidates (objects of the injection points' types in the
// variant's namespace, as YAML: they become package content). The configs
// are the ones the binaries build from the same variant; an invalid spec is
// a *krm.Invalid naming every field (Validate's problems of the
// mutations).
func NewChain(v *pv.PackageVariant, candidates []*yaml.RNode) (*Chain, error) {
	c, problems := newChain(v, candidates)
	if err := krm.InvalidFrom(problems); err != nil {
		return nil, err
	}
	return c, nil
}

func newChain(v *pv.PackageVariant, candidates []*yaml.RNode) (*Chain, []krm.Problem) {
	c := &Chain{}
	var problems, p []krm.Problem
	c.context, p = packagecontext.NewConfig(v.Spec.PackageContext, "spec.packageContext")
	problems = append(problems, p...)
	c.pipeline, p = pipelineprepend.NewConfig(v.Metadata.Name, v.Spec.Pipeline)
	problems = append(problems, p...)
	c.inject, p = configinject.NewConfig(v.Metadata.Namespace, v.Spec.Injectors, candidates)
	return c, append(problems, p...)
}

// steps are the chain's functions in order, each applying its config
// (rule: mutation-order).
func (c *Chain) steps() []step {
	return []step{
		{"package-context", func(items []*yaml.RNode) (string, []krm.Problem) {
			return krm.Applied("package-context", items, c.context, packagecontext.Apply)
		}},
		{"pipeline-prepend", func(items []*yaml.RNode) (string, []krm.Problem) {
			return krm.Applied("pipeline-prepend", items, c.pipeline, pipelineprepend.Apply)
		}},
		{"config-inject", func(items []*yaml.RNode) (string, []krm.Problem) {
			return krm.Applied("config-inject", items, c.inject, configinject.Apply)
		}},
	}
}

type step struct {
	name  string
	apply func(items []*yaml.RNode) (string, []krm.Problem)
}

// Result is the outcome of running the chain on a package.
type Result struct {
	// Files is the package afterwards; unchanged files keep their bytes.
	Files map[string]string
	// Changed reports a semantic difference from the input.
	Changed bool
	// Results are every function's results, in order.
	Results fn.Results
	// Overridden are pipeline-prepend's warnings that a function of the
	// blueprint's own pipeline runs after one the variant prepends and sets
	// what it sets (rule blueprint-runs-last).
	Overridden []string
	// OpenGate, when not "", says why the package cannot be approved
	// without a change: a readiness gate of its Kptfile other than
	// MutationGate whose condition is not True (the gate, the condition's
	// status, reason and message). Read from the Kptfile the chain left,
	// not parsed again.
	OpenGate string
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

// Run runs the chain on a package (file name -> content).
func Run(files map[string]string, c *Chain) (*Result, error) {
	p, err := Load(files)
	if err != nil {
		return nil, err
	}
	return p.Run(c)
}

// Run runs the chain. Any error stops it: the package is not half-mutated,
// and the error names the function, file, object and field. A Package runs
// once.
func (p *Package) Run(c *Chain) (*Result, error) {
	items, out := p.items, &Result{}
	var err error
	for _, s := range c.steps() {
		summary, problems := s.apply(items)
		for _, pr := range problems {
			out.Results = append(out.Results, pr.Result())
			if s.name == "pipeline-prepend" && pr.Severity == fn.Warning {
				out.Overridden = append(out.Overridden, pr.Message)
			}
		}
		out.Results = append(out.Results, krm.Info("%s", summary))
		if krm.HasErrorProblems(problems) {
			return out, fmt.Errorf("%s: %w", s.name, krm.ResultsError(out.Results))
		}
	}
	if out.OpenGate, err = closeGate(items); err != nil {
		return out, err
	}
	if out.Files, err = krm.ItemsToFiles(items, p.files); err != nil {
		return out, err
	}
	out.Changed = !maps.Equal(p.files, out.Files)
	return out, nil
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
