package kptfile

import (
	"fmt"
	"sort"

	"github.com/pvkit/pvkit/pkg/krm"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Condition statuses.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// Condition is a Kptfile status condition (kpt conditions carry no times).
type Condition struct {
	Type    string
	Status  string
	Reason  string
	Message string
}

// ReadinessGates returns the condition types of `info.readinessGates`.
func (k *Kptfile) ReadinessGates() ([]string, error) {
	entries, err := k.entries("info", "readinessGates")
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(entries))
	for i, e := range entries {
		ct, ok := krm.ScalarAt(e, "conditionType")
		if !ok || ct == "" {
			return nil, &FieldError{Field: fmt.Sprintf("info.readinessGates[%d].conditionType", i), Message: "must be a non-empty string"}
		}
		out = append(out, ct)
	}
	return out, nil
}

// AddReadinessGates makes sure a gate exists for every given condition type.
// Existing gates are never removed; the list is kept sorted by condition type.
// It returns how many gates it added.
func (k *Kptfile) AddReadinessGates(types []string) (int, error) {
	if _, err := k.ReadinessGates(); err != nil {
		return 0, err
	}
	entries, _ := k.entries("info", "readinessGates")
	have := make(map[string]bool, len(entries))
	for _, e := range entries {
		ct, _ := krm.ScalarAt(e, "conditionType")
		have[ct] = true
	}
	added := 0
	for _, t := range types {
		if have[t] {
			continue
		}
		have[t] = true
		gate := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		krm.SetField(gate, "conditionType", krm.StringNode(t))
		entries = append(entries, gate)
		added++
	}
	if added == 0 && sorted(entries, "conditionType") {
		return 0, nil
	}
	sortBy(entries, "conditionType")
	k.setSequence(entries, "info", "readinessGates")
	return added, nil
}

// Conditions returns `status.conditions`.
func (k *Kptfile) Conditions() ([]Condition, error) {
	entries, err := k.entries("status", "conditions")
	if err != nil {
		return nil, err
	}
	out := make([]Condition, 0, len(entries))
	for i, e := range entries {
		c := Condition{}
		c.Type, _ = krm.ScalarAt(e, "type")
		c.Status, _ = krm.ScalarAt(e, "status")
		c.Reason, _ = krm.ScalarAt(e, "reason")
		c.Message, _ = krm.ScalarAt(e, "message")
		if c.Type == "" {
			return nil, &FieldError{Field: fmt.Sprintf("status.conditions[%d].type", i), Message: "must be a non-empty string"}
		}
		out = append(out, c)
	}
	return out, nil
}

// SetConditions merges conds into `status.conditions`: a condition of an
// existing type is updated in place (other fields and comments kept), a new
// type is added, no condition is removed, and the list is sorted by type.
func (k *Kptfile) SetConditions(conds []Condition) error {
	if _, err := k.Conditions(); err != nil {
		return err
	}
	entries, _ := k.entries("status", "conditions")
	byType := make(map[string]*yaml.Node, len(entries))
	for _, e := range entries {
		t, _ := krm.ScalarAt(e, "type")
		byType[t] = e
	}
	for _, c := range conds {
		e := byType[c.Type]
		if e == nil {
			e = &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
			krm.SetField(e, "type", krm.StringNode(c.Type))
			byType[c.Type] = e
			entries = append(entries, e)
		}
		setScalar(e, "status", c.Status)
		setScalar(e, "reason", c.Reason)
		setScalar(e, "message", c.Message)
	}
	sortBy(entries, "type")
	k.setSequence(entries, "status", "conditions")
	return nil
}

// setScalar sets a string field, leaving the node untouched when it already
// holds that value (so its style and comments survive).
func setScalar(m *yaml.Node, key, value string) {
	if v := krm.Field(m, key); v != nil && v.Kind == yaml.ScalarNode && v.Value == value {
		return
	}
	if value == "" {
		krm.RemoveField(m, key)
		return
	}
	krm.SetField(m, key, krm.StringNode(value))
}

func sorted(entries []*yaml.Node, key string) bool {
	return sort.SliceIsSorted(entries, func(i, j int) bool { return less(entries, key, i, j) })
}

func sortBy(entries []*yaml.Node, key string) {
	sort.SliceStable(entries, func(i, j int) bool { return less(entries, key, i, j) })
}

func less(entries []*yaml.Node, key string, i, j int) bool {
	a, _ := krm.ScalarAt(entries[i], key)
	b, _ := krm.ScalarAt(entries[j], key)
	return a < b
}
