package kptfile

import "sigs.k8s.io/kustomize/kyaml/yaml"

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
