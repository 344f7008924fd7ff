package pvsexpand

import (
	"fmt"

	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/overloads"
	"github.com/pvkit/pvkit/pkg/celbound"
	"github.com/pvkit/pvkit/pkg/krm"
)

// What CEL costs, and the bounds that make a cost bounded (learned from the
// Kubernetes apiserver's CEL library: every function costs by the size of
// what it reads and produces, and inputs have declared maximum sizes).
//
// Statically (at validation), each expression's worst-case cost over inputs
// within these bounds must stay under costLimit, else it is refused with its
// field path: `'a'.replace('a', 'aaaaaaaaaa')` nested nine times (10^10
// characters) never runs. At run time every call is charged by the sizes it
// read and wrote, any string or list over maxValueSize stops the evaluation
// (celbound.ActualCost), and inputs over the bounds (an object with a 10 MB
// annotation) fail their target before any expression sees them.
const (
	maxExpressionLength   = 8 << 10               // characters of one expression
	maxSetExpressionBytes = 64 << 10              // characters of a set's distinct expressions together
	maxCELNameLength      = 253                   // names, repoDefault, packageDefault, target.repo
	maxPackageLength      = 1024                  // package paths
	maxLabelKeyLength     = 317                   // prefix (253) + "/" + name (63)
	maxLabelValueLength   = 63                    // label values
	maxAnnotationsSize    = 256 << 10             // all annotations of an object, as the apiserver limits them
	maxMapEntries         = 128                   // labels or annotations assumed for the static estimate (larger maps are charged at run time)
	maxValueSize          = celbound.MaxValueSize // any string or list an expression builds, at run time
)

// sizes is the static size estimator: the declared bounds of every input.
type sizes struct{}

func (sizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	path := n.Path()
	if len(path) == 0 {
		return nil
	}
	max := uint64(maxAnnotationsSize)
	last := path[len(path)-1]
	switch {
	case len(path) == 1: // repoDefault, packageDefault
		max = maxPackageLength
	case last == "labels" || last == "annotations":
		max = maxMapEntries
	case last == "@keys":
		max = maxLabelKeyLength
	case last == "@values" && path[len(path)-2] == "labels":
		max = maxLabelValueLength
	case last == "name" || last == "repo":
		max = maxCELNameLength
	case last == "namespace":
		max = 63
	case last == "package":
		max = maxPackageLength
	}
	return &checker.SizeEstimate{Min: 0, Max: max}
}

// EstimateCallCost gives the string extension functions their cost by size
// (cel-go charges them 1 whatever they do).
func (s sizes) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	var in []checker.AstNode
	if target != nil {
		in = append(in, *target)
	}
	in = append(in, args...)
	size := func(i int) checker.SizeEstimate {
		if i >= len(in) {
			return checker.SizeEstimate{}
		}
		if sz := in[i].ComputedSize(); sz != nil {
			return *sz
		}
		if sz := s.EstimateSize(in[i]); sz != nil {
			return *sz
		}
		return checker.SizeEstimate{Min: 0, Max: maxValueSize}
	}
	var result checker.SizeEstimate
	switch overloadID {
	case "string_replace_string_string", "string_replace_string_string_int":
		str, repl := size(0), size(2)
		// Every position of the string may be replaced (an empty `old`
		// matches between characters).
		result = checker.SizeEstimate{Min: 0, Max: celbound.AddSat(celbound.MulSat(celbound.AddSat(str.Max, 1), repl.Max), str.Max)}
	case "string_lower_ascii", "string_upper_ascii", "string_trim", "string_reverse",
		"string_substring_int", "string_substring_int_int", "string_char_at_int":
		result = checker.SizeEstimate{Min: 0, Max: size(0).Max}
	case "strings_quote":
		result = checker.SizeEstimate{Min: 2, Max: celbound.AddSat(celbound.MulSat(size(0).Max, 6), 2)}
	case "string_split_string", "string_split_string_int":
		result = checker.SizeEstimate{Min: 0, Max: celbound.AddSat(size(0).Max, 1)}
	case "list_join", "list_join_string":
		// A list's element size is not tracked: bound it by the value cap.
		n := size(0).Max
		result = checker.SizeEstimate{Min: 0, Max: celbound.MulSat(n, celbound.AddSat(maxValueSize, size(1).Max))}
	case "string_format":
		result = checker.SizeEstimate{Min: 0, Max: maxValueSize}
	case "string_index_of_string", "string_index_of_string_int", "string_last_index_of_string", "string_last_index_of_string_int":
		c := celbound.Traverse(size(0).Max + size(1).Max)
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: c}}
	case overloads.Matches, overloads.MatchesString:
		var pattern *ast.Expr
		if len(in) > 1 {
			e := in[1].Expr()
			pattern = &e
		}
		c := celbound.Traverse(celbound.RegexWork(size(0).Max, pattern))
		return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: c}}
	default:
		return nil
	}
	read := uint64(0)
	for i := range in {
		read = celbound.AddSat(read, size(i).Max)
	}
	return &checker.CallEstimate{CostEstimate: checker.CostEstimate{Min: 1, Max: celbound.Traverse(celbound.AddSat(read, result.Max))}, ResultSize: &result}
}

// withinBounds refuses an object larger than the apiserver would store (so
// larger than the static estimate assumed): its annotations over
// maxAnnotationsSize in all, a label value over 63 characters.
func (o *Object) withinBounds() error {
	total := 0
	for k, v := range o.Annotations {
		total += len(k) + len(v)
	}
	if total > maxAnnotationsSize {
		return fmt.Errorf("object %q has %d bytes of annotations, more than the %d an object may have", o.Name, total, maxAnnotationsSize)
	}
	for _, k := range krm.SortedKeys(o.Labels) {
		if len(o.Labels[k]) > maxLabelValueLength {
			return fmt.Errorf("object %q: label %q has a value of %d characters, more than %d", o.Name, k, len(o.Labels[k]), maxLabelValueLength)
		}
	}
	return nil
}
