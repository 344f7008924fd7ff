package celbound

import (
	"math"

	"github.com/google/cel-go/common/overloads"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// What an evaluation costs at run time (learned from the Kubernetes
// apiserver's CEL library: every function costs by the size of what it
// reads and produces). cel-go charges most string functions 1 whatever
// they do, and nothing stops a function from building a value of any
// size: ActualCost charges them by size and stops an evaluation that
// builds a string or list over MaxValueSize.
const (
	// CostLimit is CEL's cost limit of one evaluation (the apiserver's
	// per-expression limit, and kpt's for `when`).
	CostLimit = 1_000_000
	// MaxValueSize bounds any string or list an expression builds.
	MaxValueSize = 1 << 20
	// TraversalCostFactor is the cost of a character read or written.
	TraversalCostFactor = 0.1
	// OverLimit is a cost past any limit: the evaluation stops with
	// "actual cost limit exceeded".
	OverLimit = math.MaxUint64 / 4
)

// sizeCharged are the overloads ActualCost charges by the sizes read and
// written (cel-go charges them a constant).
var sizeCharged = map[string]bool{
	"string_replace_string_string": true, "string_replace_string_string_int": true,
	"string_lower_ascii": true, "string_upper_ascii": true, "string_trim": true, "string_reverse": true,
	"string_substring_int": true, "string_substring_int_int": true, "string_char_at_int": true, "strings_quote": true,
	"string_split_string": true, "string_split_string_int": true, "list_join": true, "list_join_string": true, "string_format": true,
	"string_index_of_string": true, "string_index_of_string_int": true, "string_last_index_of_string": true, "string_last_index_of_string_int": true,
}

// ActualCost is the run-time cost of calls (cel.CostTracking): string
// functions by the sizes they read and wrote, `matches` by the work of its
// regular expression (input x program), any call that builds a value over
// MaxValueSize past every limit.
type ActualCost struct{}

// CallCost implements interpreter.ActualCostEstimator.
func (ActualCost) CallCost(function, overloadID string, args []ref.Val, result ref.Val) *uint64 {
	out := ValueSize(result)
	if out > MaxValueSize {
		c := uint64(OverLimit)
		return &c
	}
	if overloadID == overloads.Matches || overloadID == overloads.MatchesString {
		if len(args) != 2 {
			return nil
		}
		s, _ := args[0].(types.String)
		p, _ := args[1].(types.String)
		_, insts, _ := RegexProgram(string(p))
		c := Traverse(MulSat(uint64(len(s)), uint64(insts)))
		return &c
	}
	if !sizeCharged[overloadID] {
		return nil
	}
	read := uint64(0)
	for _, a := range args {
		read += ValueSize(a)
	}
	c := Traverse(read + out)
	return &c
}

// ValueSize is the size of a string (bytes), a list (elements, plus the
// sizes of string elements) or anything else (0).
func ValueSize(v ref.Val) uint64 {
	switch x := v.(type) {
	case types.String:
		return uint64(len(x))
	case traits.Lister:
		n, ok := x.Size().(types.Int)
		if !ok {
			return 0
		}
		total := uint64(n)
		if total > MaxValueSize {
			return total
		}
		for i := types.Int(0); i < n; i++ {
			if s, ok := x.Get(i).(types.String); ok {
				total += uint64(len(s))
			}
		}
		return total
	}
	return 0
}

// Traverse is the cost of reading or writing chars characters.
func Traverse(chars uint64) uint64 {
	if chars >= math.MaxUint64/2 {
		return math.MaxUint64
	}
	return 1 + uint64(math.Ceil(float64(chars)*TraversalCostFactor))
}

// AddSat is a+b, saturating.
func AddSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// MulSat is a*b, saturating.
func MulSat(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}
