// Package celbound is the one set of bounds every CEL expression pvkit
// evaluates is held to: pvs-expand's templates, a health
// check's name and condition, kpt's `when` in a Kptfile. Their authors
// are not the operator (a set's author, a namespace's tenant, a package's
// editor), and what they evaluate over can be large (a 20 KB status field):
// an expression must neither hold a controller worker nor grow memory.
//
// The bounds, as the Kubernetes apiserver bounds its own CEL:
//   - at compilation: the parser's recursion (ParserRecursionLimit) and the
//     expression's length (the caller's, named in its message); at most
//     MaxComprehensionNesting nested comprehensions, MaxComprehensions in
//     all and MaxCalls calls and operators (the type checker's time grows
//     with the square of their number); a literal regular expression whose
//     program is over MaxRegexInsts is refused;
//   - at evaluation: a cost limit (CostLimit) charged while evaluating, by
//     the sizes every string function and `matches` read and write
//     (ActualCost), any value over MaxValueSize stopping it; CEL's own
//     `matches` is replaced by a bounded one (one call at most MaxRegexWork:
//     RE2 is linear in its input, but one call cannot be interrupted, and
//     its factor is the compiled program's size: `[ab]{0,1000}` is 9
//     characters and 2,002 instructions); the caller's context checked
//     every InterruptEvery comprehension steps.
//
// Each evaluation's time is so bounded by the cost limit (about 1 s at the
// limit, measured: docs/security.md), whatever the caller's deadline: the
// deadline interrupts comprehensions, the cost limit everything else. The
// deadline itself is the caller's (pkg/ keeps no clock).
package celbound

import (
	"fmt"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/env"
	"github.com/google/cel-go/common/overloads"
)

// The bounds of compilation and evaluation.
const (
	ParserRecursionLimit    = 16
	MaxComprehensionNesting = 2
	MaxComprehensions       = 16
	MaxCalls                = 128
	InterruptEvery          = 100
)

// Library is what every pvkit CEL environment is built with: CEL's
// standard library with the bounded `matches` in place of its own, the
// parser's limits (recursion, and maxLength characters), and the
// validators of literal regular expressions and comprehension nesting.
// The caller adds its variables and any extension library.
func Library(maxLength int) []cel.EnvOption {
	return []cel.EnvOption{
		cel.StdLib(cel.StdLibSubset(env.NewLibrarySubset().AddExcludedFunctions(env.NewFunction(overloads.Matches)))),
		matchesFunction(),
		cel.ASTValidators(regexLiterals{}, cel.ValidateComprehensionNestingLimit(MaxComprehensionNesting)),
		cel.ParserRecursionLimit(ParserRecursionLimit),
		cel.ParserExpressionSizeLimit(maxLength),
		cel.HomogeneousAggregateLiterals(),
		cel.DefaultUTCTimeZone(true),
		cel.EagerlyValidateDeclarations(true),
	}
}

// NewEnv is an environment of Library(maxLength) and opts, without CEL's
// default library (Library has the standard one, bounded).
func NewEnv(maxLength int, opts ...cel.EnvOption) (*cel.Env, error) {
	return cel.NewCustomEnv(append(Library(maxLength), opts...)...)
}

// Shape refuses a parsed expression with more comprehensions or calls than
// the bounds allow, before the type checker runs.
func Shape(parsed *cel.Ast) error {
	if n := count(parsed, celast.ComprehensionKind); n > MaxComprehensions {
		return fmt.Errorf("has %d comprehensions (map, filter, all, exists), more than %d", n, MaxComprehensions)
	}
	if n := count(parsed, celast.CallKind); n > MaxCalls {
		return fmt.Errorf("has %d function calls and operators, more than %d", n, MaxCalls)
	}
	return nil
}

// count counts the nodes of a kind in a parsed expression.
func count(a *cel.Ast, kind celast.ExprKind) int {
	return len(celast.MatchDescendants(celast.NavigateAST(a.NativeRep()), celast.KindMatcher(kind)))
}

// ProgramOptions are the evaluation bounds every program has: the cost
// limit, charged by ActualCost, and the interrupt checks.
func ProgramOptions() []cel.ProgramOption {
	return []cel.ProgramOption{cel.CostLimit(CostLimit), cel.CostTracking(ActualCost{}), cel.InterruptCheckFrequency(InterruptEvery)}
}
