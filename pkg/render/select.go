package render

import (
	"fmt"
	"unicode/utf8"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// resourceIDAnnotation identifies each input resource of a function with
// selectors, so that its output can be merged back (kpt's annotation).
const resourceIDAnnotation = "internal.config.k8s.io/kpt-resource-id"

// selectInput picks the resources that match any selector (all when there
// is none) and no non-empty exclusion.
func selectInput(input []*yaml.RNode, selectors, exclusions []pv.Selector) []*yaml.RNode {
	var out []*yaml.RNode
	for _, r := range input {
		picked := len(selectors) == 0
		for _, s := range selectors {
			picked = picked || matches(r, s)
		}
		for _, x := range exclusions {
			if picked && !emptySelector(x) && matches(r, x) {
				picked = false
			}
		}
		if picked {
			out = append(out, r)
		}
	}
	return out
}

func emptySelector(s pv.Selector) bool {
	return s.APIVersion == "" && s.Kind == "" && s.Name == "" && s.Namespace == "" && len(s.Labels) == 0 && len(s.Annotations) == 0
}

// matches reports whether a resource matches every field a selector sets.
func matches(r *yaml.RNode, s pv.Selector) bool {
	if (s.Name != "" && s.Name != r.GetName()) || (s.Namespace != "" && s.Namespace != r.GetNamespace()) ||
		(s.Kind != "" && s.Kind != r.GetKind()) || (s.APIVersion != "" && s.APIVersion != r.GetApiVersion()) {
		return false
	}
	return subset(s.Labels, r.GetLabels()) && subset(s.Annotations, r.GetAnnotations())
}

func subset(want, have map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// mergeWithInput puts a selective function's output back among its input:
// a selected resource the output has is replaced by it, one it lacks is
// deleted, one not selected stays; what the function generated comes last.
func mergeWithInput(output, selected, input []*yaml.RNode) []*yaml.RNode {
	byID := func(nodes []*yaml.RNode) map[string]*yaml.RNode {
		m := make(map[string]*yaml.RNode, len(nodes))
		for _, n := range nodes {
			if id := n.GetAnnotations()[resourceIDAnnotation]; id != "" {
				m[id] = n
			}
		}
		return m
	}
	sel, out := byID(selected), byID(output)
	var merged []*yaml.RNode
	for _, r := range input {
		id := r.GetAnnotations()[resourceIDAnnotation]
		if _, ok := sel[id]; !ok {
			merged = append(merged, r)
		} else if o, ok := out[id]; ok {
			merged = append(merged, o)
		}
	}
	for _, o := range output {
		if o.GetAnnotations()[resourceIDAnnotation] == "" {
			merged = append(merged, o)
		}
	}
	return merged
}

// Bounds of what a render keeps of a function's results: a function
// chooses their number and size, and each is copied into the render status,
// the error and the variant's status (a 20 MB message took pvctl to 506 MB).
const (
	// MaxResults is how many results of one function are kept; one more
	// says how many were left out.
	MaxResults = 100
	// MaxResultValue bounds each value of a result (its message, a field's
	// value): longer ones are cut, marked "…".
	MaxResultValue = 4 << 10
)

// parseResults reads a function's results: the SDK's list, or a list
// wrapped in `items` (older SDKs); bounded (MaxResults, MaxResultValue)
// before they are decoded.
func parseResults(n *yaml.RNode) (fn.Results, error) {
	if n.IsNilOrEmpty() {
		return nil, nil
	}
	if n.YNode().Kind == yaml.MappingNode {
		if items := n.Field("items"); items != nil && !items.Value.IsNilOrEmpty() {
			n = items.Value
		}
	}
	y := n.YNode()
	dropped := 0
	if y.Kind == yaml.SequenceNode && len(y.Content) > MaxResults {
		dropped = len(y.Content) - MaxResults
		y.Content = y.Content[:MaxResults]
	}
	cutScalars(y, MaxResultValue)
	var out fn.Results
	if err := y.Decode(&out); err != nil {
		return nil, err
	}
	if dropped > 0 {
		out = append(out, &fn.Result{Severity: fn.Warning, Message: fmt.Sprintf("%d more results were left out (a render keeps %d of a function's)", dropped, MaxResults)})
	}
	return out, nil
}

// cutScalars cuts every scalar under n to at most max bytes, at a
// character, marked "…".
func cutScalars(n *yaml.Node, max int) {
	if n.Kind == yaml.ScalarNode && len(n.Value) > max {
		cut := max - len("…")
		for cut > 0 && !utf8.RuneStart(n.Value[cut]) {
			cut--
		}
		n.Value = n.Value[:cut] + "…"
	}
	for _, c := range n.Content {
		cutScalars(c, max)
	}
}
