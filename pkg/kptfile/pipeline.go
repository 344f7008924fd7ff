package kptfile

import (
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Pipeline returns the entries of `pipeline.<list>` (list is Mutators or
// Validators); each is checked to be a map.
func (k *Kptfile) Pipeline(list string) ([]*yaml.Node, error) {
	return k.entries("pipeline", list)
}

// SetPipeline replaces `pipeline.<list>`. An empty list removes the field, and
// a pipeline left with no fields is removed too.
func (k *Kptfile) SetPipeline(list string, entries []*yaml.Node) {
	k.setSequence(entries, "pipeline", list)
}

// FunctionNames are the functions of `pipeline.<list>` as a person reads
// them: each one's image, or its exec path.
func (k *Kptfile) FunctionNames(list string) ([]string, error) {
	steps, err := k.Pipeline(list)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range steps {
		if fn, ok := krm.ScalarAt(s, "image"); ok {
			names = append(names, fn)
		} else if fn, ok := krm.ScalarAt(s, "exec"); ok {
			names = append(names, fn)
		}
	}
	return names, nil
}
