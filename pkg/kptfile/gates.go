package kptfile

import (
	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// MergeReadinessGates sets k's `info.readinessGates` to the three-way merge
// of an upgrade by condition type, as a list keyed by it: local's gates,
// less those the upstream removed (in old, not in upd) that local left as
// they were, plus those the upstream added; a gate in all three takes the
// upstream's entry where local left it as it was, local's otherwise. A gate
// local removed stays removed. Sorted by condition type.
//
// kpt's merge (kyaml merge3) takes the list as one value: an upstream that
// adds a gate drops every gate a draft added (pvkit's own mutation gate, a
// person's), and pvkit's conflict check saw both sides change one field.
func (k *Kptfile) MergeReadinessGates(old, local, upd *Kptfile) error {
	o, err := gateEntries(old)
	if err != nil {
		return err
	}
	l, err := gateEntries(local)
	if err != nil {
		return err
	}
	u, err := gateEntries(upd)
	if err != nil {
		return err
	}
	var out []*yaml.Node
	for t, le := range l.byType {
		oe, ue := o.byType[t], u.byType[t]
		same := oe != nil && krm.SemanticEqual(le, oe)
		switch {
		case oe != nil && ue == nil && same: // removed upstream
		case ue != nil && same: // changed (or not) upstream only
			out = append(out, ue)
		default:
			out = append(out, le)
		}
	}
	for t, ue := range u.byType {
		if o.byType[t] == nil && l.byType[t] == nil { // added upstream
			out = append(out, ue)
		}
	}
	sortBy(out, "conditionType")
	k.setSequence(out, "info", "readinessGates")
	return nil
}

type gates struct{ byType map[string]*yaml.Node }

// gateEntries are a Kptfile's gate entries by condition type (none for a
// nil Kptfile).
func gateEntries(k *Kptfile) (gates, error) {
	g := gates{byType: map[string]*yaml.Node{}}
	if k == nil {
		return g, nil
	}
	if _, err := k.ReadinessGates(); err != nil {
		return g, err
	}
	entries, _ := k.entries("info", "readinessGates")
	for _, e := range entries {
		ct, _ := krm.ScalarAt(e, "conditionType")
		g.byType[ct] = e
	}
	return g, nil
}
