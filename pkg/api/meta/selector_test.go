package meta

import (
	"strings"
	"testing"
)

func TestSelector(t *testing.T) {
	labels := map[string]string{"env": "prod", "region": "us"}
	tests := []struct {
		sel  LabelSelector
		want bool
	}{
		{LabelSelector{}, true},
		{LabelSelector{MatchLabels: map[string]string{"env": "prod"}}, true},
		{LabelSelector{MatchLabels: map[string]string{"env": "dev"}}, false},
		{LabelSelector{MatchLabels: map[string]string{"tier": ""}}, false},
		{LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "region", Operator: OpIn, Values: []string{"eu", "us"}}}}, true},
		{LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "region", Operator: OpNotIn, Values: []string{"us"}}}}, false},
		{LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: OpNotIn, Values: []string{"x"}}}}, true},
		{LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "env", Operator: OpExists}}}, true},
		{LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: "env", Operator: OpDoesNotExist}}}, false},
		{LabelSelector{MatchLabels: map[string]string{"env": "prod"}, MatchExpressions: []LabelSelectorRequirement{{Key: "tier", Operator: OpExists}}}, false},
	}
	for i, tt := range tests {
		if got := tt.sel.Matches(labels); got != tt.want {
			t.Errorf("%d: %s matches = %v, want %v", i, tt.sel.String(), got, tt.want)
		}
	}
}

func TestSelectorValidate(t *testing.T) {
	s := LabelSelector{MatchExpressions: []LabelSelectorRequirement{
		{Key: "a", Operator: "Sideways"}, {Operator: OpIn}, {Key: "b", Operator: OpExists, Values: []string{"x"}}}}
	var lines []string
	for _, p := range s.Validate() {
		lines = append(lines, p.Field+" "+p.Message)
	}
	got := strings.Join(lines, "\n")
	want := "matchExpressions[0].operator must be one of \"In\", \"NotIn\", \"Exists\" or \"DoesNotExist\", found \"Sideways\"\n" +
		"matchExpressions[1].key must not be empty\nmatchExpressions[1].values must not be empty for operator \"In\"\n" +
		"matchExpressions[2].values must be empty for operator \"Exists\""
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
