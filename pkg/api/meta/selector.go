package meta

import (
	"fmt"
	"sort"
	"strings"
)

// LabelSelector is a Kubernetes label selector, with the same JSON shape as
// metav1.LabelSelector: every matchLabels pair and every expression must hold.
// An empty selector selects everything.
// +structType=atomic
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one expression: key, operator, values.
type LabelSelectorRequirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values,omitempty"`
}

// Label selector operators.
const (
	OpIn           = "In"
	OpNotIn        = "NotIn"
	OpExists       = "Exists"
	OpDoesNotExist = "DoesNotExist"
)

// FieldProblem is a problem with a field, relative to the selector.
type FieldProblem struct {
	Field   string // e.g. "matchExpressions[0].operator"
	Message string // e.g. `must not be empty`
}

// Validate returns the problems of the selector.
func (s *LabelSelector) Validate() []FieldProblem {
	var out []FieldProblem
	for i, r := range s.MatchExpressions {
		f := fmt.Sprintf("matchExpressions[%d]", i)
		if r.Key == "" {
			out = append(out, FieldProblem{f + ".key", "must not be empty"})
		}
		switch r.Operator {
		case OpIn, OpNotIn:
			if len(r.Values) == 0 {
				out = append(out, FieldProblem{f + ".values", fmt.Sprintf("must not be empty for operator %q", r.Operator)})
			}
		case OpExists, OpDoesNotExist:
			if len(r.Values) > 0 {
				out = append(out, FieldProblem{f + ".values", fmt.Sprintf("must be empty for operator %q", r.Operator)})
			}
		default:
			out = append(out, FieldProblem{f + ".operator", fmt.Sprintf("must be one of %q, %q, %q or %q, found %q", OpIn, OpNotIn, OpExists, OpDoesNotExist, r.Operator)})
		}
	}
	return out
}

// Matches reports whether labels satisfy the selector (assumed valid).
func (s *LabelSelector) Matches(labels map[string]string) bool {
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.MatchExpressions {
		v, has := labels[r.Key]
		switch r.Operator {
		case OpIn:
			if !has || !contains(r.Values, v) {
				return false
			}
		case OpNotIn:
			if has && contains(r.Values, v) {
				return false
			}
		case OpExists:
			if !has {
				return false
			}
		case OpDoesNotExist:
			if has {
				return false
			}
		}
	}
	return true
}

// String renders the selector like kubectl's -l syntax, keys sorted.
func (s *LabelSelector) String() string {
	var parts []string
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+s.MatchLabels[k])
	}
	for _, r := range s.MatchExpressions {
		switch r.Operator {
		case OpExists:
			parts = append(parts, r.Key)
		case OpDoesNotExist:
			parts = append(parts, "!"+r.Key)
		default:
			parts = append(parts, fmt.Sprintf("%s %s (%s)", r.Key, strings.ToLower(r.Operator), strings.Join(r.Values, ",")))
		}
	}
	return strings.Join(parts, ",")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
